"""The macros every lab's BUILD files use. A lab is its mirrored folders plus
one line in labs/labs.json (solutions/ and tests/ are in the instructors'
repository only):

    labs/NN_name/BUILD       lab_library(name = "<target>", deps = [...])
                             lab_test(name = "<target>_public_test", srcs, deps, data)
    solutions/NN_name/BUILD  solution_file("<target>.cc")
    tests/NN_name/BUILD      lab_remote()
                             graded_test(name = "<target>_test", srcs, deps, data)

Nothing here names a lab: each macro reads its lab from the package it is
called in and its neighbours from the registry (@lab_registry, generated
from labs/labs.json by common/registry.bzl).

In the instructors' repository, `--config=solutions` (a single
`--define=mha_solutions=1`) builds every lab library from
solutions/NN_name/<target>.cc instead of the learner's file.

For the grader (in the instructors' repository: common/remote.h, tools/lab/),
every test also gets a
`<name>_remote` binary (tagged manual): the same test sources, with the lab's
own library replaced by a client that forwards each call to the learner's
code in another process, and the earlier labs served from the libraries
linked here (the reference solutions, when built with --config=solutions).
lab_remote() declares that client, the matching server handlers, and the
learner_runtime bundles the grader links a learner's compiled file with.
"""

load("@lab_registry//:labs.bzl", "INSTRUCTORS", "LABS")
load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_library", "cc_test")

# What a learner's file may use besides the labs: linked into its process.
_LEARNER_SUPPORT = [
    "//common:rng",
    "//common:tensor",
    "//common:vector_math",
    "@system//:xtensor_blas",
]

def _this_lab():
    lab_dir = native.package_name().split("/")[-1]
    for lab in LABS:
        if lab.dir == lab_dir:
            return lab
    fail("%s is not a registered lab: add its line to labs/labs.json" % native.package_name())

def _earlier(lab):
    return [e for e in LABS if e.number < lab.number]

def _lib(lab):
    return "//labs/%s:%s" % (lab.dir, lab.target)

def _lab_deps(deps):
    """The deps that are other labs' libraries (//labs/NN_name:target)."""
    return [d for d in deps if d.startswith("//labs/")]

def lab_library(name, deps = [], **kwargs):
    """//labs/NN_name:<name>: the header <name>.h and the learner's <name>.cc
    (or, in the instructors' repository, the reference solution, with
    --config=solutions)."""
    lab = _this_lab()
    if name != lab.target:
        fail("labs/labs.json says the library of %s is %r, not %r" % (lab.dir, lab.target, name))
    labs = _lab_deps(deps)
    others = [d for d in deps if d not in labs]

    # The header alone: what clients, servers and later headers compile against.
    cc_library(
        name = name + "_header",
        hdrs = [name + ".h"],
        deps = [d + "_header" for d in labs] + others + ["//common:tensor"],
        visibility = ["//visibility:public"],
    )

    # The non-lab libraries the implementation uses (linked with a learner's file).
    cc_library(
        name = name + "_support",
        deps = others + ["//common:tensor"],
        visibility = ["//visibility:public"],
    )
    cc_library(
        name = name,
        srcs = select({
            "//common:solutions": ["//solutions/%s:%s.cc" % (lab.dir, name)],
            "//conditions:default": [name + ".cc"],
        }),
        # Classic C++ slips in the learner's file (`d_model = d_model;` in a
        # constructor) warn; -Wall is on already.
        copts = select({
            "//common:solutions": [],
            "//conditions:default": ["-Wextra", "-Wshadow"],
        }),
        deps = [":" + name + "_header"] + deps + ["//common:tensor"],
        visibility = ["//visibility:public"],
        **kwargs
    )

def _remote_variant(lab, name, srcs, deps, data, own):
    """<name>_remote: the test, calling the lab's code in another process."""
    rdeps = [d for d in deps if d not in own]
    rdeps.append("//tests/%s:remote_client" % lab.dir)
    for e in _earlier(lab):
        # Calls the learner's process makes back (isolated grading) are
        # answered here by the earlier labs' libraries.
        for d in ["//tests/%s:remote_server" % e.dir, _lib(e)]:
            if d not in rdeps:
                rdeps.append(d)
    cc_binary(
        name = name + "_remote",
        testonly = True,
        srcs = srcs,
        data = data,
        deps = rdeps + [
            "//common:remote",
            "//common:test_results",
            "//common:testing",
            "@system//:gtest_main",
        ],
        tags = ["manual", "mha_remote"],
    )

