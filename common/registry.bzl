"""The lab registry, read once by Bazel: labs/labs.json -> @lab_registry//:labs.bzl.

labs/labs.json is the only list of labs. This repository rule turns it into a
Starlark constant, LABS (a list of structs with number, dir, target, title,
calls: the lab's call surface, the earlier-lab functions its file may call,
see tools/lab/surface.py; and call_labs: the dirs of the labs that own them,
read from tests/NN_name/remote.cc), so that the macros in common/lab.bzl can
find a lab's neighbours without any BUILD file naming them. Editing
labs.json re-runs the rule.
"""

def _units(text):
    """The qualified names a tests/NN_name/remote.cc declares (as tools/lab/surface.py
    reads them): MHA_REMOTE_FUNCTION(Ret, name, ...) -> name,
    MHA_REMOTE_[POINTER_]CONSTRUCTOR(T, ...) -> T::T,
    MHA_REMOTE_[CONST_|REFERENCE_]METHOD(T, Ret, name, ...) -> T::name, and
    hand-written registrations "T::name(...)"."""
    names = []
    for macro, kind in [("MHA_REMOTE_FUNCTION(", "f"), ("MHA_REMOTE_CONSTRUCTOR(", "c"),
                        ("MHA_REMOTE_POINTER_CONSTRUCTOR(", "c"),
                        ("MHA_REMOTE_CONST_METHOD(", "m"), ("MHA_REMOTE_METHOD(", "m"),
                        ("MHA_REMOTE_REFERENCE_METHOD(", "m")]:
        for rest in text.split(macro)[1:]:
            args = [a.strip() for a in rest.split(",")[:3]]
            if kind == "f" and len(args) >= 2:
                names.append(args[1])
            elif kind == "c":
                names.append("%s::%s" % (args[0], args[0]))
            elif kind == "m" and len(args) >= 3:
                names.append("%s::%s" % (args[0], args[2]))
    for i, piece in enumerate(text.split('"')):
        head = piece.split("(")[0]
        bare = head.replace("::", "").replace("_", "")
        if i % 2 == 1 and "(" in piece and head and bare.isalnum():
            names.append(head)
    return names

def _lab_registry_impl(rctx):
    data = json.decode(rctx.read(rctx.attr.registry))

    # Is this the instructors' repository, with the grading tests and the
    # solutions? The learner kit has neither: then the macros declare nothing
    # that needs them.
    root = rctx.path(rctx.attr.registry).dirname.dirname
    instructors = root.get_child("tests").exists and root.get_child("solutions").exists

    # Which lab owns each function of a remote interface (instructors only):
    # a lab's call surface links the servers and clients of those labs alone.
    owner = {}
    if instructors:
        for lab in data["labs"]:
            remote = root.get_child("tests").get_child(lab["dir"]).get_child("remote.cc")
            if remote.exists:
                for name in _units(rctx.read(remote)):
                    if name not in owner:
                        owner[name] = lab["dir"]
    entries = []
    for lab in data["labs"]:
        # A missing field is an error of the consistency check; here it
        # means "nothing", so that the check can still run.
        calls = [str(c) for c in lab.get("calls", [])]
        call_labs = []
        for c in calls:
            if c in owner and owner[c] not in call_labs:
                call_labs.append(owner[c])
        entries.append(("    struct(number = %d, dir = %r, target = %r, title = %r, calls = %r, " +
                        "call_labs = %r),") % (
            lab["number"],
            lab["dir"],
            lab["target"],
            lab["title"],
            calls,
            call_labs,
        ))
    rctx.file("BUILD", "")
    rctx.file("labs.bzl", ("# Generated from labs/labs.json by common/registry.bzl.\n" +
                           "LABS = [\n%s\n]\n" +
                           "# Whether this is the instructors' repository (tests/, solutions/).\n" +
                           "INSTRUCTORS = %s\n") % ("\n".join(entries), instructors))

lab_registry = repository_rule(
    implementation = _lab_registry_impl,
    attrs = {"registry": attr.label(allow_single_file = True)},
)
