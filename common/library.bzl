"""common_library(): a library of common/ and its unit test (also used by the
hidden tests' shared reference code, in the instructors' repository).

The layout every one of them follows: <name>.h and <name>.cc make the
library :<name>, and <name>_test.cc (small) tests it as :<name>_test.
"""

load("@rules_cc//cc:defs.bzl", "cc_library", "cc_test")

def common_library(name, deps = [], srcs = None, hdrs = None, test = True, test_deps = [],
                   test_data = [], **kwargs):
    """:<name> from <name>.cc and <name>.h (or `srcs`, `hdrs`), with `deps`
    and the other cc_library attributes in kwargs; with `test`, :<name>_test
    from <name>_test.cc on :<name>, GoogleTest's main and `test_deps`."""
    cc_library(
        name = name,
        srcs = [name + ".cc"] if srcs == None else srcs,
        hdrs = [name + ".h"] if hdrs == None else hdrs,
        deps = deps,
        **kwargs
    )
    if test:
        cc_test(
            name = name + "_test",
            size = "small",
            srcs = [name + "_test.cc"],
            data = test_data,
            deps = [":" + name, "@system//:gtest_main"] + test_deps,
        )
