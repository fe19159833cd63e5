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
import os
import sys

import torch_bench  # noqa: F401  (first: one thread for OpenBLAS and torch)
from torch_bench import ROOT, causal

import numpy as np  # noqa: E402
import torch  # noqa: E402

TARGET = "//bench:attention_backward_bench"
T, HEADS, WIDTHS = 128, 8, (64, 512)
KEEP = str(256 << 20)
CPP = {"BM_MhaBackward": "cpp_backward", "BM_TrainingStep": "cpp_step", "BM_Forward": "cpp_forward"}


def layer_weights(d_model):
    """W_Q, W_K, W_V, W_O of MultiHeadAttention(d_model, 8, seed=0), (in, out)."""
    return torch_bench.numpy_rng_draws([(d_model, d_model, d_model)] * 4)


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


class TorchOps(torch_bench.OpsLayer):
    """The same layer in plain torch ops, weights (in, out) as ours."""

    names = ("dW_Q", "dW_K", "dW_V", "dW_O")

    def __init__(self, d):
        super().__init__(T, [(d, d, d)] * 4)

    def forward(self, x, W_Q, W_K, W_V, W_O):
        q, k, v = (torch_bench.split_heads(x @ W, HEADS) for W in (W_Q, W_K, W_V))
        return torch_bench.attention(q, k, v, self.mask).transpose(0, 1).reshape(x.shape) @ W_O


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    torch_bench.add_timing_args(ap)
    ap.add_argument("--output_base", help="Bazel --output_base (default: Bazel's own)")
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
    binary = args.binary or torch_bench.build(TARGET, args.output_base)

    # Same weights, same inputs: same gradients?
    inputs, errors = {}, {}
    files = torch_bench.dumped(binary)
    for d in WIDTHS:
        x, d_y = files["x_%d" % d].reshape(T, d), files["d_y_%d" % d].reshape(T, d)
        inputs[d] = (x, d_y)
        for cls in (TorchNN, TorchOps):
            layer = cls(d)
            xt = torch.from_numpy(x.copy()).requires_grad_()
            layer.step(xt, torch.from_numpy(d_y))
            for n, ref in layer.grads(xt).items():
                errors[(cls.__name__, d, n)] = torch_bench.relative_diff(files["%s_%d" % (n, d)],
                                                                         ref)

    layers = {(key, d): (cls(d), d) for key, cls in (("torch_nn", TorchNN), ("torch_ops", TorchOps))
              for d in WIDTHS}
    med, med_cpu = torch_bench.time_alternating(binary, args, CPP, layers, inputs)
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

    torch_bench.write_json(args.json, result)
    return 0 if all(v <= 1e-4 for v in errors.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
