"""Writing a degenerate learner file (checks/degenerate.py): the solution with
every graded definition's body wrapped so that its answer is replaced by
nothing computed, and tools/lab/checks/degenerate_prelude.h.in after its
#includes.

What a graded call hands back, all of it, is replaced: its result, the
object a method changes, and every argument it may write (a non-const
reference, as lab 15's clip_grad_norm scales its gradients and AdamW::step
its model; a pointer to non-const, as cross_entropy's d_logits), so that no
later call and no test reads a real answer back. The inert variant puts the
object and those arguments back as they were.

A field that another class keeps private (lab 15's GptDecoder holds lab 11's
RotaryDecoders, whose KVCache is private, as lab 8's are) is reached as a
cheat would reach it: through a pointer to the member taken in an explicit
template instantiation, where access is not checked (accessors()).
"""
import os
import re

PRELUDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "degenerate_prelude.h.in")
TENSOR = re.compile(r"^(?:Tensor[123]|xt::xtensor<float,\s*\d>)$")
# Sizes and counts: what a do-nothing answer knows from its arguments (kept in
# a struct or an object; a function that returns one alone returns 0 or 1).
INTEGRAL = re.compile(r"^(?:const\s+)?(?:int|unsigned|long|bool|std::size_t|size_t|"
                      r"std::u?int\d+_t)$")
FILL = {"zeros": "kZeros", "ones": "kOnes", "uniform": "kUniform", "-inf": "kMinusInfinity",
        "argument": "kArgument", "label": "kLabel", "inert": "kZeros"}


class DegenerateError(ValueError):
    pass


def element(type_):
    """The type an object holds: std::vector<X> -> X, const X& -> X."""
    t = re.sub(r"^const\s+|\s*&$", "", type_.strip())
    m = re.match(r"^std::vector<\s*(.*?)\s*>$", t)
    return m.group(1) if m else t


def _tag(cls, field):
    return "Tag_%s_%s" % (cls, field)


def _member(outline, cls, f, path):
    """The expression of field `f` of an object of class `cls` at `path`, and
    the accessor it needs recorded when the field is private to `cls`."""
    if f.public or outline.writing_in == cls:
        return (path + "." if path else "") + f.name
    outline.private_fields.add((cls, f.type, f.name))
    obj = path or "*this"
    return "(%s.*member_of(::mha::mha_degenerate_access::%s{}))" % (obj, _tag(cls, f.name))


def accessors(private_fields):
    """C++ (inside namespace mha) that gives a pointer to each private member
    of `private_fields` {(class, type, name)}."""
    if not private_fields:
        return ""
    out = ["namespace mha {", "namespace mha_degenerate_access {",
           "template <class Tag, typename Tag::type Member>",
           "struct Rob {",
           "  friend typename Tag::type member_of(Tag) { return Member; }",
           "};"]
    for cls, type_, name in sorted(private_fields):
        tag = _tag(cls, name)
        out += ["struct %s {" % tag,
                "  using type = %s %s::*;" % (type_, cls),
                "  friend type member_of(%s);" % tag,
                "};",
                "template struct Rob<%s, &%s::%s>;" % (tag, cls, name)]
    return "\n".join(out + ["}  // namespace mha_degenerate_access", "}  // namespace mha", ""])


def fill_statements(outline, path, type_, how, indent, depth=0, seen=()):
    """C++ statements that fill every tensor an object at `path` of `type_` holds."""
    t = re.sub(r"^const\s+", "", type_.strip())
    if TENSOR.match(t):
        return ["%s::mha_degenerate::fill(%s, mha_degenerate_sources, %s);" % (indent, path, how)]
    m = re.match(r"^std::vector<\s*(.*?)\s*>$", t)
    if m:
        var = "mha_degenerate_e%d" % depth
        inner = fill_statements(outline, var, m.group(1), how, indent + "  ", depth + 1, seen)
        return ["%sfor (auto& %s : %s) {" % (indent, var, path or "*this")] + inner + \
            [indent + "}"] if inner else []
    if t in seen:
        return []
    out = []
    for f in outline.fields(t):
        inner = fill_statements(outline, "@", f.type, how, indent, depth, seen + (t,))
        if inner:
            member = _member(outline, t, f, path)
            out += [line.replace("@", member) for line in inner]
    return out


def _struct_types(outline, type_, found):
    """The structs a returned value of type_ holds (itself included), in need order."""
    t = element(type_)
    if t in found or not outline.fields(t):
        return
    found.append(t)
    for f in outline.fields(t):
        _struct_types(outline, f.type, found)


def _struct_overloads(outline):
    """(declarations, definitions) of mha_degenerate::degrade for every struct
    that a graded function returns by value."""
    found = []
    for d in outline.graded:
        if d.ret and not d.ret.endswith("&"):
            _struct_types(outline, d.ret, found)
    decls, defs = [], []
    for t in found:
        sig = "inline void degrade(mha::%s& o, const Sources& s)" % t
        decls.append(sig + ";")
        body = ["  degrade(o.%s, s);" % f.name for f in outline.fields(t)
                if not INTEGRAL.match(f.type.strip()) and not f.type.strip().endswith("*")]
        defs += [sig + " {"] + body + ["  (void)s;", "}"]
    return decls, defs


