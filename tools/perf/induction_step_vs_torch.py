#!/usr/bin/python3
"""One training step of lab 13's two-layer model, C++ against PyTorch's autograd.

    /usr/bin/python3 tools/perf/induction_step_vs_torch.py [--rounds 7] [--min_time 0.5]

Builds //bench:induction_step_bench (optimised, against the solutions:
--config=bench) and, in the same run, alternating round by round so that
machine noise hits both alike, times one step of grow_induction_heads'
default model, AttentionOnlyTransformer(vocab 64, d_model 32, 4 heads,
2 layers, seed 0), on a batch of 16 sequences of T = 24, one thread each:

  * C++: loss_and_grads on each of the 16 sequences (solutions/13_induction_heads);
  * PyTorch 1.13, float32, torch.set_num_threads(1): the same model in torch
    ops on the whole batch at once ((16, 24) tokens: embeddings, two causal
    attention layers with the residual, unembedding, cross-entropy), then
    loss.backward() for every weight.

Both sides time forward + loss + gradients (no optimiser update). C++ times
are Google Benchmark's CPU time (median over rounds); PyTorch's are the
median over rounds of process CPU time per step. It checks that both compute
the same summed loss on the same weights (NumpyRng draws, which NumPy
reproduces) and prints the ratio C++ / PyTorch (target: <= 1.5).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = "//bench:induction_step_bench"
VOCAB, BLOCK, BATCH, D, HEADS, LAYERS, SEED = 64, 12, 16, 32, 4, 2, 0


def weights(rng, rows, cols, fan_in):
    return rng.standard_normal((rows, cols)).astype(np.float32) * np.float32(1 / np.sqrt(fan_in))


def model_params():
    rng = np.random.default_rng(SEED + 1)
    p = {"embed": weights(rng, VOCAB, D, 1), "pos": weights(rng, 2 * BLOCK, D, 1),
         "unembed": weights(rng, D, VOCAB, D)}
    for l in range(LAYERS):
        r = np.random.default_rng(SEED + 1000 * l)
        for n in "QKVO":
            p["W_%s_%d" % (n, l)] = weights(r, D, D, D)
    return {k: torch.tensor(v, requires_grad=True) for k, v in p.items()}


def batch():
    inputs = [[(7 * b + 5 * i) % VOCAB for i in range(BLOCK)] * 2 for b in range(BATCH)]
    targets = [row[1:] + [-1] for row in inputs]
    return torch.tensor(inputs), torch.tensor(targets)


def step(p, inputs, targets, mask, sum_loss=False):
    B, T = inputs.shape
    dh = D // HEADS
    x = p["embed"][inputs] + p["pos"][:T]  # (B, T, D)
    for l in range(LAYERS):
        def heads(w):
            return (x @ p[w % l]).view(B, T, HEADS, dh).transpose(1, 2)  # (B, H, T, dh)
        q, k, v = heads("W_Q_%d"), heads("W_K_%d"), heads("W_V_%d")
        a = torch.softmax(q @ k.transpose(-1, -2) / dh ** 0.5 + mask, dim=-1)
        o = (a @ v).transpose(1, 2).reshape(B, T, D)
        x = x + o @ p["W_O_%d" % l]
    logits = x @ p["unembed"]  # (B, T, V)
    # Per sequence: the mean over its scored positions, as loss_and_grads.
    ce = torch.nn.functional.cross_entropy(logits.reshape(B * T, VOCAB), targets.reshape(-1),
                                           ignore_index=-1, reduction="none").view(B, T)
    per_seq = ce.sum(1) / (targets >= 0).sum(1)
    loss = per_seq.sum()
    if sum_loss:
        return loss
    for t in p.values():
        t.grad = None
    loss.backward()
    return loss


def torch_round(p, inputs, targets, mask, min_time):
    n, t0 = 0, time.process_time()
    while True:
        step(p, inputs, targets, mask)
        n += 1
        el = time.process_time() - t0
        if el >= min_time:
            return el / n * 1e6  # us per step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--min_time", type=float, default=0.5)
    args = ap.parse_args()
    torch.set_num_threads(1)
    subprocess.run(["bazel", "build", "--config=bench", TARGET], cwd=ROOT, check=True,
                   capture_output=True)
    binary = os.path.join(ROOT, "bazel-bin", "bench", "induction_step_bench")
    p = model_params()
    inputs, targets = batch()
    T = inputs.shape[1]
    mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "loss.txt")
        subprocess.run([binary, "--dump", dump], check=True)
        cpp_loss = float(open(dump).read())
    with torch.no_grad():
        torch_loss = step(p, inputs, targets, mask, sum_loss=True).item()
    print("summed loss over the batch: C++ %.6f, PyTorch %.6f" % (cpp_loss, torch_loss))
    if abs(cpp_loss - torch_loss) > 1e-3 * abs(torch_loss):
        sys.exit("the two sides compute different losses: not the same model")
    cpp, tor = [], []
    for r in range(args.rounds):
        out = subprocess.run([binary, "--benchmark_format=json",
                              "--benchmark_min_time=%g" % args.min_time],
                             check=True, capture_output=True, text=True).stdout
        cpp.append(json.loads(out)["benchmarks"][0]["cpu_time"])
        tor.append(torch_round(p, inputs, targets, mask, args.min_time))
        print("round %d: C++ %.0f us, PyTorch %.0f us" % (r + 1, cpp[-1], tor[-1]))
    c, t = statistics.median(cpp), statistics.median(tor)
    print("median CPU time per step (16 sequences of T=24): C++ %.0f us, PyTorch %.0f us, "
          "ratio C++/PyTorch %.2fx (target <= 1.5)" % (c, t, c / t))
    print("load average: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
