"""Wires Debian's rules_cc (package bazel-rules-cc) into Bazel 4.2.3, offline.

Debian ships rules_cc 0.0.4, whose two flag rules load `use_cpp_toolchain`
from @bazel_tools; Bazel 4.2.3 does not have it. A local_repository cannot
patch files, so this rule symlinks the Debian tree and writes patched copies
of those two files with the toolchain type spelled out instead.
"""

_PATCHED = [
    "cc/private/rules_impl/cc_flags_supplier.bzl",
    "cc/private/rules_impl/compiler_flag.bzl",
]

def _debian_rules_cc_impl(ctx):
    root = ctx.path(ctx.attr.path)
    if not root.exists:
        fail("rules_cc not found at %s: run ./lab setup (installs bazel-rules-cc)" % root)
    for child in root.readdir():
        if child.basename != "cc":
            ctx.symlink(child, child.basename)
    for child in root.get_child("cc").readdir():
        if child.basename != "private":
            ctx.symlink(child, "cc/" + child.basename)
    private = root.get_child("cc").get_child("private")
    for child in private.readdir():
        if child.basename != "rules_impl":
            ctx.symlink(child, "cc/private/" + child.basename)
    for child in private.get_child("rules_impl").readdir():
        rel = "cc/private/rules_impl/" + child.basename
        if rel in _PATCHED:
            text = ctx.read(child)
            text = text.replace(', "use_cpp_toolchain")', ")")
            text = text.replace("use_cpp_toolchain()", '["@bazel_tools//tools/cpp:toolchain_type"]')
            ctx.file(rel, text, executable = False)
        else:
            ctx.symlink(child, rel)

debian_rules_cc = repository_rule(
    implementation = _debian_rules_cc_impl,
    attrs = {"path": attr.string(default = "/usr/share/bazel/rules/cc")},
    local = True,
)