def _prelude(outline, variant):
    with open(PRELUDE) as f:
        text = f.read()
    decls, defs = _struct_overloads(outline)
    constants = ["constexpr Fill kFill = Fill::%s;" % FILL[variant.fill],
                 "constexpr std::size_t kArgument = %d;" % variant.argument,
                 "constexpr const char* kLabel = \"%s\";" % variant.word]
    for key, lines in (("VARIANT", constants), ("DECLARATIONS", decls), ("DEFINITIONS", defs)):
        text = text.replace("// @%s@" % key, "\n".join(lines))
    return text


def written_arguments(d):
    """[(name, type, is_pointer)] of the parameters a call of d may write: a
    reference or a pointer to something not const."""
    out = []
    for type_, name in d.params:
        t = type_.strip()
        if not name or t.startswith("const ") or not t.endswith(("&", "*")):
            continue
        out.append((name, t[:-1].strip(), t.endswith("*")))
    return out


def _written_fills(outline, d, how, indent):
    """Statements that fill what d's call may write into its arguments."""
    out = []
    for name, type_, pointer in written_arguments(d):
        inner = fill_statements(outline, "(*%s)" % name if pointer else name, type_, how,
                                indent + ("  " if pointer else ""))
        if inner and pointer:
            inner = ["%sif (%s != nullptr) {" % (indent, name)] + inner + [indent + "}"]
        out += inner
    return out


def _wrapped_body(outline, d, body, variant):
    """The new body of definition d: the solution's `body` run first, then its
    answer replaced (only in the outermost graded call)."""
    how = "::mha_degenerate::Fill::" + FILL[variant.fill]
    args = ", ".join(name for _, name in d.params if name)
    inert = variant.fill == "inert" and d.cls in outline.mutable_classes()
    written = written_arguments(d)
    outline.writing_in = d.cls
    post = []
    if d.is_constructor:
        if variant.zero_weights:
            post = fill_statements(outline, "", d.cls, "::mha_degenerate::Fill::kZeros", "    ")
    elif inert and not d.const:
        post = ["    *this = mha_degenerate_saved;  // as if the call had never happened"]
        for n, _, p in written:
            post.append("    if (%s != nullptr) *%s = *mha_degenerate_saved_%s;" % (n, n, n) if p
                        else "    %s = mha_degenerate_saved_%s;" % (n, n))
    else:
        if d.cls and not d.const:
            post = fill_statements(outline, "", d.cls, how, "    ")
        post += _written_fills(outline, d, how, "    ")
    value = d.ret not in (None, "void") and not d.ret.endswith("&")
    if inert and d.const and INTEGRAL.match(d.ret or ""):
        value = False          # the unchanged object's sizes, told truly
    out = ["{", "  ::mha_degenerate::Depth mha_degenerate_depth;"]
    if inert and not d.const and not d.is_constructor:
        out.append("  const auto mha_degenerate_saved = *this;")
        for n, t, p in written:
            out.append("  const std::optional<%s> mha_degenerate_saved_%s = "
                       "%s != nullptr ? std::optional<%s>(*%s) : std::nullopt;" % (t, n, n, t, n)
                       if p else "  const auto mha_degenerate_saved_%s = %s;" % (n, n))
    if d.ret in (None, "void"):
        out.append("  [&]() {%s}();" % body)
    else:
        out.append("  %s mha_degenerate_result = [&]() -> %s {%s}();" % (d.ret, d.ret, body))
    if post or value:
        out += ["  if (mha_degenerate_depth.outermost()) {",
                "    const ::mha_degenerate::Sources mha_degenerate_sources ="
                " ::mha_degenerate::sources(%s);" % args]
        out += post
        if value:
            out.append("    ::mha_degenerate::degrade(mha_degenerate_result, "
                       "mha_degenerate_sources);")
        else:
            out.append("    (void)mha_degenerate_sources;")
        out.append("  }")
    if d.ret not in (None, "void"):
        out.append("  return mha_degenerate_result;")
    out.append("}")
    return "\n".join(out)


def write(outline, variant):
    """The variant's learner file (text): the solution with every graded
    definition's body wrapped, and the prelude (and the accessors of the
    private fields it fills) after its #includes."""
    text = outline.solution
    outline.private_fields = set()
    pieces, last = [], 0
    for d in outline.graded:
        pieces.append(text[last:d.open])
        pieces.append(_wrapped_body(outline, d, text[d.open + 1:d.close], variant))
        last = d.close + 1
    pieces.append(text[last:])
    text = "".join(pieces)
    includes = list(re.finditer(r"^#include[^\n]*\n", text, re.M))
    if not includes:
        raise DegenerateError("%s has no #include to put the prelude after" %
                              outline.lab.solution_file)
    cut = includes[-1].end()
    head = ("// Degenerate learner file (%s), written by tools/lab/checks/degenerate.py "
            "from the solution: it computes nothing.\n" % variant.label)
    return (head + text[:cut] + "\n" + _prelude(outline, variant) + "\n" +
            accessors(outline.private_fields) + text[cut:])
