"""./lab bench: the benchmarks of the reference solutions, their JSON and charts.

    ./lab bench                       build (-c opt, --config=solutions), run, draw
    ./lab bench --filter Batched      only benchmarks whose name matches
    ./lab bench --repetitions 9       more repetitions (medians are reported)

Runs //bench:attention_bench (lab 2: loop vs batched, 1..16 heads),
//bench:layer_bench (lab 3: the layer over 1..16 heads) and
//bench:variants_bench (labs 5, 6: MHA, GQA, MQA, MLA naive and absorbed, and
their KV-cache bytes per token) with OPENBLAS_NUM_THREADS=1. Writes Google
Benchmark's JSON to out/bench/<name>.json, the tables to out/bench/summary.md,
and draws docs/images/heads_sweep.png and docs/images/kv_cache.png with
tools/plot/draw_chart.py (matplotlib). Benchmarks are programs, not tests:
nothing here passes or fails on a time. See docs/PERFORMANCE.md.
"""
import json
import os
import subprocess
import sys

from labs import ROOT
from progress import BAZEL_UI_FLAGS, run_bazel

BENCHES = ["attention_bench", "layer_bench", "variants_bench", "kv_cache_bench",
           "flash_attention_bench", "attention_backward_bench"]
# Charts drawn with matplotlib by a lab's own script from its benchmark's JSON
# (tools/setup.sh installs python3-matplotlib): {benchmark: argv after python3}.
PLOTS = {
    "kv_cache_bench": ["tools/perf/kv_cache_plot.py", "out/bench/kv_cache_bench.json",
                       "docs/images/kv_cache_decode.png", "--markdown",
                       "out/bench/kv_cache_summary.md"],
    "flash_attention_bench": ["tools/perf/flash_attention.py", "--json",
                              "out/bench/flash_attention_bench.json"],
}
OUT = os.path.join(ROOT, "out", "bench")
IMAGES = os.path.join(ROOT, "docs", "images")


def _bazel(args, startup, capture=False, what=None):
    cmd = ["bazel"] + startup + args
    if what:   # Bazel's progress as lines with the time so far (tools/lab/progress.py)
        rc, _ = run_bazel(["bazel"] + startup + args[:1] + BAZEL_UI_FLAGS + args[1:], what, ROOT)
        if rc != 0:
            raise SystemExit("bench: `%s` failed (exit %d)" % (" ".join(cmd), rc))
        return ""
    p = subprocess.run(cmd, cwd=ROOT, text=True,
                       stdout=subprocess.PIPE if capture else None)
    if p.returncode != 0:
        raise SystemExit("bench: `%s` failed (exit %d)" % (" ".join(cmd), p.returncode))
    return p.stdout


def medians(path):
    """{run_name: median aggregate entry} from one Google Benchmark JSON file."""
    with open(path) as f:
        data = json.load(f)
    out = {}
    for b in data.get("benchmarks", []):
        if b.get("error_occurred"):
            out[b.get("run_name", b["name"])] = {"error": b.get("error_message", "error")}
        elif b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median":
            out[b["run_name"]] = b
        elif b.get("run_type") == "iteration" and b["run_name"] not in out:
            out[b["run_name"]] = b  # a single repetition has no aggregates
    return out, data.get("context", {})


def _ms(entry):
    """CPU time per call in ms. The benchmarks are single-threaded, so CPU time
    is the work done; wall time also counts whatever else the (often shared)
    machine was running. Both are in the JSON."""
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[entry.get("time_unit", "ns")]
    return entry["cpu_time"] * scale


def _heads_rows(results):
    """[(series, heads, ms)] for the heads-sweep chart and table."""
    series = [("attention_loop (lab 2)", "attention_bench", "BM_AttentionLoop"),
              ("attention_batched (lab 2)", "attention_bench", "BM_AttentionBatched"),
              ("batched by broadcasting, no BLAS", "attention_bench", "BM_AttentionBroadcast"),
              ("MultiHeadAttention::forward (lab 3)", "layer_bench", "BM_LayerForward")]
    rows = []
    for label, bench, prefix in series:
        for heads in (1, 2, 4, 8, 16):
            e = results.get(bench, {}).get("%s/heads:%d" % (prefix, heads))
            if e and "error" not in e:
                rows.append((label, heads, _ms(e), e.get("FLOPS", 0) / 1e9))
    return rows


