"""benchmark(): one Google Benchmark program of bench/ (see bench/BUILD)."""

load("@rules_cc//cc:defs.bzl", "cc_binary")

def benchmark(name, deps, inputs = True):
    """The program <name> (<name>.cc) with Google Benchmark's main(), and the
    shared seeded inputs (bench_inputs.h) unless `inputs` is False."""
    cc_binary(
        name = name,
        srcs = [name + ".cc"],
        deps = ([":bench_inputs"] if inputs else []) + deps + ["@system//:benchmark"],
    )
