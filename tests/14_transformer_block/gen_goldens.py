#!/usr/bin/env python3
"""Goldens for lab 14 (14_transformer_block): LayerNorm, GELU, the FFN, RoPE's
backward, the rotary layer's backward and the pre-LN block.

Run from the repository root with Debian's Python:

    /usr/bin/python3 tests/14_transformer_block/gen_goldens.py

Writes tests/14_transformer_block/golden/*.npy (hidden) and
labs/14_transformer_block/golden/*.npy (public), float32. Every number comes
from PyTorch in float64, independently of the C++ code: torch.nn.LayerNorm,
torch.nn.functional.gelu (exact, approximate="none"), the rotation as Hugging
Face's Llama writes it (lab 11's generator: cos_sin, apply_rotary_pos_emb),
attention in torch ops (common.torch_attention_autograd); every gradient is
autograd's, of sum(output * d_output) for a random d_output.

Files of a case <c> (the arrays a test feeds, then what it compares):
  ln       <c>_x, _gamma, _beta, _dy; _y, _dx, _dgamma, _dbeta      (eps 1e-5, or <c>_eps)
  gelu     <c>_x, _dy; _y, _dx
  ffn      <c>_W_1, _W_2 (the constructor's draws), _b_1, _b_2 (set by the test), _x, _dy;
           _y, _dx, _dW_1, _db_1, _dW_2, _db_2
  rope     <c>_d (H, T, d_head); _dx = rope_backward(d, start, base)
  attn     <c>_W_Q.._W_O (draws), _x, _dy; _dx, _dW_Q, _dW_K, _dW_V, _dW_O      (causal)
  block    <c>_W_Q.._W_O, _W_1, _W_2 (draws), _ln1_gamma, _ln1_beta, _ln2_gamma, _ln2_beta,
           _b_1, _b_2 (set by the test), _x, _dy; _y, _weights (H, T, T) and every field of
           BlockGrads: _dln1_gamma .. _db_2, _dx
Sizes, seeds, starts and bases are in main() (and mirrored in the tests' cases).

Beside a right answer, <name>_mistake_<m>.npy holds what the classic mistake m
computes instead (docs/14_transformer_block.md, "Classic mistakes"; the names
are those of labs/14_transformer_block/transformer_block_test_util.h):

  unbiased_variance      LayerNorm dividing the squared distances by d - 1
  dgamma_not_summed      dgamma (and dbeta) of the last row only, not summed over rows
  tanh_gelu              GELU's tanh approximation (forward and backward)
  rope_backward_forward  RoPE's backward turning by +p theta_i (the forward's way)
  rope_backward_missing  dq and dk passed back unrotated
  residual1_fork_dropped dx = layer_norm_backward(...).dx: the path around attention dropped
  residual2_fork_dropped dh = layer_norm_backward(...).dx: the path around the FFN dropped
  post_ln                the original Transformer's order: LN after each residual sum

(LayerNorm's one-pass variance, E[x^2] - E[x]^2, has no golden: what it gives
depends on float rounding. The tests recognise it by comparison: wrong on rows
offset by 1e3, right on the same rows moved back to 0.)
"""
import importlib.util
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "goldens"))
import common  # noqa: E402  (tools/goldens/common.py)

# Lab 11's rotation (Hugging Face Llama's, half-split pairs), reused as it is.
_spec = importlib.util.spec_from_file_location(
    "rope_goldens", os.path.join(HERE, "..", "11_rotary_embeddings", "gen_goldens.py"))
rope11 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rope11)

HIDDEN = common.golden_dir(__file__)
PUBLIC = common.public_golden_dir(__file__)
EPS = 1e-5
t64 = common.t64


# ------------------------------------------------------------------ pieces

def layer_norm(x, gamma, beta, eps=EPS, mistake=None):
    """torch.nn.LayerNorm over the last axis (biased variance), float64 torch."""
    if mistake == "unbiased_variance":
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).sum(-1, keepdim=True) / (x.shape[-1] - 1)
        return (x - mu) / torch.sqrt(var + eps) * gamma + beta
    ln = torch.nn.LayerNorm(x.shape[-1], eps=eps)
    with torch.no_grad():
        ln.weight.copy_(gamma)
        ln.bias.copy_(beta)
    # functional form with the module's parameters replaced by ours (autograd reaches them)
    return torch.nn.functional.layer_norm(x, ln.normalized_shape, gamma, beta, ln.eps)


