"""The one macro every lab uses to declare its library.

`lab_library(name = "split_heads", lab = "01")` declares //labs/01_.../:split_heads
from the learner's `split_heads.cc`, or from `//solutions/01_...:split_heads.cc`
when built with `--define=mha_lab01=solution` (which `--config=solutions` sets
for every lab). The header always comes from the lab directory.
"""

load("@rules_cc//cc:defs.bzl", "cc_library")

def lab_library(name, lab, deps = []):
    pkg = native.package_name().split("/")[-1]
    cc_library(
        name = name,
        srcs = select({
            "//common:lab%s_solution" % lab: ["//solutions/%s:%s.cc" % (pkg, name)],
            "//conditions:default": [name + ".cc"],
        }),
        hdrs = [name + ".h"],
        deps = deps + ["//common:tensor"],
        visibility = ["//visibility:public"],
    )
