#!/usr/bin/python3
"""One training step of the layer, C++ (labs 3 and 10) against PyTorch's autograd.

    /usr/bin/python3 tools/perf/backward_vs_torch.py [--rounds 5] [--min_time 0.5]
    /usr/bin/python3 tools/perf/backward_vs_torch.py --keep_freed_memory

Builds //bench:attention_backward_bench (optimised, against the solutions:
--config=bench) and, in the same run, alternating so that machine noise hits
both alike, times at T=128 tokens, 8 heads, d_model 64 and 512, a causal
mask, one thread each:

  * C++ mha_backward(layer, x, mask, d_y) (solutions/10_attention_backward),
    which recomputes the forward it needs: a forward and a backward;
  * C++ layer.forward + mha_backward: a training step with this API, where
    the loss needs y and mha_backward does not return it;
  * C++ layer.forward alone (lab 3);
  * PyTorch 1.13, float32, torch.set_num_threads(1): y = layer(x) and
    y.backward(d_y) with gradients for x and the four weights, through
    torch.nn.MultiheadAttention(bias=False) and through the same layer
    written in plain torch ops (x @ W_Q, view, transpose, softmax, ...).

The C++ numbers are Google Benchmark's (median of the rounds' mean times per
call); PyTorch's are medians of timed calls. It prints the ratio C++ /
fastest PyTorch for both C++ rows (target: <= 1.0), checks that both compute
the same gradients (the layer's weights are NumpyRng(0) draws, which NumPy
reproduces; x and d_y come from the binary's --dump), and writes
out/perf/backward_vs_torch.json. --keep_freed_memory runs both sides with
glibc's heap trimming off (out/perf/backward_vs_torch_kept.json): a step
that frees its buffers otherwise pays page faults to get them back.

Needs Debian's python3-torch and python3-numpy (tools/setup.sh --dev).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# One thread everywhere, set before torch or OpenBLAS start their pools.
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = "//bench:attention_backward_bench"
T, HEADS, WIDTHS = 128, 8, (64, 512)
KEEP = str(256 << 20)
CPP = {"BM_MhaBackward": "cpp_backward", "BM_TrainingStep": "cpp_step", "BM_Forward": "cpp_forward"}


def bazel(args, output_base):
    cmd = ["bazel"] + (["--output_base=" + output_base] if output_base else []) + args
    return subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout


def build(output_base):
    bazel(["build", "--config=bench", TARGET], output_base)
    bin_dir = bazel(["info", "--config=bench", "bazel-bin"], output_base).strip()
    return os.path.join(bin_dir, "bench", "attention_backward_bench")


def layer_weights(d_model):
    """W_Q, W_K, W_V, W_O of MultiHeadAttention(d_model, 8, seed=0), (in, out)."""
    rng = np.random.default_rng(0)
    scale = np.float32(1 / np.sqrt(d_model))
    return [rng.standard_normal((d_model, d_model)).astype(np.float32) * scale for _ in range(4)]


def causal(n):
    return torch.triu(torch.full((n, n), float("-inf")), diagonal=1)


class TorchNN:
    """torch.nn.MultiheadAttention(bias=False) with our weights."""

    def __init__(self, d):
        W_Q, W_K, W_V, W_O = layer_weights(d)
        self.mha = torch.nn.MultiheadAttention(d, HEADS, bias=False, dtype=torch.float32)
        with torch.no_grad():  # torch stores (out, in): transpose ours
            self.mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate([W_Q.T, W_K.T, W_V.T])))
            self.mha.out_proj.weight.copy_(torch.from_numpy(np.ascontiguousarray(W_O.T)))
        self.mask = causal(T)

    def step(self, x, d_y):
        """Forward and backward; x (T, d) requires grad. Returns nothing."""
        self.mha.zero_grad(set_to_none=True)
        x.grad = None
        xb = x[:, None]  # (T, batch=1, d)
        y, _ = self.mha(xb, xb, xb, attn_mask=self.mask, need_weights=False)
        y[:, 0].backward(d_y)

    def grads(self, x):
        d = x.shape[1]
        w = self.mha.in_proj_weight.grad.numpy()
        return {"dx": x.grad.numpy(), "dW_Q": w[:d].T, "dW_K": w[d:2 * d].T, "dW_V": w[2 * d:].T,
                "dW_O": self.mha.out_proj.weight.grad.numpy().T}


class TorchOps:
    """The same layer in plain torch ops, weights (in, out) as ours."""

    def __init__(self, d):
        self.W = [torch.from_numpy(w).requires_grad_() for w in layer_weights(d)]
        self.mask = causal(T)

    def step(self, x, d_y):
        for w in self.W:
            w.grad = None
        x.grad = None
        W_Q, W_K, W_V, W_O = self.W
        d = x.shape[1]
        split = lambda m: m.view(T, HEADS, d // HEADS).transpose(0, 1)  # noqa: E731
        q, k, v = split(x @ W_Q), split(x @ W_K), split(x @ W_V)
        p = torch.softmax(q @ k.transpose(-1, -2) / np.sqrt(d // HEADS) + self.mask, dim=-1)
        y = (p @ v).transpose(0, 1).reshape(T, d) @ W_O
        y.backward(d_y)

    def grads(self, x):
        return {"dx": x.grad.numpy(), **{n: w.grad.numpy() for n, w in
                                         zip(("dW_Q", "dW_K", "dW_V", "dW_O"), self.W)}}


def time_torch(layer, x, d_y, reps):
    """Wall and CPU microseconds of `reps` steps, after two warm-up steps."""
    layer.step(x, d_y)
    layer.step(x, d_y)
    wall, cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        layer.step(x, d_y)
        cpu.append((time.process_time() - c0) * 1e6)
        wall.append((time.perf_counter() - t0) * 1e6)
    return wall, cpu


def run_cpp(binary, min_time):
    """{(name, d): (real us, cpu us)} from one run of the benchmark binary."""
    p = subprocess.run([binary, "--benchmark_format=json", "--benchmark_min_time=%g" % min_time],
                       check=True, capture_output=True, text=True)
    out = {}
    for b in json.loads(p.stdout)["benchmarks"]:
        name, arg = b["name"].split("/")
        d = int(arg.split(":")[1])
        out[(CPP[name], d)] = (b["real_time"], b["cpu_time"])  # microseconds (kMicrosecond)
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="C++ / PyTorch alternations")
    ap.add_argument("--min_time", type=float, default=0.5, help="Google Benchmark seconds per row")
    ap.add_argument("--reps", type=int, default=30, help="timed PyTorch steps per round")
    ap.add_argument("--output_base", help="Bazel --output_base (default: Bazel's own)")
    ap.add_argument("--binary", help="use this benchmark binary instead of building it")
    ap.add_argument("--keep_freed_memory", action="store_true",
                    help="run both sides with glibc's heap trimming off (see below)")
    ap.add_argument("--json", help="default: out/perf/backward_vs_torch[_kept].json")
    args = ap.parse_args(argv)
    # glibc returns freed memory at the top of the heap to the system
    # (M_TRIM_THRESHOLD, which grows only to twice the largest freed mmap
    # chunk), so a process that frees a step's buffers and allocates them
    # again pays page faults for them at every step. With this flag the
    # script re-runs itself, and so the benchmark binary it starts, with
    # both thresholds raised to 256 MiB: freed memory is kept and reused.
    if args.keep_freed_memory and os.environ.get("MALLOC_TRIM_THRESHOLD_") != KEEP:
        env = dict(os.environ, MALLOC_TRIM_THRESHOLD_=KEEP, MALLOC_MMAP_THRESHOLD_=KEEP)
        os.execve(sys.executable, [sys.executable, os.path.abspath(__file__)] + argv, env)
    kept = os.environ.get("MALLOC_TRIM_THRESHOLD_") == KEEP
    if args.json is None:
        args.json = os.path.join(ROOT, "out", "perf",
                                 "backward_vs_torch%s.json" % ("_kept" if kept else ""))

    torch.set_num_threads(1)
    binary = args.binary or build(args.output_base)

    # Same weights, same inputs: same gradients?
    inputs, errors = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([binary, "--dump", tmp], check=True)
        for d in WIDTHS:
            load = lambda n: np.fromfile(os.path.join(tmp, "%s_%d.f32" % (n, d)),  # noqa: E731
                                         np.float32).reshape(-1, d)
            x, d_y = load("x"), load("d_y")
            inputs[d] = (x, d_y)
            for cls in (TorchNN, TorchOps):
                layer = cls(d)
                xt = torch.from_numpy(x.copy()).requires_grad_()
                layer.step(xt, torch.from_numpy(d_y))
                for n, ref in layer.grads(xt).items():
                    err = float(np.max(np.abs(load(n) - ref)) / max(1e-12, np.max(np.abs(ref))))
                    errors[(cls.__name__, d, n)] = err

    layers = {(cls.__name__, d): cls(d) for cls in (TorchNN, TorchOps) for d in WIDTHS}
    wall = {}
    cpu = {}
    for _ in range(args.rounds):
        for key, (real, c) in run_cpp(binary, args.min_time).items():
            wall.setdefault(key, []).append(real)
            cpu.setdefault(key, []).append(c)
        for (name, d), layer in layers.items():
            x, d_y = inputs[d]
            xt = torch.from_numpy(x.copy()).requires_grad_()
            wl, cp = time_torch(layer, xt, torch.from_numpy(d_y), args.reps)
            key = ("torch_nn" if name == "TorchNN" else "torch_ops", d)
            wall.setdefault(key, []).extend(wl)
            cpu.setdefault(key, []).extend(cp)

    med = {k: statistics.median(v) for k, v in wall.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    print("T=%d, %d heads, causal mask, one thread, %d rounds; medians; glibc heap trimming %s;"
          " load average %s" % (T, HEADS, args.rounds, "off (freed memory kept)" if kept else "on (default)",
                                 " ".join("%.1f" % l for l in os.getloadavg())))
    rows = [("C++ mha_backward (a forward and a backward)", "cpp_backward"),
            ("C++ forward + mha_backward (a training step)", "cpp_step"),
            ("C++ forward alone (lab 3)", "cpp_forward"),
            ("PyTorch nn.MultiheadAttention, fwd + bwd", "torch_nn"),
            ("PyTorch plain ops, fwd + bwd", "torch_ops")]
    result = {"T": T, "heads": HEADS, "rounds": args.rounds, "load_average": os.getloadavg(),
              "freed_memory_kept": kept,
              "median_us": {}, "median_cpu_us": {}, "ratios": {}, "max_rel_grad_diff": {}}
    for d in WIDTHS:
        print("\nd_model=%d %44s %10s" % (d, "wall us", "CPU us"))
        for label, key in rows:
            print("  %-50s %10.0f %10.0f" % (label, med[(key, d)], med_cpu[(key, d)]))
            result["median_us"]["%s_%d" % (key, d)] = med[(key, d)]
            result["median_cpu_us"]["%s_%d" % (key, d)] = med_cpu[(key, d)]
        best = min(med[("torch_nn", d)], med[("torch_ops", d)])
        best_cpu = min(med_cpu[("torch_nn", d)], med_cpu[("torch_ops", d)])
        for label, key in rows[:2]:
            r, rc = med[(key, d)] / best, med_cpu[(key, d)] / best_cpu
            result["ratios"]["%s_%d" % (key, d)] = {"wall": r, "cpu": rc}
            print("  %s / fastest PyTorch: %.2fx wall, %.2fx CPU (target <= 1.0): %s"
                  % (label.split(" (")[0], r, rc, "met" if r <= 1.0 else "NOT met"))
        worst = max(v for (c, dd, n), v in errors.items() if dd == d)
        result["max_rel_grad_diff"][str(d)] = worst
        print("  same gradients as PyTorch: max |diff| / max |grad| = %.1e over dx, dW_Q..dW_O"
              % worst)

    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
    return 0 if all(v <= 1e-4 for v in errors.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