def gelu(x, mistake=None):
    return torch.nn.functional.gelu(x, approximate="tanh" if mistake == "tanh_gelu" else "none")


def ffn(x, W_1, b_1, W_2, b_2, mistake=None):
    return gelu(x @ W_1 + b_1, mistake) @ W_2 + b_2


def rotate(x, start, base, way=1):
    """x (H, T, d) torch rotated at positions start + t (way -1: the opposite turn)."""
    cos, sin = rope11.cos_sin(np.arange(start, start + x.shape[-2]), x.shape[-1], base)
    return rope11.apply_rotary_pos_emb(x, cos, way * sin)


def rotary_heads(x, W, H, base):
    """q, k rotated (start 0) and v, (H, T, d_head) each."""
    q, k, v = (common.split_heads(x @ w, H) for w in W[:3])
    return rotate(q, 0, base), rotate(k, 0, base), v


def rotary_attention(x, W, H, base, mask):
    q, k, v = rotary_heads(x, W, H, base)
    return common.combine_heads(common.torch_attention_autograd(q, k, v, mask)) @ W[3]


def leaves(arrays):
    return [t64(a).requires_grad_() for a in arrays]


def grads_of(out, inputs, d_out):
    return [g.numpy() for g in torch.autograd.grad(out, inputs, t64(d_out))]


def weight_draws(seed, d, d_ff):
    """The block's draws: attention's four from seed, the FFN's two from seed + 1."""
    W = common.draws(seed, d)
    rng = np.random.default_rng(seed + 1)
    return W, [common.weights(rng, d, d_ff, d), common.weights(rng, d_ff, d, d_ff)]


def save_all(out, case, arrays):
    for name, a in arrays.items():
        assert np.all(np.isfinite(a)), (case, name)
        common.save(out, case + "_" + name, a)


def save_mistakes(out, case, right, wrong, names):
    """<case>_<g>_mistake_<m> for each gradient or output g that mistake m changes."""
    for g in names:
        assert not np.allclose(wrong[g], right[g], rtol=1e-3, atol=1e-4), (case, g)
        common.save(out, "%s_%s_mistake_%s" % (case, g, wrong["name"]), wrong[g])


# ------------------------------------------------------------------ cases

def ln_case(out, c, T, d, seed, offset=0.0, eps=EPS):
    x = common.inputs(seed, T, d) + np.float32(offset)
    gamma = (1.0 + 0.5 * common.inputs(seed + 1, d)).astype(np.float32)
    beta = common.inputs(seed + 2, d, scale=0.5)
    dy = common.inputs(seed + 3, T, d)
    save_all(out, c, {"x": x, "gamma": gamma, "beta": beta, "dy": dy})
    if eps != EPS:
        common.save(out, c + "_eps", np.array([eps]))

    def run(mistake=None):
        xs, g, b = leaves([x, gamma, beta])
        y = layer_norm(xs, g, b, eps, mistake)
        dx, dg, db = grads_of(y, [xs, g, b], dy)
        return {"y": y.detach().numpy(), "dx": dx, "dgamma": dg, "dbeta": db}

    right = run()
    # The two properties of the header, in the reference: rows of dx sum to 0.
    assert np.allclose(right["dx"].sum(-1), 0.0, atol=1e-9), c
    save_all(out, c, right)
    if offset == 0.0:
        save_mistakes(out, c, right, dict(run("unbiased_variance"), name="unbiased_variance"),
                      ["y", "dx"])
        xhat = (right["y"] - beta) / gamma  # per row, (x - mu) * rstd
        last = {"name": "dgamma_not_summed", "dgamma": dy[-1] * xhat[-1], "dbeta": dy[-1]}
        save_mistakes(out, c, right, last, ["dgamma", "dbeta"])


def gelu_case(out, c, x, seed):
    dy = common.inputs(seed, *x.shape)
    save_all(out, c, {"x": x, "dy": dy})

    def run(mistake=None):
        (xs,) = leaves([x])
        y = gelu(xs, mistake)
        return {"y": y.detach().numpy(), "dx": grads_of(y, [xs], dy)[0]}

    right = run()
    save_all(out, c, right)
    save_mistakes(out, c, right, dict(run("tanh_gelu"), name="tanh_gelu"), ["y", "dx"])


