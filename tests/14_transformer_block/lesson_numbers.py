#!/usr/bin/env python3
"""Every number of docs/14_transformer_block.md that no test prints, recomputed.

Run from the repository root with Debian's Python (NumPy and PyTorch):

    /usr/bin/python3 tests/14_transformer_block/lesson_numbers.py

1. LayerNorm's variance on rows offset by 1e3, in float32 added up one value
   at a time (as a plain C++ loop does): two passes against one pass,
   E[x^2] - E[x]^2.
2. GELU: its minimum, and how far the tanh approximation is from the exact
   form (value and derivative).
3. The residual stream through a stack of pre-LN blocks drawn as the lab's
   constructor draws them, seeded as lab 15's model seeds its blocks (seed +
   1000 (l + 1): no two blocks share a draw): how its size grows, and what
   LayerNorm hands each sub-layer.
4. The block's parameter count at the seed course's sizes.
"""
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_goldens as g  # noqa: E402  (the lab's torch block, the API's draws)

F = np.float32


def variance_two_pass(row):
    s = F(0)
    for v in row:
        s = F(s + v)
    mu = F(s / F(len(row)))
    q = F(0)
    for v in row:
        q = F(q + F(F(v - mu) * F(v - mu)))
    return F(q / F(len(row)))


def variance_one_pass(row):
    s, sq = F(0), F(0)
    for v in row:
        s = F(s + v)
        sq = F(sq + F(v * v))
    mu = F(s / F(len(row)))
    return F(F(sq / F(len(row))) - F(mu * mu))


def layer_norm_digits(rows=2000, d=64, offset=1000.0, seed=14, spread=1.0):
    rng = np.random.default_rng(seed)
    x = (spread * rng.standard_normal((rows, d)) + offset).astype(F)
    exact = x.astype(np.float64).var(axis=1)
    two = np.array([variance_two_pass(r) for r in x], np.float64)
    one = np.array([variance_one_pass(r) for r in x], np.float64)
    e2, e1 = np.abs(two - exact) / exact, np.abs(one - exact) / exact
    print("1. %d rows of %d values, %g + %g N(0, 1), float32 added one at a time:" %
          (rows, d, offset, spread))
    print("   two passes: variance off by at most %.1e (median %.1e), relative" %
          (e2.max(), np.median(e2)))
    print("   one pass:   median %.0f%%, worst %.0f%%; %.1f%% of rows off by 30%% or more; "
          "%d rows (%.1f%%) negative, NaN after the square root (eps 1e-5)" %
          (100 * np.median(e1), 100 * e1.max(), 100 * np.mean(e1 >= 0.3),
           np.sum(one + 1e-5 < 0), 100 * np.mean(one + 1e-5 < 0)))
    if spread != 1.0:
        return
    ulp = np.spacing(F(offset * offset))
    print("   the spacing of floats near mu^2 = %g is %g; near the sum of %d squares, %g, "
          "it is %g; near mu = %g it is %g" %
          (offset * offset, ulp, d, d * offset * offset, np.spacing(F(d * offset * offset)),
           offset, np.spacing(F(offset))))


def gelu_numbers():
    x = torch.linspace(-6, 6, 1_200_001, dtype=torch.float64)
    exact = torch.nn.functional.gelu(x)
    tanh = torch.nn.functional.gelu(x, approximate="tanh")
    i = int(torch.argmin(exact))
    print("2. GELU's minimum: %.4f at x = %.4f" % (exact[i], x[i]))
    diff = (tanh - exact).abs()
    j = int(torch.argmax(diff))
    # tanh(x) - exact(x) = x (Phi_tanh(x) - Phi(x)) is even: the same at -x.
    print("   tanh approximation: off by at most %.2e, at x = +-%.2f" % (diff[j], abs(x[j])))
    # kRowOp (common/testing/tolerance.h), the GELU tests' tolerance: 1e-6 + 1e-5 |expected|
    ratio = diff / (1e-6 + 1e-5 * exact.abs())
    r = int(torch.argmax(ratio))
    print("   that is up to %.0f times the tests' tolerance (kRowOp), at x = %.2f" % (ratio[r], x[r]))
    far = torch.linspace(-12, -2, 100_001, dtype=torch.float64)  # |gelu| grows with x here
    tiny = far[torch.nn.functional.gelu(far).abs() < 1e-15]
    print("   |gelu(x)| < 1e-15 for every x below %.2f" % float(tiny.max()))
    xs = x.clone().requires_grad_()
    d_exact = torch.autograd.grad(torch.nn.functional.gelu(xs).sum(), xs)[0]
    d_tanh = torch.autograd.grad(torch.nn.functional.gelu(xs, approximate="tanh").sum(), xs)[0]
    dd = (d_tanh - d_exact).abs()
    k = int(torch.argmax(dd))
    print("   its derivative: off by at most %.2e, at x = +-%.2f" % (dd[k], abs(x[k])))


def rms(t):
    return float(torch.sqrt((t ** 2).mean()))


def residual_stream(n_blocks=8, d=64, H=4, d_ff=256, T=25, seed=14):
    print("3. %d pre-LN blocks (d %d, %d heads, d_ff %d) drawn as TransformerBlock(..., %d + 1000 "
          "(l + 1)), T = %d, x_0 ~ N(0, 1):" % (n_blocks, d, H, d_ff, seed, T))
    x = g.t64(g.common.inputs(seed, T, d))
    ones, zeros = torch.ones(d, dtype=torch.float64), torch.zeros(d, dtype=torch.float64)
    rms_after = []
    for l in range(n_blocks + 1):
        rms_after.append(rms(x))
        if l == n_blocks:
            break
        # Block l draws attention from seed + 1000 (l + 1) and its FFN from the
        # next seed, as lab 15's MiniGpt: seeds l apart would hand block l's
        # W_1 to block l + 1 as its W_Q .. W_O (the same generator's first draws).
        W, (W_1, W_2) = g.weight_draws(seed + 1000 * (l + 1), d, d_ff)
        p = {"ln1_gamma": ones, "ln1_beta": zeros, "ln2_gamma": ones, "ln2_beta": zeros,
             "W_Q": g.t64(W[0]), "W_K": g.t64(W[1]), "W_V": g.t64(W[2]), "W_O": g.t64(W[3]),
             "W_1": g.t64(W_1), "b_1": torch.zeros(d_ff, dtype=torch.float64), "W_2": g.t64(W_2),
             "b_2": zeros}
        x = g.block_forward(x, p, H, 10000.0)
    print("   RMS of the stream after 0..%d blocks: %s" %
          (n_blocks, ", ".join("%.2f" % r for r in rms_after)))
    growth = rms_after[-1] / rms_after[0]
    print("   after %d blocks / before the first: %.1f times the size, %.1f times the scores" %
          (n_blocks, growth, growth ** 2))
    a = g.layer_norm(x, ones, zeros)
    print("   what layer_norm hands the next sub-layer: RMS %.2f (mean %.1e per row)" %
          (rms(a), float(a.mean(-1).abs().max())))


def main():
    layer_norm_digits()
    layer_norm_digits(spread=0.1)
    gelu_numbers()
    residual_stream()
    d, f = 64, 256
    print("4. TransformerBlock(64, 4, 256): 4 * %d + 2 * %d * %d + %d + %d + 4 * %d = %d" %
          (d * d, d, f, f, d, d, 4 * d * d + 2 * d * f + f + d + 4 * d))


if __name__ == "__main__":
    main()
