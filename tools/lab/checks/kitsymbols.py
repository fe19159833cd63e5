"""The kit holds no answer, checked by symbols: no object file of a compiled
learner kit defines a graded function except the lab's own stub.

A graded function is one that a lab's header (labs/NN_name/<target>.h, the
registry's target) declares and that the learner's file implements. The list
is not written by hand: it is what the untouched stub's object defines
(`nm -C --defined-only`, strong text symbols, in namespace mha) whose name
the lab's header spells out. Every other object of the kit (common/, the
other labs' files, public tests, programs) that defines one of those
functions, with any signature, is an answer shipped with the kit: a file
whose code the learner could call or copy instead of writing their own.

scan(kit_dir, ...) builds the kit as it is exported (`bazel build //...`
with the stubs), runs nm on every object file under bazel-bin, and returns
problems(); problems() is pure (tools/lab/tests/test_kitsymbols.py feeds it
canned nm output). Names are compared without their parameter lists, so an
overload with another signature counts too; constructors, destructors and
assignments are compared with theirs (the compiler defines a class's copy
and move constructors wherever it is copied: those are no answer).
"""
import os
import re
import subprocess

from labs import objects_path
from progress import BAZEL_UI_FLAGS, Progress, run_bazel

# nm's letters that are not the definition of a function's code: references
# (U, and the weak references w and v), data (B, D, R, G, S, C, V, u: bss,
# data, read-only data, small data, common, weak and unique objects),
# absolute values, debug symbols. A graded function's name there is a call,
# a variable or a table, not an answer.
_NOT_CODE = set("UwvBbDdRrCcAaNnGgSsVu-?")
_WORD = re.compile(r"[A-Za-z_]\w*")


def parse_nm(text):
    """[(type letter, demangled name)] from `nm -C --defined-only` of one
    object: lines "ADDRESS TYPE NAME" (NAME may hold spaces), or "TYPE NAME"
    for symbols without an address."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^\s*(?:[0-9a-fA-F]+\s+)?([A-Za-z?-])\s+(\S.*)$", line)
        if m:
            out.append((m.group(1), m.group(2).strip()))
    return out


def _outside_angles(s):
    """(index, character) of each character of s outside angle brackets
    (template arguments), the brackets themselves left out."""
    depth = 0
    for i, ch in enumerate(s):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            yield i, ch


def qualified_name(demangled):
    """The function's qualified name without return type, template
    arguments, unnamed namespaces or parameter list: "mha::split_heads(xt::... const&,
    int)" -> "mha::split_heads"; "mha::MultiHeadAttention::forward(...)
    const" -> "mha::MultiHeadAttention::forward"."""
    s = demangled.replace("(anonymous namespace)", "{anonymous}")
    cut = next((i for i, ch in _outside_angles(s) if ch == "("), len(s))
    head = s[:cut].strip()
    # A template function's demangled name starts with its return type.
    last_space = max((i for i, ch in _outside_angles(head) if ch == " "), default=-1)
    head = head[last_space + 1:]
    # Drop template arguments of the function itself: f<int> -> f.
    plain = [ch for _, ch in _outside_angles(head)]
    # An unnamed namespace hides nothing from a reader of the file.
    return "".join(plain).replace("{anonymous}::", "")


def _special(q):
    """Whether q names a constructor, destructor or assignment operator:
    members the compiler writes itself (a copy or move constructor wherever a
    class is copied), so they are told apart by signature, not by name."""
    parts = q.split("::")
    return len(parts) >= 2 and (parts[-1].lstrip("~") == parts[-2] or
                                parts[-1].startswith("operator="))


def key(demangled):
    """What two definitions share when they define the same graded function:
    the qualified name (any overload), or for a constructor, destructor or
    assignment the whole demangled name (that overload only)."""
    q = qualified_name(demangled)
    if _special(q):
        return " ".join(demangled.replace("(anonymous namespace)::", "").split())
    return q


def graded_functions(stub_nm, header_text):
    """{key()} of the graded functions of one lab: the strong text symbols
    (nm type T) in namespace mha that the stub's object defines and whose own
    name (the last part: the function, method or constructor) is a word of
    the lab's header."""
    words = set(_WORD.findall(header_text))
    names = set()
    for kind, name in parse_nm(stub_nm):
        if kind != "T":
            continue
        q = qualified_name(name)
        if not q.startswith("mha::") or q.startswith(("mha::testing::", "mha::remote::")):
            continue
        if q.split("::")[-1].lstrip("~") in words:
            names.add(key(name))
    return names