def ffn_case(out, c, d, d_ff, T, seed):
    _, (W_1, W_2) = weight_draws(seed - 1, d, d_ff)  # FeedForward(d, d_ff, seed) draws these
    b_1 = common.inputs(seed + 10, d_ff, scale=0.5)
    b_2 = common.inputs(seed + 11, d, scale=0.5)
    x = common.inputs(seed + 12, T, d)
    dy = common.inputs(seed + 13, T, d)
    save_all(out, c, {"W_1": W_1, "W_2": W_2, "b_1": b_1, "b_2": b_2, "x": x, "dy": dy})

    def run(mistake=None):
        xs, w1, b1, w2, b2 = leaves([x, W_1, b_1, W_2, b_2])
        y = ffn(xs, w1, b1, w2, b2, mistake)
        g = grads_of(y, [xs, w1, b1, w2, b2], dy)
        return dict(zip(["dx", "dW_1", "db_1", "dW_2", "db_2"], g), y=y.detach().numpy())

    right = run()
    save_all(out, c, right)
    # (GELU's tanh approximation is off by at most 4.7e-4, at x = 2.70: in y
    # that is only a little more than a layer's tolerance, so only the
    # gradients, where it shows more, name it.)
    save_mistakes(out, c, right, dict(run("tanh_gelu"), name="tanh_gelu"),
                  ["dx", "dW_1", "db_1", "dW_2"])


def rope_case(out, c, H, T, d_head, start, base, seed):
    d = common.inputs(seed, H, T, d_head)
    common.save(out, c + "_d", d)
    (x,) = leaves([np.zeros((H, T, d_head))])
    dx = grads_of(rotate(x, start, base), [x], d)[0]  # d/dx sum(apply_rope(x) * d)
    # The adjoint property of the header, in the reference.
    xr = common.inputs(seed + 1, H, T, d_head).astype(np.float64)
    lhs = (rotate(t64(xr), start, base).numpy() * d).sum()
    assert np.isclose(lhs, (xr * dx).sum(), rtol=1e-12), c
    right = {"dx": dx}
    save_all(out, c, right)
    turned = rotate(t64(d.astype(np.float64)), start, base).numpy()
    save_mistakes(out, c, right, {"name": "rope_backward_forward", "dx": turned}, ["dx"])
    save_mistakes(out, c, right, {"name": "rope_backward_missing", "dx": d}, ["dx"])


def rotary_grads(x, W, H, base, mask, dy, rope_back=-1):
    """The rotary layer's gradients, chained by hand from autograd's gradients
    of the rotated q and k: rope_back -1 turns them back (right), +1 turns them
    the forward's way, 0 leaves them (two mistakes)."""
    xs, *Ws = leaves([x] + list(W))
    q, k, v = rotary_heads(xs, Ws, H, base)
    qr, kr = q.detach().requires_grad_(), k.detach().requires_grad_()
    y = common.combine_heads(common.torch_attention_autograd(qr, kr, v, mask)) @ Ws[3]
    # x reaches y through V only, now that the rotated q and k are leaves.
    dqr, dkr, dx_v, dW_V, dW_O = torch.autograd.grad(y, [qr, kr, xs, Ws[2], Ws[3]], t64(dy))
    if rope_back != 0:
        dqr, dkr = rotate(dqr, 0, base, rope_back), rotate(dkr, 0, base, rope_back)
    dQ, dK = common.combine_heads(dqr), common.combine_heads(dkr)
    xd = t64(x)
    return {"dx": (dx_v + dQ @ t64(W[0]).T + dK @ t64(W[1]).T).numpy(),
            "dW_Q": (xd.T @ dQ).numpy(), "dW_K": (xd.T @ dK).numpy(),
            "dW_V": dW_V.numpy(), "dW_O": dW_O.numpy()}