_VARIANT_LABELS = [
    ("BM_Forward/MHA/kv_heads:8", "MHA (8 kv heads)"),
    ("BM_Forward/GQA/kv_heads:4", "GQA (4 kv heads)"),
    ("BM_Forward/GQA/kv_heads:2", "GQA (2 kv heads)"),
    ("BM_Forward/MQA/kv_heads:1", "MQA (1 kv head)"),
    ("BM_Forward/MLA_naive/rank:128", "MLA naive (rank 128)"),
    ("BM_Forward/MLA_absorbed/rank:128", "MLA absorbed (rank 128)"),
]


def _variant_rows(results):
    rows = []
    for name, label in _VARIANT_LABELS:
        e = results.get("variants_bench", {}).get(name)
        if e and "error" not in e:
            rows.append({"label": label, "ms": _ms(e), "gflops": e.get("FLOPS", 0) / 1e9,
                         "mflop": e.get("MFLOP", 0),
                         "bytes": int(e["kv_bytes_per_token"]),
                         "floats": int(e["kv_floats_per_token"]), "params": int(e["params"])})
        elif e:
            rows.append({"label": label, "error": e["error"]})
    return rows


def summary_markdown(results, context):
    lines = ["Measured by `./lab bench` on %s (%s CPUs at %s MHz, load average %s), one "
             "OpenBLAS thread; CPU time per call, median of the repetitions." % (
                 context.get("host_name", "?"), context.get("num_cpus", "?"),
                 context.get("mhz_per_cpu", "?"),
                 " ".join("%.1f" % l for l in context.get("load_avg", []))), ""]
    heads = _heads_rows(results)
    if heads:
        lines += ["### Heads sweep: d_model = 512, T = 256", "",
                  "| heads | d_head | attention_loop ms | attention_batched ms "
                  "| broadcast (no BLAS) ms | layer forward ms |",
                  "| ---: | ---: | ---: | ---: | ---: | ---: |"]
        by = {(s, h): ms for s, h, ms, _ in heads}
        for h in (1, 2, 4, 8, 16):
            cells = [by.get((s, h)) for s in ("attention_loop (lab 2)",
                                              "attention_batched (lab 2)",
                                              "batched by broadcasting, no BLAS",
                                              "MultiHeadAttention::forward (lab 3)")]
            lines.append("| %d | %d | %s |" % (h, 512 // h, " | ".join(
                "%.2f" % c if c is not None else "-" for c in cells)))
        lines.append("")
    variants = _variant_rows(results)
    if variants:
        mha = next((r for r in variants if r["label"].startswith("MHA") and "bytes" in r), None)
        lines += ["### Attention variants: d_model = 512, 8 query heads, T = 256", "",
                  "| variant | forward ms | MFLOP | GFLOP/s | parameters "
                  "| KV cache floats/token | bytes/token | smaller than MHA |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in variants:
            if "error" in r:
                lines.append("| %s | %s | | | | | | |" % (r["label"], r["error"]))
                continue
            ratio = "%.1fx" % (mha["bytes"] / r["bytes"]) if mha else "-"
            lines.append("| %s | %.2f | %.0f | %.1f | %d | %d | %d | %s |" % (
                r["label"], r["ms"], r["mflop"], r["gflops"], r["params"], r["floats"],
                r["bytes"], ratio))
        lines.append("")
    return "\n".join(lines)


def _draw_chart(spec, png):
    """Writes spec (tools/plot/draw_chart.py's format) beside png and draws it."""
    path = os.path.join(OUT, os.path.splitext(os.path.basename(png))[0] + ".json")
    with open(path, "w") as f:
        json.dump(spec, f, indent=1, sort_keys=True)
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "plot", "draw_chart.py"), path],
                   check=True, stdout=subprocess.DEVNULL)
    os.replace(os.path.splitext(path)[0] + ".png", png)


