"""A lab's call surface: which earlier-lab functions its learner file may call.

Each line of labs/labs.json has a field "calls", the allow-list, as qualified
C++ names without signature (the units of the labs' remote interfaces in
tests/NN_name/remote.cc):

    "calls": ["split_heads", "attention_batched", "MultiHeadLatentAttention::compress"]

A free function is its name, a method `Class::method`, a constructor
`Class::Class`; overloads share one name (both `causal_mask`s). Everything
else an earlier lab defines is outside the surface. The surface is enforced
three times:

  * isolated grading: lab N's trusted test binary links the servers of only
    the earlier labs that its surface names, and answers only the named calls
    (common/grading/remote.cc); the learner's runtime links only their clients;
  * cumulative grading (and isolated, as a second layer): before linking, the
    undefined references of lab N's object are read (`nm -u -C`) and any
    earlier-lab function outside the surface rejects the lab (violations());
  * the kit (`./lab status`) warns about the same references in the learner's
    own build, and each lesson's "What you may call" line is checked against
    the field (the consistency check).
"""
import os
import re

from labs import ROOT

_MACRO_FUNCTION = re.compile(r"MHA_REMOTE_FUNCTION\(\s*[^,]+?,\s*(\w+)\s*,")
_MACRO_CONSTRUCTOR = re.compile(r"MHA_REMOTE_(?:POINTER_)?CONSTRUCTOR\(\s*(\w+)\s*,")
_MACRO_METHOD = re.compile(
    r"MHA_REMOTE_(?:CONST_|REFERENCE_)?METHOD\(\s*(\w+)\s*,\s*[^,]+?,\s*(\w+)\s*,")
# Hand-written clients and handlers name the call in a string: "Type::name(...)".
_WRITTEN = re.compile(r'"((?:\w+::)?\w+)\(')


def qualified(wire_or_demangled):
    """'mha::MultiHeadAttention::forward(xt::... const&) const' -> 'MultiHeadAttention::forward'."""
    s = wire_or_demangled.strip()
    depth, cut = 0, len(s)
    for i, ch in enumerate(s):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            cut = i
            break
    s = s[:cut]
    if s.startswith("mha::"):
        s = s[len("mha::"):]
    return s


def units(lab, root=ROOT):
    """The qualified names of `lab`'s remote interface (tests/NN_name/remote.cc);
    [] where the file is absent (the learner kit)."""
    path = os.path.join(root, "tests", lab.dir, "remote.cc")
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return []
    names = []
    for m in _MACRO_FUNCTION.finditer(text):
        names.append(m.group(1))
    for m in _MACRO_CONSTRUCTOR.finditer(text):
        names.append("%s::%s" % (m.group(1), m.group(1)))
    for m in _MACRO_METHOD.finditer(text):
        names.append("%s::%s" % (m.group(1), m.group(2)))
    for m in _WRITTEN.finditer(text):
        names.append(m.group(1))
    return sorted(set(names))


def owners(labs, root=ROOT):
    """{qualified name: the lab whose interface has it}."""
    out = {}
    for lab in labs:
        for name in units(lab, root):
            out.setdefault(name, lab)
    return out


def linked_labs(lab, labs, root=ROOT):
    """The earlier labs whose learner files cumulative grading links into lab's
    process: those that own a function of its call surface, and, for their
    own calls, those of their surfaces in turn (lab 13 calls lab 10's
    mha_backward, which calls lab 2). Any other earlier lab is not in the
    executable at all: its functions, API or not, cannot be reached, by name
    or by pointer. Sorted by number."""
    by_number = {l.number: l for l in labs}
    known = owners([l for l in labs if l.number < lab.number], root)
    out, todo = {}, [lab]
    while todo:
        current = todo.pop()
        for name in current.calls or []:
            owner = known.get(name)
            if owner is not None and owner.number < current.number and owner.number not in out:
                out[owner.number] = by_number[owner.number]
                todo.append(owner)
    return [out[n] for n in sorted(out)]


def reason(lab, name, owner=None):
    """Why `lab` may not call `name`, in a learner's words."""
    where = " (lab %d's)" % owner.number if owner is not None else ""
    if not lab.calls:
        return ("lab %d may not call %s%s: lab %d calls no function of an earlier lab "
                "(its call surface in labs/labs.json is empty); compute it in your own file"
                % (lab.number, name, where, lab.number))
    return ("lab %d may not call %s%s: it is not in lab %d's call surface (labs/labs.json: %s)"
            % (lab.number, name, where, lab.number, ", ".join(lab.calls)))


def undefined_names(nm_output):
    """Qualified names of the undefined symbols in `nm -u -C` output."""
    names = []
    for line in nm_output.splitlines():
        parts = line.strip().split(None, 1)
        if len(parts) == 2 and parts[0] in ("U", "w", "v"):
            names.append(qualified(parts[1]))
    return names


def violations(lab, labs, nm_output, root=ROOT):
    """The reasons lab's object (nm -u -C output) calls outside its surface."""
    known = owners([l for l in labs if l.number < lab.number], root)
    allowed = set(lab.calls or [])
    out, seen = [], set()
    for name in undefined_names(nm_output):
        owner = known.get(name)
        if owner is not None and name not in allowed and name not in seen:
            seen.add(name)
            out.append(reason(lab, name, owner))
    return out


# ---------------------------------------------------------------------------
# The lessons: each docs/NN_name.md has one line that says what it may call.

LESSON_PREFIX = "**What you may call.**"


def lesson_line(lab):
    """The line each lesson carries, as the registry says it must be."""
    if not lab.calls:
        return ("%s Nothing from an earlier lab: this lab's file calls no earlier lab's "
                "function (labs/labs.json, `\"calls\": []`)." % LESSON_PREFIX)
    return ("%s From the earlier labs, only %s (labs/labs.json, `\"calls\"`); any other "
            "earlier-lab function fails, naming itself." % (
                LESSON_PREFIX, ", ".join("`%s`" % c for c in lab.calls)))


def lesson_problems(lab, root=ROOT):
    path = os.path.join(root, "docs", lab.dir + ".md")
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    found = [l for l in lines if l.startswith(LESSON_PREFIX)]
    want = lesson_line(lab)
    if found != [want]:
        return ["lab %d: docs/%s.md must have exactly one line %r (generated from labs/labs.json's "
                "\"calls\"; found %d such lines%s)" % (
                    lab.number, lab.dir, want[:60] + "...", len(found),
                    ", the first differs" if found else "")]
    return []


def registry_problems(lab, labs, root=ROOT):
    """The "calls" field of one registry line."""
    if lab.calls is None:
        return ["lab %d: labs/labs.json has no \"calls\" (the earlier-lab functions its file may "
                "call; [] for none)" % lab.number]
    if not isinstance(lab.calls, list) or not all(isinstance(c, str) for c in lab.calls):
        return ["lab %d: \"calls\" in labs/labs.json must be a list of names" % lab.number]
    earlier = [l for l in labs if l.number < lab.number]
    known = owners(earlier, root)
    out = []
    if any(units(l, root) for l in earlier):   # the instructors' repository
        for c in lab.calls:
            if c not in known:
                out.append("lab %d: \"calls\" names %r, which no earlier lab's remote interface "
                           "(tests/NN_name/remote.cc) has" % (lab.number, c))
    if len(set(lab.calls)) != len(lab.calls):
        out.append("lab %d: \"calls\" names a function twice" % lab.number)
    return out
