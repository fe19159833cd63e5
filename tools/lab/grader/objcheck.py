"""A second layer: checks of a learner's compiled object before it is linked.

The wall is elsewhere (the learner's code runs in its own process as its own
user, see sandbox.py and common/grading/remote.h): nothing the object does there can
reach a verdict. These checks only refuse objects that have no business in
a lab and that would otherwise run code in odd places:

  * link-time-optimisation bytecode (.gnu.lto_* sections): the linker plugin
    would compile it during the link (the link also runs without the plugin);
  * GNU indirect functions (symbol type i): resolvers run inside the dynamic
    loader, before any constructor;
  * a definition of main, _start, _init or _fini;
  * any reference to, or definition in, GoogleTest or the grader's own
    namespaces (mha::remote, mha::testing).

Weak symbols (nm types w, W, v, V) count exactly like strong ones. nm and
readelf run as the build user, under limits (the object is hostile input to
them too); their output is decoded leniently so odd symbol names cannot
crash the grader.
"""
import re

_LTO_SECTION = re.compile(r"^\.gnu\.lto_|^\.gnu_lto|^\.llvm\.lto|^\.llvmbc|^\.llvmcmd")
_ENTRY_POINTS = {"main", "_start", "_init", "_fini"}
# Mangled prefixes of GoogleTest and of the grader's namespaces.
_FORBIDDEN_PREFIXES = ("_ZN7testing", "_ZNK7testing", "_ZTVN7testing", "_ZTIN7testing",
                       "_ZTSN7testing", "_ZN3mha6remote", "_ZNK3mha6remote",
                       "_ZN3mha7testing", "_ZNK3mha7testing")


def sections(readelf_output):
    """Section names from `readelf -S -W`."""
    names = []
    for line in readelf_output.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)", line)
        if m:
            names.append(m.group(1))
    return names


def symbols(nm_output):
    """[(name, type letter)] from `nm -P`."""
    out = []
    for line in nm_output.splitlines():
        parts = line.split()
        if len(parts) >= 2 and len(parts[1]) == 1:
            out.append((parts[0], parts[1]))
    return out


def problems(readelf_output, nm_output):
    """Reasons to refuse the object, in a learner's words (empty: fine)."""
    found = []
    if any(_LTO_SECTION.match(s) for s in sections(readelf_output)):
        found.append("the object carries link-time-optimisation bytecode (.gnu.lto_ sections), "
                     "which is not allowed")
    for name, kind in symbols(nm_output):
        shown = name[:80]
        if kind == "i":
            found.append("defines %s as a GNU indirect function (ifunc), which is not allowed"
                         % shown)
        elif name in _ENTRY_POINTS and kind not in "Uwv":
            found.append("defines %s, which only the grader may define" % shown)
        elif name.startswith(_FORBIDDEN_PREFIXES):
            found.append("uses the test framework or the grader's code (%s), which a lab file "
                         "may not" % shown)
    # One line per reason is enough.
    seen, unique = set(), []
    for f in found:
        key = f.split(" (")[0][:40]
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique[:5]
