#!/usr/bin/env python3
"""Lab 8's chart and table from //bench:kv_cache_bench's JSON.

    OPENBLAS_NUM_THREADS=1 bazel-bin/bench/kv_cache_bench \\
        --benchmark_out=out/bench/kv_cache_bench.json --benchmark_out_format=json \\
        --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
    /usr/bin/python3 tools/perf/kv_cache_plot.py out/bench/kv_cache_bench.json \\
        docs/images/kv_cache_decode.png [--markdown out/bench/kv_cache_summary.md]

Draws two panels: the CPU time of one generated token against the prefix
length S (log-log), with the cache (BM_CachedStep) and by recomputing the
whole prefix (BM_Recompute), for MHA, GQA and MLA; and the bytes each
variant's cache holds at S. Prints (and with --markdown writes) the table of
docs/PERFORMANCE.md: both times, their ratio, and the cache sizes. Times are
medians over repetitions when the JSON has them. Needs Debian's
python3-matplotlib (tools/setup.sh).
"""
import argparse
import os
import sys

# The Google Benchmark JSON reader of ./lab bench (tools/lab/course/bench.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "lab"))
from course.bench import medians  # noqa: E402

VARIANTS = ["MHA", "GQA", "MLA"]
LABELS = {"MHA": "MHA (8 kv heads)", "GQA": "GQA (2 kv heads)", "MLA": "MLA (rank 64)"}
COLOURS = {"MHA": "#0072B2", "GQA": "#E69F00", "MLA": "#009E73"}  # Okabe-Ito


def load(path):
    """{(kind, variant, S): entry}: medians when there are repetitions."""
    entries, context = medians(path)
    out = {}
    for run, b in entries.items():
        if "error" in b:
            raise SystemExit("%s: %s failed: %s" % (path, run, b["error"]))
        kind, variant, size = run.split("/")  # BM_CachedStep/MHA/S:64
        out[(kind[3:], variant, int(size[2:]))] = b
    return out, context


def cpu_ms(entry):
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[entry.get("time_unit", "ns")]
    return entry["cpu_time"] * scale


def table(results, context):
    sizes = sorted({s for (_, _, s) in results})
    lines = ["Measured by `bench/kv_cache_bench` on %s (%s CPUs, load average %s), one OpenBLAS "
             "thread, CPU time per generated token, median of the repetitions; d_model 512, "
             "8 query heads." % (context.get("host_name", "?"), context.get("num_cpus", "?"),
                                 " ".join("%.1f" % l for l in context.get("load_avg", []))), "",
             "| S | " + " | ".join("%s cached ms | %s recompute ms | speed-up" % (v, v)
                                   for v in VARIANTS) + " |",
             "| ---: |" + " ---: | ---: | ---: |" * len(VARIANTS)]
    for s in sizes:
        cells = []
        for v in VARIANTS:
            c, r = results.get(("CachedStep", v, s)), results.get(("Recompute", v, s))
            if c and r:
                cells += ["%.3f" % cpu_ms(c), "%.1f" % cpu_ms(r), "**%.0fx**" % (cpu_ms(r) / cpu_ms(c))]
            else:
                cells += ["-", "-", "-"]
        lines.append("| %d | %s |" % (s, " | ".join(cells)))
    lines += ["", "| variant | cache bytes per token (one layer, float32) | at S = %d | vs MHA |"
              % sizes[-1], "| --- | ---: | ---: | ---: |"]
    mha = results[("CachedStep", "MHA", sizes[-1])]["cache_bytes_per_token"]
    for v in VARIANTS:
        e = results[("CachedStep", v, sizes[-1])]
        lines.append("| %s | %d | %.0f KiB | 1/%.0f |" % (
            LABELS[v], e["cache_bytes_per_token"], e["cache_bytes"] / 1024,
            mha / e["cache_bytes_per_token"]))
    return "\n".join(lines)


def draw(results, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted({s for (_, _, s) in results})
    fig, (ax_t, ax_b) = plt.subplots(1, 2, figsize=(12, 4.8))
    for v in VARIANTS:
        cached = [cpu_ms(results[("CachedStep", v, s)]) for s in sizes]
        recompute = [cpu_ms(results[("Recompute", v, s)]) for s in sizes]
        ax_t.plot(sizes, recompute, "--o", color=COLOURS[v], label=LABELS[v] + ", recompute prefix")
        ax_t.plot(sizes, cached, "-s", color=COLOURS[v], label=LABELS[v] + ", KV cache")
        cache = [results[("CachedStep", v, s)]["cache_bytes"] / 1024 for s in sizes]
        ax_b.plot(sizes, cache, "-s", color=COLOURS[v], label=LABELS[v])
    s = sizes[-1]
    ratio = cpu_ms(results[("Recompute", "MHA", s)]) / cpu_ms(results[("CachedStep", "MHA", s)])
    ax_t.annotate("%.0fx" % ratio, xy=(s, cpu_ms(results[("CachedStep", "MHA", s)])),
                  xytext=(-40, 40), textcoords="offset points",
                  arrowprops={"arrowstyle": "->", "color": "grey"})
    for ax in (ax_t, ax_b):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(sizes)
        ax.set_xticklabels([str(x) for x in sizes])
        ax.set_xlabel("prefix length S (tokens)")
        ax.grid(True, which="major", alpha=0.3)
    ax_t.set_ylabel("CPU ms per generated token (median)")
    ax_t.set_title("One new token: KV cache vs recomputing the prefix")
    ax_t.legend(fontsize=7, loc="upper left")
    ax_b.set_ylabel("KiB held by the cache (one layer, float32)")
    ax_b.set_title("Cache size at S")
    ax_b.legend(fontsize=8, loc="upper left")
    fig.suptitle("Lab 8: d_model = 512, 8 query heads, one thread", fontsize=10)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    # No "Software" entry in the PNG: the file depends on the numbers only.
    fig.savefig(png, dpi=100, metadata={"Software": None})
    plt.close(fig)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("json", help="Google Benchmark JSON of //bench:kv_cache_bench")
    p.add_argument("png", help="the chart to write, e.g. docs/images/kv_cache_decode.png")
    p.add_argument("--markdown", help="also write the table to this file")
    args = p.parse_args(argv)
    results, context = load(args.json)
    text = table(results, context)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    draw(results, args.png)
    print("kv_cache_plot: drew " + args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
