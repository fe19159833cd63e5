#!/usr/bin/python3
"""The backward of GQA and MLA (lab 12) against PyTorch's autograd.

    /usr/bin/python3 tools/perf/variant_backward_vs_torch.py [--rounds 5] [--min_time 0.5]

Builds //bench:variant_backward_bench (optimised, against the solutions:
--config=bench) and, in the same run, alternating so that machine noise hits
both alike, times at T=128 tokens, 8 query heads, d_model 64 and 512, a
causal mask, one thread each:

  * C++ gqa_backward (2 kv heads) and mla_backward (kv_rank = d_model / 8),
    each of which recomputes the forward it needs: a forward and a backward;
  * PyTorch 1.13, float32, torch.set_num_threads(1): y = layer(x) and
    y.backward(d_y), with gradients for x and every weight, the same layer
    written in plain torch ops (GQA: the kv heads repeated with
    repeat_interleave; MLA: c = x @ W_DKV, K = c @ W_UK, V = c @ W_UV).

The C++ numbers are Google Benchmark's (mean time per call, median over the
rounds); PyTorch's are medians of timed steps. It prints the ratio C++ /
PyTorch (target: <= 1.0) in wall and CPU time, checks that both compute the
same gradients (weights are NumpyRng(0) draws, which NumPy reproduces; x and
d_y come from the binary's --dump), and writes
out/perf/variant_backward_vs_torch.json.

Needs Debian's python3-torch and python3-numpy (tools/setup.sh --dev).
"""
import argparse
import os
import sys

import torch_bench  # noqa: F401  (first: one thread for OpenBLAS and torch)
from torch_bench import ROOT, attention, split_heads

import torch  # noqa: E402

TARGET = "//bench:variant_backward_bench"
T, HEADS, KV_HEADS, WIDTHS = 128, 8, 2, (64, 512)
CPP = {"BM_GqaBackward": "cpp_gqa", "BM_MlaBackward": "cpp_mla"}


class TorchGqa(torch_bench.OpsLayer):
    names = ("dW_Q", "dW_K", "dW_V", "dW_O")

    def __init__(self, d):
        dkv = KV_HEADS * (d // HEADS)
        super().__init__(T, [(d, d, d), (d, dkv, d), (d, dkv, d), (d, d, d)])

    def forward(self, x, W_Q, W_K, W_V, W_O):
        group = HEADS // KV_HEADS
        q = split_heads(x @ W_Q, HEADS)
        k = split_heads(x @ W_K, KV_HEADS).repeat_interleave(group, 0)
        v = split_heads(x @ W_V, KV_HEADS).repeat_interleave(group, 0)
        return attention(q, k, v, self.mask).transpose(0, 1).reshape(x.shape) @ W_O


class TorchMla(torch_bench.OpsLayer):
    names = ("dW_Q", "dW_DKV", "dW_UK", "dW_UV", "dW_O")

    def __init__(self, d):
        r = d // 8
        super().__init__(T, [(d, d, d), (d, r, d), (r, d, r), (r, d, r), (d, d, d)])

    def forward(self, x, W_Q, W_DKV, W_UK, W_UV, W_O):
        c = x @ W_DKV
        heads = attention(split_heads(x @ W_Q, HEADS), split_heads(c @ W_UK, HEADS),
                          split_heads(c @ W_UV, HEADS), self.mask)
        return heads.transpose(0, 1).reshape(x.shape) @ W_O


LAYERS = {"gqa": TorchGqa, "mla": TorchMla}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    torch_bench.add_timing_args(ap)
    ap.add_argument("--json", default=os.path.join(ROOT, "out", "perf",
                                                   "variant_backward_vs_torch.json"))
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    binary = args.binary or torch_bench.build(TARGET)

    inputs, errors = {}, {}
    files = torch_bench.dumped(binary)
    for d in WIDTHS:
        x, d_y = files["x_%d" % d].reshape(T, d), files["d_y_%d" % d].reshape(T, d)
        inputs[d] = (x, d_y)
        for kind, cls in LAYERS.items():
            layer = cls(d)
            xt = torch.from_numpy(x.copy()).requires_grad_()
            layer.step(xt, torch.from_numpy(d_y))
            for n, ref in layer.grads(xt).items():
                errors[(kind, d, n)] = torch_bench.relative_diff(files["%s_%s_%d" % (kind, n, d)],
                                                                 ref)

    layers = {("torch_" + k, d): (cls(d), d) for k, cls in LAYERS.items() for d in WIDTHS}
    med, med_cpu = torch_bench.time_alternating(binary, args, CPP, layers, inputs)
    load = os.getloadavg()
    print("T=%d, %d query heads, causal mask, one thread, %d rounds; medians; load average %s"
          % (T, HEADS, args.rounds, " ".join("%.1f" % v for v in load)))
    print("| layer | d_model | C++ wall us | PyTorch wall us | ratio wall | C++ CPU us |"
          " PyTorch CPU us | ratio CPU | max rel grad diff |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    result = {"T": T, "heads": HEADS, "rounds": args.rounds, "load_average": load, "rows": []}
    for kind, label in (("gqa", "gqa_backward (2 kv heads)"), ("mla", "mla_backward (rank d/8)")):
        for d in WIDTHS:
            c, t = med[("cpp_" + kind, d)], med[("torch_" + kind, d)]
            cc, tc = med_cpu[("cpp_" + kind, d)], med_cpu[("torch_" + kind, d)]
            worst = max(v for (k, dd, n), v in errors.items() if k == kind and dd == d)
            print("| %s | %d | %.0f | %.0f | **%.2fx** | %.0f | %.0f | **%.2fx** | %.1e |"
                  % (label, d, c, t, c / t, cc, tc, cc / tc, worst))
            result["rows"].append({"layer": kind, "d_model": d, "cpp_us": c, "torch_us": t,
                                   "cpp_cpu_us": cc, "torch_cpu_us": tc,
                                   "ratio_wall": c / t, "ratio_cpu": cc / tc,
                                   "max_rel_grad_diff": worst})
    torch_bench.write_json(args.json, result)
    return 0 if all(v <= 1e-4 for v in errors.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