def _lab_cc_test(name, srcs, deps, data, size, **kwargs):
    cc_test(
        name = name,
        size = size,
        srcs = srcs,
        data = data,
        deps = deps + ["//common:testing", "@system//:gtest_main"],
        **kwargs
    )

def lab_test(name, srcs, deps = [], data = [], size = "small", **kwargs):
    """A public test of the lab: what the learner runs with `bazel test`."""
    lab = _this_lab()
    _lab_cc_test(name, srcs, deps, data, size, **kwargs)
    if INSTRUCTORS:  # the learner kit has no grader to serve
        _remote_variant(lab, name, srcs, deps, data, own = [":" + lab.target, _lib(lab)])

def graded_test(name, srcs, deps = [], data = [], size = "small", **kwargs):
    """A hidden (grading) test of the lab."""
    lab = _this_lab()
    _lab_cc_test(name, srcs, deps, data, size, **kwargs)
    _remote_variant(lab, name, srcs, deps, data, own = [_lib(lab)])

def solution_file(src):
    """Lets this lab's library compile the reference solution `src`."""
    native.exports_files(
        [src],
        visibility = ["//labs/%s:__pkg__" % _this_lab().dir],
    )

def _learner_runtime_impl(ctx):
    """A manifest of what the grader links a learner's object file with."""
    cc = cc_common.merge_cc_infos(cc_infos = [d[CcInfo] for d in ctx.attr.deps])
    lines = []
    files = []
    for linker_input in cc.linking_context.linker_inputs.to_list():
        for lib in linker_input.libraries:
            archive = lib.pic_static_library or lib.static_library
            if archive:
                files.append(archive)
                lines.append("%s %s" % ("whole" if lib.alwayslink else "archive", archive.path))
        for flag in linker_input.user_link_flags:
            lines.append("flag " + flag)
    manifest = ctx.actions.declare_file(ctx.label.name + ".manifest")
    ctx.actions.write(manifest, "\n".join(lines) + "\n")
    return [DefaultInfo(files = depset([manifest] + files))]

learner_runtime = rule(
    implementation = _learner_runtime_impl,
    attrs = {"deps": attr.label_list(providers = [CcInfo])},
)

def lab_remote(hdrs = None):
    """The lab's remote interface (remote.cc, and remote.h if the lab has
    types that travel): :remote_client, :remote_server, and the learner
    runtimes :learner_runtime_isolated and :learner_runtime_cumulative."""
    lab = _this_lab()
    if hdrs == None:
        hdrs = native.glob(["remote.h"])
    earlier = _earlier(lab)
    cc_library(
        name = "remote_types",
        hdrs = hdrs,
        deps = [_lib(lab) + "_header", "//common:remote"] +
               ["//tests/%s:remote_types" % e.dir for e in earlier],
        visibility = ["//visibility:public"],
    )
    for side in ["client", "server"]:
        cc_library(
            name = "remote_" + side,
            srcs = ["remote.cc"],
            copts = ["-DMHA_REMOTE_" + side.upper()],
            alwayslink = side == "server",
            deps = [":remote_types"],
            visibility = ["//visibility:public"],
        )
    support = ["//common:remote_server_main", ":remote_server", _lib(lab) + "_support"] + _LEARNER_SUPPORT

    # Lab N alone: the earlier labs the learner's file calls are answered by
    # the grader's test process (the reference solutions).
    learner_runtime(
        name = "learner_runtime_isolated",
        deps = support + ["//tests/%s:remote_client" % e.dir for e in earlier],
        tags = ["manual"],
        visibility = ["//visibility:public"],
    )

    # Lab N on top of the learner's own earlier labs (their objects are added).
    learner_runtime(
        name = "learner_runtime_cumulative",
        deps = support + ["%s_support" % _lib(e) for e in earlier],
        tags = ["manual"],
        visibility = ["//visibility:public"],
    )
