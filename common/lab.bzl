"""The macros every lab's BUILD files use. A lab is its mirrored folders:

    labs/NN_name/BUILD       lab_library(name = "<target>", deps = [...])
                             lab_test(name = "<target>_public_test", ...)
    tests/NN_name/BUILD      graded_test(name = "<target>_test", ...)
    solutions/NN_name/BUILD  solution_file("<target>.cc")

Nothing here names a lab: each macro reads its lab from the package it is
called in, so a new lab needs no edit of this file.

`--config=solutions` (a single `--define=mha_solutions=1`) builds every lab
library from solutions/NN_name/<target>.cc instead of the learner's file.
"""

load("@rules_cc//cc:defs.bzl", "cc_library", "cc_test")

def _lab_dir():
    return native.package_name().split("/")[-1]

def lab_library(name, deps = [], **kwargs):
    """//labs/NN_name:<name>: the header <name>.h and the learner's <name>.cc
    (or the reference solution, with --config=solutions)."""
    cc_library(
        name = name,
        srcs = select({
            "//common:solutions": ["//solutions/%s:%s.cc" % (_lab_dir(), name)],
            "//conditions:default": [name + ".cc"],
        }),
        hdrs = [name + ".h"],
        deps = deps + ["//common:tensor"],
        visibility = ["//visibility:public"],
        **kwargs
    )

def lab_test(name, srcs, deps = [], data = [], size = "small", **kwargs):
    """A public test of the lab: what the learner runs with `bazel test`."""
    cc_test(
        name = name,
        size = size,
        srcs = srcs,
        data = data,
        deps = deps + ["//common:testing", "@system//:gtest_main"],
        **kwargs
    )

def graded_test(name, srcs, deps = [], data = [], size = "small", **kwargs):
    """A hidden (grading) test of the lab."""
    cc_test(
        name = name,
        size = size,
        srcs = srcs,
        data = data,
        deps = deps + ["//common:testing", "@system//:gtest_main"],
        **kwargs
    )

def solution_file(src):
    """Lets this lab's library compile the reference solution `src`."""
    native.exports_files(
        [src],
        visibility = ["//labs/%s:__pkg__" % _lab_dir()],
    )