def problems(objects, stubs, headers):
    """Why the kit is refused ([message], empty: fine).

    objects: {object path (relative to bazel-bin): nm -C --defined-only text}
    stubs:   {lab label ("lab 1"): [the paths in objects of that lab's stub]}
    headers: {lab label: (header path, header text)}
    """
    found = []
    graded = {}                          # qualified name -> (lab label, header path)
    for lab, paths in stubs.items():
        header_path, header_text = headers[lab]
        if not paths:
            found.append("%s: the kit's build has no object of the stub, so its graded functions "
                         "are unknown (was the kit built?)" % lab)
            continue
        names = set()
        for p in paths:
            names |= graded_functions(objects.get(p, ""), header_text)
        if not names:
            found.append("%s: the stub's object defines none of the functions %s declares"
                         % (lab, header_path))
        for n in names:
            graded.setdefault(n, (lab, header_path))
    own = {p: lab for lab, paths in stubs.items() for p in paths}
    for path in sorted(objects):
        seen = set()
        for kind, name in parse_nm(objects[path]):
            if kind in _NOT_CODE:
                continue
            q = key(name)
            if q not in graded or q in seen:
                continue
            lab, header_path = graded[q]
            if own.get(path) == lab:
                continue
            seen.add(q)
            found.append("%s defines %s, a graded function of %s (declared in %s): only the "
                         "learner's stub may define it in the kit" % (path, name, lab,
                                                                       header_path))
    return found


def stub_object_paths(lab, object_paths):
    """The objects of `object_paths` compiled from the lab's learner file:
    labs/NN_name/_objs/<target>/<stem>.o or .pic.o."""
    stem = os.path.splitext(os.path.basename(lab.learner_file))[0]
    prefix = objects_path(lab.library) + "/"
    return [p for p in object_paths
            if p.startswith(prefix) and os.path.basename(p) in (stem + ".o", stem + ".pic.o")]


def nm_objects(bin_dir):
    """{path relative to bin_dir: nm -C --defined-only output} of every
    object file under bin_dir (a progress line while it reads them)."""
    paths = []
    for dirpath, dirnames, filenames in os.walk(bin_dir):
        dirnames.sort()
        paths += [os.path.join(dirpath, fn) for fn in sorted(filenames) if fn.endswith(".o")]
    shown = Progress("export-kit: reading the symbols of the kit's object files")
    out = {}
    for i, full in enumerate(paths, 1):
        p = subprocess.run(["nm", "-C", "--defined-only", full], capture_output=True,
                           text=True, errors="replace")
        out[os.path.relpath(full, bin_dir)] = p.stdout
        shown.update("%d / %d" % (i, len(paths)))
    shown.done()
    return out


def check_built(bin_dir, labs, kit_dir):
    """problems() of a kit already built, its bazel-bin at bin_dir."""
    objects = nm_objects(bin_dir)
    stubs, headers = {}, {}
    for lab in labs:
        label = "lab %d" % lab.number
        stubs[label] = stub_object_paths(lab, objects)
        header = lab.header_file
        try:
            with open(os.path.join(kit_dir, header), errors="replace") as f:
                text = f.read()
        except OSError:
            text = ""
        headers[label] = (header, text)
    return problems(objects, stubs, headers), len(objects)


def scan(kit_dir, labs, bazel):
    """Build the kit (`bazel build //...`, no convenience links in kit_dir)
    and check its objects. bazel: the command and startup options, e.g.
    ["bazel", "--output_base=/tmp/x"]. Returns (problems, objects scanned);
    a failed build is a problem."""
    rc, out = run_bazel(bazel + ["build"] + BAZEL_UI_FLAGS + ["--symlink_prefix=/", "//..."],
                        "export-kit: bazel build //... in the kit (its symbols are checked next)",
                        kit_dir)
    if rc != 0:
        errors = [l for l in out.splitlines() if l.startswith("ERROR")]
        return ["bazel build //... fails in the kit, so its symbols cannot be checked: %s"
                % " ".join(errors)[:400]], 0
    p = subprocess.run(bazel + ["info", "--color=no", "bazel-bin"], cwd=kit_dir,
                       capture_output=True, text=True, errors="replace")
    lines = p.stdout.strip().splitlines()
    if p.returncode != 0 or not lines:
        return ["bazel info bazel-bin fails in the kit: %s" % p.stderr.strip()[-300:]], 0
    return check_built(lines[-1], labs, kit_dir)
