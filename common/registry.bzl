"""The lab registry, read once by Bazel: labs/labs.json -> @lab_registry//:labs.bzl.

labs/labs.json is the only list of labs. This repository rule turns it into a
Starlark constant, LABS (a list of structs with number, dir, target and
title), so that the macros in common/lab.bzl can find a lab's neighbours
without any BUILD file naming them. Editing labs.json re-runs the rule.
"""

def _lab_registry_impl(rctx):
    data = json.decode(rctx.read(rctx.attr.registry))
    entries = []
    for lab in data["labs"]:
        entries.append("    struct(number = %d, dir = %r, target = %r, title = %r)," % (
            lab["number"],
            lab["dir"],
            lab["target"],
            lab["title"],
        ))
    # Is this the instructors' repository, with the grading tests and the
    # solutions? The learner kit has neither: then the macros declare nothing
    # that needs them.
    root = rctx.path(rctx.attr.registry).dirname.dirname
    instructors = root.get_child("tests").exists and root.get_child("solutions").exists
    rctx.file("BUILD", "")
    rctx.file("labs.bzl", ("# Generated from labs/labs.json by common/registry.bzl.\n" +
                           "LABS = [\n%s\n]\n" +
                           "# Whether this is the instructors' repository (tests/, solutions/).\n" +
                           "INSTRUCTORS = %s\n") % ("\n".join(entries), instructors))

lab_registry = repository_rule(
    implementation = _lab_registry_impl,
    attrs = {"registry": attr.label(allow_single_file = True)},
)
