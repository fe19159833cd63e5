"""Each signature is written twice: in the lab's header and in its remote
interface (tests/NN_name/remote.cc). This reads both and says where the
second differs from the first, so that a header edited without its
remote.cc (or the other way round) fails the registry check with the
function's name, instead of a template error deep in common/grading/remote.h.

    MHA_REMOTE_FUNCTION(Tensor3, split_heads, (const Tensor2& x, int n_heads), (x, n_heads))

must match a declaration `Tensor3 split_heads(const Tensor2& x, int n_heads);`
in labs/NN_name/*.h: the same return type and the same parameter types
(names and default values aside); a CONST_METHOD must be declared `const`,
a CONSTRUCTOR `Type(params)` (a POINTER_CONSTRUCTOR too; a REFERENCE_METHOD
is a const method). Hand-written clients (MHA_REMOTE_CLIENT) are not read:
their signatures are C++ the compiler checks.
"""
import os
import re

from labs import ROOT

_MACROS = {
    # name: (index of the class, of the return type, of the function name, of the params)
    "MHA_REMOTE_FUNCTION": (None, 0, 1, 2),
    "MHA_REMOTE_CONSTRUCTOR": (0, None, None, 1),
    "MHA_REMOTE_POINTER_CONSTRUCTOR": (0, None, None, 1),
    "MHA_REMOTE_CONST_METHOD": (0, 1, 2, 3),
    "MHA_REMOTE_REFERENCE_METHOD": (0, 1, 2, 3),
    "MHA_REMOTE_METHOD": (0, 1, 2, 3),
}
_CONSTRUCTORS = ("MHA_REMOTE_CONSTRUCTOR", "MHA_REMOTE_POINTER_CONSTRUCTOR")
_CONST_METHODS = ("MHA_REMOTE_CONST_METHOD", "MHA_REMOTE_REFERENCE_METHOD")
_MACRO_START = re.compile(r"\b(%s)\s*\(" % "|".join(_MACROS))
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
# (A specifier may end the head: an `explicit` constructor's head is that word alone.)
_LEADING = re.compile(r"^(?:(?:inline|static|virtual|explicit|constexpr|friend|"
                      r"\[\[nodiscard\]\])(?:\s+|$))+")


def _balanced(text, start):
    """(the text inside the parentheses opening at text[start], the index after them)."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in "(<[{":
            depth += 1
        elif text[i] in ")>]}":
            depth -= 1
            if depth == 0:
                return text[start + 1:i], i + 1
    raise ValueError("unbalanced parentheses")


def _split(args):
    """Top-level comma-separated parts of `args`."""
    parts, depth, cur = [], 0, ""
    for ch in args:
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts]


def normal_type(text):
    """A type written the one way: single spaces, none around & * < > , ::."""
    t = " ".join(text.split())
    t = re.sub(r"\s*([&*<>,:]|::)\s*", r"\1", t)
    return t.replace(",", ", ")


def param_types(params):
    """The parameter types of a parameter list (without its parentheses):
    names and default values dropped."""
    out = []
    for p in _split(params):
        p = _split_default(p)
        if p == "void":
            continue
        m = re.match(r"^(.*?[\w&*>\]])\s*\b([A-Za-z_]\w*)$", p)
        # A trailing identifier after a type is the parameter's name.
        if m and re.search(r"[\w&*>]\s*$", m.group(1)) and m.group(1).strip() not in ("const",
                                                                                    "unsigned",
                                                                                    "signed",
                                                                                    "long"):
            p = m.group(1)
        out.append(normal_type(p))
    return out


def _split_default(p):
    depth = 0
    for i, ch in enumerate(p):
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth -= 1
        elif ch == "=" and depth == 0:
            return p[:i].strip()
    return p.strip()


def remote_units(text):
    """[(macro, class, return type, name, parameter types)] of a remote.cc."""
    text = _COMMENTS.sub("", text)
    out = []
    for m in _MACRO_START.finditer(text):
        inside, _ = _balanced(text, m.end() - 1)
        args = _split(inside)
        cls_i, ret_i, name_i, params_i = _MACROS[m.group(1)]
        params = args[params_i].strip()
        if params.startswith("(") and params.endswith(")"):
            params = params[1:-1]
        cls = args[cls_i] if cls_i is not None else None
        name = args[name_i] if name_i is not None else cls
        ret = normal_type(args[ret_i]) if ret_i is not None else None
        out.append((m.group(1), cls, ret, name, param_types(params)))
    return out


def declarations(text, name):
    """[(return type or None, parameter types, const)] of every declaration of
    `name` in a header's text."""
    text = _COMMENTS.sub("", text)
    out = []
    for m in re.finditer(r"(?<![\w:~.])%s\s*\(" % re.escape(name), text):
        try:
            params, end = _balanced(text, m.end() - 1)
        except ValueError:
            continue
        before = text[:m.start()]
        cut = max(before.rfind(c) for c in ";{}")
        head = before[cut + 1:]
        head = re.sub(r"^\s*(?:public|private|protected)\s*:", "", head)
        head = re.sub(r"template\s*<[^;{}]*?>\s*", "", head)
        head = _LEADING.sub("", head.strip())
        tail = text[end:end + 40]
        const = bool(re.match(r"\s*const\b", tail))
        out.append((normal_type(head) if head else None, param_types(params), const))
    return out


def problems(lab, root=ROOT):
    """Where tests/NN_name/remote.cc differs from the lab's headers."""
    remote = os.path.join(root, lab.remote_file)
    lab_dir = os.path.join(root, "labs", lab.dir)
    try:
        with open(remote) as f:
            units = remote_units(f.read())
    except (OSError, ValueError):
        return []
    headers = ""
    for fn in sorted(os.listdir(lab_dir)) if os.path.isdir(lab_dir) else []:
        if fn.endswith(".h") and not fn.endswith("_test_util.h"):
            with open(os.path.join(lab_dir, fn)) as f:
                headers += f.read() + "\n"
    out = []
    for macro, cls, ret, name, params in units:
        qualified = "%s::%s" % (cls, name) if cls else name
        found = declarations(headers, name)
        if macro in _CONSTRUCTORS:
            found = [d for d in found if d[0] in (None, "")]
        if not found:
            out.append("lab %d: %s declares %s, which labs/%s/*.h does not declare"
                       % (lab.number, lab.remote_file, qualified, lab.dir))
            continue
        want_const = macro in _CONST_METHODS
        if any(d[1] == params and (ret is None or d[0] == ret) and
               (macro == "MHA_REMOTE_FUNCTION" or macro in _CONSTRUCTORS or
                d[2] == want_const) for d in found):
            continue
        d = found[0]
        out.append("lab %d: %s says %s%s(%s)%s; the header says %s%s(%s)%s" % (
            lab.number, lab.remote_file, ret + " " if ret else "", qualified, ", ".join(params),
            " const" if want_const else "", d[0] + " " if d[0] else "", qualified,
            ", ".join(d[1]), " const" if d[2] else ""))
    return out