def attn_case(out, c, d, H, T, seed, base):
    W = common.draws(seed, d)
    x = common.inputs(seed + 20, T, d)
    dy = common.inputs(seed + 21, T, d)
    mask = common.causal(T)
    save_all(out, c, dict(zip(["W_Q", "W_K", "W_V", "W_O"], W), x=x, dy=dy))
    xs, *Ws = leaves([x] + W)
    y = rotary_attention(xs, Ws, H, base, mask)
    g = grads_of(y, [xs] + Ws, dy)
    right = dict(zip(["dx", "dW_Q", "dW_K", "dW_V", "dW_O"], g))
    # The chain by hand gives autograd's numbers when it turns back (-1).
    chained = rotary_grads(x, W, H, base, mask, dy)
    for n in right:
        assert np.allclose(chained[n], right[n], rtol=1e-10, atol=1e-12), (c, n)
    save_all(out, c, right)
    for way, name in [(1, "rope_backward_forward"), (0, "rope_backward_missing")]:
        wrong = dict(rotary_grads(x, W, H, base, mask, dy, way), name=name)
        save_mistakes(out, c, right, wrong, ["dx", "dW_Q", "dW_K"])


# ------------------------------------------------------------------ the block

BLOCK_PARAMS = ["ln1_gamma", "ln1_beta", "W_Q", "W_K", "W_V", "W_O", "ln2_gamma", "ln2_beta",
                "W_1", "b_1", "W_2", "b_2"]  # BlockGrads' order


def block_forward(x, p, H, base, mistake=None):
    """The pre-LN block (or, as a mistake, post-LN), float64 torch; p: BLOCK_PARAMS."""
    mask = common.causal(x.shape[0])
    W = [p["W_Q"], p["W_K"], p["W_V"], p["W_O"]]
    if mistake == "post_ln":  # the original Transformer: normalise after each sum
        h = layer_norm(x + rotary_attention(x, W, H, base, mask), p["ln1_gamma"], p["ln1_beta"])
        return layer_norm(h + ffn(h, p["W_1"], p["b_1"], p["W_2"], p["b_2"]), p["ln2_gamma"],
                          p["ln2_beta"])
    a = layer_norm(x, p["ln1_gamma"], p["ln1_beta"], mistake=mistake)
    h = x + rotary_attention(a, W, H, base, mask)
    b = layer_norm(h, p["ln2_gamma"], p["ln2_beta"], mistake=mistake)
    return h + ffn(b, p["W_1"], p["b_1"], p["W_2"], p["b_2"])


def block_weights(x, p, H, base):
    """attention_weights: attn's softmax on a = layer_norm(x), (H, T, T)."""
    a = layer_norm(x, p["ln1_gamma"], p["ln1_beta"])
    q, k, _ = rotary_heads(a, [p["W_Q"], p["W_K"], p["W_V"]], H, base)
    scores = q @ k.transpose(-1, -2) / np.sqrt(q.shape[-1]) + t64(common.causal(x.shape[0]))
    return torch.softmax(scores, dim=-1)


def block_grads(x, params, dy, H, base, drop=None):
    """Every field of BlockGrads, the two residual forks written out: the
    gradient of h is dy (around the FFN) plus what comes back through it, and
    that of x is dh plus what comes back through attention. drop: the fork
    around "residual1" (attention) or "residual2" (the FFN) left out."""
    xs, *ps = leaves([x] + [params[n] for n in BLOCK_PARAMS])
    p = dict(zip(BLOCK_PARAMS, ps))
    mask = common.causal(x.shape[0])
    o = rotary_attention(layer_norm(xs, p["ln1_gamma"], p["ln1_beta"]),
                         [p["W_Q"], p["W_K"], p["W_V"], p["W_O"]], H, base, mask)
    h = (xs + o).detach().requires_grad_()
    f = ffn(layer_norm(h, p["ln2_gamma"], p["ln2_beta"]), p["W_1"], p["b_1"], p["W_2"], p["b_2"])
    upper = BLOCK_PARAMS[6:]
    dh_through, *g_upper = torch.autograd.grad(f, [h] + [p[n] for n in upper], t64(dy))
    dh = dh_through + (0 if drop == "residual2" else t64(dy))
    lower = BLOCK_PARAMS[:6]
    dx_through, *g_lower = torch.autograd.grad(o, [xs] + [p[n] for n in lower], dh)
    dx = dx_through + (0 if drop == "residual1" else dh)
    g = {"d" + n: t.numpy() for n, t in zip(lower + upper, g_lower + g_upper)}
    g["dx"] = dx.numpy()
    return g


