#!/usr/bin/env python3
"""Ratios of lab 11's benchmark (bench/rope_bench.cc), from its JSON output.

    /usr/bin/python3 tools/perf/rope_summary.py out/bench/rope_bench.json

Prints, from CPU time per iteration (user + sys of the one thread), the median
over the alternating rounds of each benchmark and the two ratios the lesson
quotes: RoPE's overhead on lab 3's forward, and a cached decode step against
recomputing the prefix. Also the host's load average when the JSON was written.
"""
import json
import statistics
import sys


def main(path):
    with open(path) as f:
        data = json.load(f)
    times = {}
    for b in data["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration" or b.get("error_occurred"):
            continue
        name = b["name"].split("/round:")[0]
        scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
        times.setdefault(name, []).append(b["cpu_time"] * scale)  # ms
    for need in ["BM_PlainForward", "BM_RotaryForward", "BM_RotaryStep", "BM_RotaryRecompute"]:
        if need not in times:
            sys.exit("rope_summary: no %s in %s (a stub? build with --config=bench)" % (need, path))
    med = {k: statistics.median(v) for k, v in times.items()}
    load = data.get("context", {}).get("load_avg", [])
    print("| benchmark | rounds | median CPU ms |")
    print("| --- | ---: | ---: |")
    for k in ["BM_PlainForward", "BM_RotaryForward", "BM_RotaryStep", "BM_RotaryRecompute"]:
        print("| %s | %d | %.3f |" % (k, len(times[k]), med[k]))
    overhead = med["BM_RotaryForward"] / med["BM_PlainForward"] - 1.0
    speedup = med["BM_RotaryRecompute"] / med["BM_RotaryStep"]
    print()
    print("RoPE overhead on lab 3's forward (T 512, d_model 512, 8 heads): %+.1f%%" % (100 * overhead))
    print("decode step at S 4096 vs recomputing the prefix: %.0fx faster" % speedup)
    if load:
        print("load average: %s" % " ".join("%.1f" % x for x in load))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: rope_summary.py out/bench/rope_bench.json")
    main(sys.argv[1])