def draw(results):
    os.makedirs(IMAGES, exist_ok=True)
    drawn = []
    # The broadcast series is 10-50x slower: it would flatten the others, so
    # it stays in the table only.
    heads = [r for r in _heads_rows(results) if "broadcast" not in r[0]]
    if heads:
        counts = sorted({h for _, h, _, _ in heads})
        series = {}
        for s, h, ms, _ in heads:
            series.setdefault(s, ([], []))
            series[s][0].append(counts.index(h))
            series[s][1].append(ms)
        png = os.path.join(IMAGES, "heads_sweep.png")
        _draw_chart({"kind": "lines", "title": "Heads at fixed d_model=512, T=256 (one thread)",
                     "x_label": "heads (d_head = 512 / heads)",
                     "y_label": "CPU ms per call (median)",
                     "x_ticks": list(range(len(counts))), "x_tick_labels": [str(h) for h in counts],
                     "series": [{"label": s, "x": x, "y": y, "style": "line+points"}
                                for s, (x, y) in series.items()]}, png)
        drawn.append(png)
    variants = [r for r in _variant_rows(results)
                if "error" not in r and not r["label"].startswith("MLA absorbed")]
    if variants:
        mha = variants[0]["bytes"]
        bars = []
        for r in variants:
            smaller = ("baseline" if r["bytes"] == mha
                       else "%.0fx smaller" % (mha / r["bytes"]))
            bars.append({"label": r["label"].replace("MLA naive", "MLA"), "value": r["bytes"],
                         "note": "%d B  (%s)  forward %.1f ms" % (r["bytes"], smaller, r["ms"])})
        png = os.path.join(IMAGES, "kv_cache.png")
        _draw_chart({"kind": "bars", "title": "KV cache per token, one layer (d_model=512, 8 heads)",
                     "x_label": "bytes per token (float32)",
                     "groups": [{"title": "", "bars": bars}]}, png)
        drawn.append(png)
    return drawn


def main(args):
    startup = ["--output_base=" + args.output_base] if args.output_base else []
    targets = ["//bench:%s" % b for b in BENCHES]
    print("bench: building %s with --config=bench (-c opt, solutions)" % " ".join(targets))
    sys.stdout.flush()
    _bazel(["build", "--config=bench"] + targets, startup, what="bench: building")
    bin_dir = _bazel(["info", "--config=bench", "bazel-bin"], startup, capture=True).strip()
    os.makedirs(OUT, exist_ok=True)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    results, context = {}, {}
    for i, name in enumerate(BENCHES, 1):
        out = os.path.join(OUT, name + ".json")
        cmd = [os.path.join(bin_dir, "bench", name),
               "--benchmark_out=" + out, "--benchmark_out_format=json",
               "--benchmark_repetitions=%d" % args.repetitions,
               "--benchmark_min_time=%g" % args.min_time,
               "--benchmark_report_aggregates_only=true"]
        if args.filter:
            cmd.append("--benchmark_filter=" + args.filter)
        print("bench: %d / %d: " % (i, len(BENCHES)) + " ".join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else c
                                   for c in cmd))
        sys.stdout.flush()
        subprocess.run(cmd, env=env, check=True)
        results[name], context = medians(out)
    summary = summary_markdown(results, context)
    with open(os.path.join(OUT, "summary.md"), "w") as f:
        f.write(summary + "\n")
    print(summary)
    if not args.no_images:
        for png in draw(results):
            print("bench: drew " + os.path.relpath(png, ROOT))
        for name, argv in PLOTS.items():
            if name not in results:
                continue
            p = subprocess.run(["/usr/bin/python3"] + argv, cwd=ROOT)
            if p.returncode != 0:
                print("bench: %s did not draw (is python3-matplotlib installed? "
                      "tools/setup.sh)" % argv[0])
    print("bench: JSON and tables in " + os.path.relpath(OUT, ROOT))
    return 0


def add_parser(sub):
    b = sub.add_parser("bench", help="run the benchmarks (-c opt, reference solutions), "
                       "write out/bench/*.json and draw docs/images/*.png")
    b.add_argument("--filter", help="only benchmarks matching this regex "
                   "(Google Benchmark's --benchmark_filter)")
    b.add_argument("--repetitions", type=int, default=5,
                   help="repetitions per benchmark; medians are reported (default 5)")
    b.add_argument("--min-time", type=float, default=0.2,
                   help="seconds per repetition (default 0.2)")
    b.add_argument("--no-images", action="store_true", help="do not redraw docs/images/")
    b.add_argument("--output_base", help="Bazel --output_base to build in (default: Bazel's)")
    b.set_defaults(func=main)
    return b