def block_case(out, c, d, H, d_ff, T, seed, base):
    W, (W_1, W_2) = weight_draws(seed, d, d_ff)
    params = dict(zip(["W_Q", "W_K", "W_V", "W_O"], W), W_1=W_1, W_2=W_2)
    # Gammas, betas and biases away from their initial 1 and 0, so that a
    # gradient or a forward that ignores one of them shows.
    for i, n in enumerate(["ln1_gamma", "ln2_gamma"]):
        params[n] = (1.0 + 0.3 * common.inputs(seed + 30 + i, d)).astype(np.float32)
    for i, (n, size) in enumerate([("ln1_beta", d), ("ln2_beta", d), ("b_1", d_ff), ("b_2", d)]):
        params[n] = common.inputs(seed + 40 + i, size, scale=0.3)
    x = common.inputs(seed + 50, T, d)
    dy = common.inputs(seed + 51, T, d)
    save_all(out, c, dict(params, x=x, dy=dy))

    tp = {n: t64(a) for n, a in params.items()}
    xt = t64(x)
    right = {"y": block_forward(xt, tp, H, base).numpy(),
             "weights": block_weights(xt, tp, H, base).numpy()}
    # The forks written out give autograd's gradients of the whole block.
    xs, *ps = leaves([x] + [params[n] for n in BLOCK_PARAMS])
    y = block_forward(xs, dict(zip(BLOCK_PARAMS, ps)), H, base)
    auto = grads_of(y, [xs] + ps, dy)
    grads = block_grads(x, params, dy, H, base)
    for n, a in zip(["dx"] + ["d" + n for n in BLOCK_PARAMS], auto):
        assert np.allclose(grads[n], a, rtol=1e-10, atol=1e-12), (c, n)
    right.update(grads)
    save_all(out, c, right)
    for m in ["post_ln", "unbiased_variance"]:
        save_mistakes(out, c, right, {"name": m, "y": block_forward(xt, tp, H, base, m).numpy()},
                      ["y"])
    wrong1 = dict(block_grads(x, params, dy, H, base, "residual1"), name="residual1_fork_dropped")
    save_mistakes(out, c, right, wrong1, ["dx"])
    wrong2 = dict(block_grads(x, params, dy, H, base, "residual2"), name="residual2_fork_dropped")
    save_mistakes(out, c, right, wrong2, ["dx", "dW_V", "dln1_beta"])


def main():
    for d in (HIDDEN, PUBLIC):
        for f in os.listdir(d):
            if f.endswith(".npy"):
                os.remove(os.path.join(d, f))

    # Public: small sizes where every mistake shows.
    ln_case(PUBLIC, "ln", T=5, d=8, seed=1401)
    ln_case(PUBLIC, "ln_offset", T=4, d=64, seed=1402, offset=1000.0)
    gelu_case(PUBLIC, "gelu", np.linspace(-5, 5, 48, dtype=np.float32).reshape(6, 8), seed=1403)
    ffn_case(PUBLIC, "ffn", d=8, d_ff=16, T=5, seed=1404)
    rope_case(PUBLIC, "rope", H=2, T=5, d_head=8, start=3, base=10000.0, seed=1405)
    attn_case(PUBLIC, "attn", d=16, H=2, T=6, seed=1406, base=10000.0)
    block_case(PUBLIC, "block", d=16, H=2, d_ff=32, T=6, seed=1407, base=10000.0)

    # Hidden: other shapes, seeds, an eps, a base; the seed course's block (lab 15's sizes).
    ln_case(HIDDEN, "ln", T=7, d=12, seed=1411)
    ln_case(HIDDEN, "ln_eps", T=3, d=6, seed=1412, eps=1e-2)
    ln_case(HIDDEN, "ln_offset", T=3, d=32, seed=1413, offset=1000.0)
    wide = np.concatenate([np.linspace(-10, 10, 41), common.inputs(1414, 4, scale=3.0)])
    gelu_case(HIDDEN, "gelu", wide.astype(np.float32).reshape(5, 9), seed=1415)
    ffn_case(HIDDEN, "ffn", d=12, d_ff=20, T=7, seed=1416)
    rope_case(HIDDEN, "rope", H=3, T=5, d_head=6, start=17, base=500000.0, seed=1417)
    attn_case(HIDDEN, "attn", d=24, H=3, T=7, seed=1418, base=500000.0)
    block_case(HIDDEN, "block", d=24, H=3, d_ff=40, T=9, seed=1419, base=10000.0)
    block_case(HIDDEN, "mini", d=64, H=4, d_ff=256, T=25, seed=1420, base=10000.0)

    common.report_written(PUBLIC, HIDDEN)


if __name__ == "__main__":
    main()
