#!/usr/bin/env python3
"""Golden files for lab 12 (12_variant_backward): gradients of GQA and MLA.

Run from the repository root with Debian's Python:

    /usr/bin/python3 tests/12_variant_backward/gen_goldens.py

Writes tests/12_variant_backward/golden/*.npy (hidden) and
labs/12_variant_backward/golden/*.npy (public), float32. The numbers come
from PyTorch's autograd in float64, independently of the C++ code:

* GQA: lab 5's layer in torch ops (x @ W_Q, x @ W_K, x @ W_V, split, each kv
  head repeated in place with repeat_interleave, attention, combine, @ W_O),
  then y.backward(d_y). With n_kv_heads == n_heads the same gradients also
  come out of torch.nn.MultiheadAttention (checked where no row is fully
  masked), i.e. lab 10's mha_backward.
* MLA: lab 6's layer in torch ops (c = x @ W_DKV, K = c @ W_UK, V = c @ W_UV,
  attention, @ W_O), then y.backward(d_y); autograd through the absorbed form
  (W_UK folded into the queries, W_UV into W_O) gives the same gradients
  (checked).

A query that sees no key gets an all-zero weight row (the suite's
convention; torch.softmax alone gives NaN there).

Next to each gradient, `<case>_<grad>_mistake_<m>.npy` holds what a classic
mistake <m> computes instead (a hand-written NumPy backward with that one
error; the same backward without errors is checked against autograd first).

Public (labs/12_variant_backward/golden): x, d_y (T=4, d_model=8), causal
mask; gqa = GroupedQueryAttention(8, n_heads=4, n_kv_heads=2, seed 3);
mla = MultiHeadLatentAttention(8, n_heads=2, kv_rank=3, seed 3).

Hidden (tests/12_variant_backward/golden): x, d_y (T=5, d_model=12), masks
causal and empty_row (key 0 hidden from every query, so query 0 sees nothing);
GQA (12, 4 heads, seed 7) with 2 kv heads (gqa_plain, gqa_causal,
gqa_empty_row), 1 (mqa_causal) and 4 (mha_causal); MLA (12, 3 heads, seed 7)
with kv_rank 5 (mla_plain, mla_causal, mla_empty_row) and 1 (mla_rank1);
gqa_overwrite_w_k_* and mla_overwrite_w_uk_*: after a weight is overwritten
(gqa_new_w_k, mla_new_w_uk).
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "goldens"))
import common  # noqa: E402  (tools/goldens/common.py)

HIDDEN = common.golden_dir(__file__)
PUBLIC = common.public_golden_dir(__file__)

# The classic mistakes, and which gradients each one changes.
GQA_MISTAKES = {
    "kv_grad_one_query_head": ("dx", "dW_K", "dW_V"),
    "kv_grad_overwritten": ("dx", "dW_K", "dW_V"),
    "kv_grad_tiled": ("dx", "dW_K", "dW_V"),
    "no_scale": ("dx", "dW_Q", "dW_K"),
    "mask_not_in_backward": ("dx", "dW_Q", "dW_K", "dW_V", "dW_O"),
    "dW_O_transposed": ("dW_O",),
}
MLA_MISTAKES = {
    "mla_no_w_uk_path": ("dx", "dW_DKV"),
    "dx_no_latent_path": ("dx",),
    "no_scale": ("dx", "dW_Q", "dW_DKV", "dW_UK"),
    "mask_not_in_backward": ("dx", "dW_Q", "dW_DKV", "dW_UK", "dW_UV", "dW_O"),
    "dW_O_transposed": ("dW_O",),
}
# Only where a case has a mask does forgetting it change anything.
NEEDS_MASK = ("mask_not_in_backward",)


def mla_weights(seed, d, r):
    """W_Q, W_DKV, W_UK, W_UV, W_O of MultiHeadLatentAttention(d, n_heads, r, seed)."""
    rng = np.random.default_rng(seed)
    return [common.weights(rng, d, d, d), common.weights(rng, d, r, d),
            common.weights(rng, r, d, r), common.weights(rng, r, d, r), common.weights(rng, d, d, d)]


# ---------------------------------------------------------------- autograd (the goldens)

def torch_gqa(x, W, n_heads, n_kv, mask):
    W_Q, W_K, W_V, W_O = W
    q = common.split_heads(x @ W_Q, n_heads)
    k = common.split_heads(x @ W_K, n_kv).repeat_interleave(n_heads // n_kv, dim=0)
    v = common.split_heads(x @ W_V, n_kv).repeat_interleave(n_heads // n_kv, dim=0)
    return common.combine_heads(common.torch_attention_autograd(q, k, v, mask)) @ W_O


def torch_mla(x, W, n_heads, mask):
    W_Q, W_DKV, W_UK, W_UV, W_O = W
    c = x @ W_DKV
    q, k, v = (common.split_heads(a, n_heads) for a in (x @ W_Q, c @ W_UK, c @ W_UV))
    return common.combine_heads(common.torch_attention_autograd(q, k, v, mask)) @ W_O


def torch_mla_absorbed(x, W, n_heads, mask):
    """Scores q_h W_UK_h^T c^T and outputs (P c) W_UV_h W_O_h: K and V never formed."""
    W_Q, W_DKV, W_UK, W_UV, W_O = W
    d = x.shape[1]
    dh = d // n_heads
    c = x @ W_DKV                                                    # (T, r)
    q = common.split_heads(x @ W_Q, n_heads)                         # (H, T, dh)
    uk = W_UK.reshape(W_UK.shape[0], n_heads, dh).permute(1, 0, 2)   # (H, r, dh)
    q_lat = q @ uk.transpose(-1, -2)                                 # (H, T, r)
    scores = q_lat @ c.T / np.sqrt(dh)
    T = x.shape[0]
    if mask is not None:
        m = common.t64(mask)
        sees = torch.isfinite(m).any(dim=-1, keepdim=True)
        scores = torch.where(sees, scores + m, torch.zeros_like(scores))
        P = torch.softmax(scores, dim=-1) * sees
    else:
        P = torch.softmax(scores, dim=-1)
    uv = W_UV.reshape(W_UV.shape[0], n_heads, dh).permute(1, 0, 2)   # (H, r, dh)
    W_O_h = W_O.reshape(n_heads, dh, d)                              # (H, dh, d)
    y = torch.zeros(T, d)
    for h in range(n_heads):
        y = y + (P[h] @ c) @ (uv[h] @ W_O_h[h])
    return y


def autograd(forward, x, Ws, names, d_y):
    x = common.t64(x).requires_grad_()
    W = [common.t64(w).requires_grad_() for w in Ws]
    y = forward(x, W)
    y.backward(common.t64(d_y))
    grads = {"dx": x.grad.numpy()}
    for name, w in zip(names, W):
        grads[name] = w.grad.numpy()
    return grads, y.detach().numpy()


GQA_NAMES = ("dW_Q", "dW_K", "dW_V", "dW_O")
MLA_NAMES = ("dW_Q", "dW_DKV", "dW_UK", "dW_UV", "dW_O")


# ---------------------------------------------------------------- by hand (the mistakes)

def attention_part(Q, K, V, W_O, n_heads, n_kv, mask, d_y, mistake):
    """dQ, dK, dV (kv heads), dW_O in float64, with at most one mistake."""
    group = n_heads // n_kv
    q = common.split_heads(Q, n_heads)
    k = np.repeat(common.split_heads(K, n_kv), group, axis=0)
    v = np.repeat(common.split_heads(V, n_kv), group, axis=0)
    dh = q.shape[-1]
    scale = 1 / np.sqrt(dh)
    scores = q @ k.transpose(0, 2, 1) * scale
    if mask is not None and mistake != "mask_not_in_backward":
        scores = scores + mask
    P = common.softmax_rows(scores)
    concat = common.combine_heads(P @ v)
    dW_O = d_y.T @ concat if mistake == "dW_O_transposed" else concat.T @ d_y
    dO = common.split_heads(d_y @ W_O.T, n_heads)
    dv = P.transpose(0, 2, 1) @ dO
    dP = dO @ v.transpose(0, 2, 1)
    dS = P * (dP - (P * dP).sum(axis=-1, keepdims=True))
    s = 1.0 if mistake == "no_scale" else scale
    dq, dk = dS @ k * s, dS.transpose(0, 2, 1) @ q * s
    # repeat_kv's adjoint: kv head g gets the sum over its query heads.
    if mistake == "kv_grad_one_query_head":
        dk_kv, dv_kv = dk[::group], dv[::group]
    elif mistake == "kv_grad_overwritten":  # dk[g] = dk_rep[h] in the loop: the last head wins
        dk_kv, dv_kv = dk[group - 1::group], dv[group - 1::group]
    elif mistake == "kv_grad_tiled":  # query head h taken as reading kv head h % n_kv
        dk_kv = np.stack([dk[g::n_kv].sum(axis=0) for g in range(n_kv)])
        dv_kv = np.stack([dv[g::n_kv].sum(axis=0) for g in range(n_kv)])
    else:
        dk_kv = dk.reshape(n_kv, group, *dk.shape[1:]).sum(axis=1)
        dv_kv = dv.reshape(n_kv, group, *dv.shape[1:]).sum(axis=1)
    return (common.combine_heads(dq), common.combine_heads(dk_kv), common.combine_heads(dv_kv),
            dW_O)


def manual_gqa(x, Ws, n_heads, n_kv, mask, d_y, mistake=None):
    x, d_y = common.f64(x), common.f64(d_y)
    W_Q, W_K, W_V, W_O = (common.f64(w) for w in Ws)
    dQ, dK, dV, dW_O = attention_part(x @ W_Q, x @ W_K, x @ W_V, W_O, n_heads, n_kv, mask, d_y,
                                      mistake)
    return {"dx": dQ @ W_Q.T + dK @ W_K.T + dV @ W_V.T, "dW_Q": x.T @ dQ, "dW_K": x.T @ dK,
            "dW_V": x.T @ dV, "dW_O": dW_O}


def manual_mla(x, Ws, n_heads, mask, d_y, mistake=None):
    x, d_y = common.f64(x), common.f64(d_y)
    W_Q, W_DKV, W_UK, W_UV, W_O = (common.f64(w) for w in Ws)
    c = x @ W_DKV
    dQ, dK, dV, dW_O = attention_part(x @ W_Q, c @ W_UK, c @ W_UV, W_O, n_heads, n_heads, mask,
                                      d_y, mistake)
    dc = dV @ W_UV.T if mistake == "mla_no_w_uk_path" else dK @ W_UK.T + dV @ W_UV.T
    dx = dQ @ W_Q.T if mistake == "dx_no_latent_path" else dQ @ W_Q.T + dc @ W_DKV.T
    return {"dx": dx, "dW_Q": x.T @ dQ, "dW_DKV": x.T @ dc, "dW_UK": c.T @ dK, "dW_UV": c.T @ dV,
            "dW_O": dW_O}


# ---------------------------------------------------------------- writing

def gqa_case(out, case, x, Ws, n_heads, n_kv, mask, d_y, with_mistakes=True):
    grads, _ = autograd(lambda xx, W: torch_gqa(xx, W, n_heads, n_kv, mask), x, Ws, GQA_NAMES, d_y)
    common.assert_grads_close(manual_gqa(x, Ws, n_heads, n_kv, mask, d_y), grads, case, 1e-12)
    if n_kv == n_heads and (mask is None or np.all(np.isfinite(mask).any(axis=-1))):
        common.assert_grads_close(common.autograd_nn_mha(x, Ws, n_heads, mask, d_y), grads, case,
                                  1e-10)
    def shows(m):
        if m in ("kv_grad_one_query_head", "kv_grad_overwritten"):
            return n_kv != n_heads  # no sharing: one query head per kv head
        if m in NEEDS_MASK:
            return mask is not None
        if m == "kv_grad_tiled":
            return n_kv not in (1, n_heads)  # one group, or no sharing: both orders agree
        return True
    mistakes = {m: changed for m, changed in GQA_MISTAKES.items() if with_mistakes and shows(m)}
    common.save_grads(out, case, grads, mistakes,
                      lambda m: manual_gqa(x, Ws, n_heads, n_kv, mask, d_y, m))
    return grads


def mla_case(out, case, x, Ws, n_heads, mask, d_y, with_mistakes=True):
    grads, y = autograd(lambda xx, W: torch_mla(xx, W, n_heads, mask), x, Ws, MLA_NAMES, d_y)
    absorbed, y_abs = autograd(lambda xx, W: torch_mla_absorbed(xx, W, n_heads, mask), x, Ws,
                               MLA_NAMES, d_y)
    assert np.allclose(y, y_abs, rtol=1e-10, atol=1e-10), case
    common.assert_grads_close(manual_mla(x, Ws, n_heads, mask, d_y), grads, case, 1e-12)
    common.assert_grads_close(absorbed, grads, case, 1e-10)
    mistakes = {m: changed for m, changed in MLA_MISTAKES.items()
                if with_mistakes and (mask is not None or m not in NEEDS_MASK)}
    common.save_grads(out, case, grads, mistakes,
                      lambda m: manual_mla(x, Ws, n_heads, mask, d_y, m))
    return grads


def main():
    inp = common.inputs

    # ---- public: T=4, d_model=8, causal
    x, d_y, causal = inp(15, 4, 8), inp(16, 4, 8), common.causal(4)
    for name, a in (("pub_x", x), ("pub_d_y", d_y), ("pub_mask", causal)):
        common.save(PUBLIC, name, a)
    gqa_case(PUBLIC, "pub_gqa", x, common.gqa_weights(3, 8, 4, 2), 4, 2, causal, d_y)
    mla_case(PUBLIC, "pub_mla", x, mla_weights(3, 8, 3), 2, causal, d_y)

    # ---- hidden: T=5, d_model=12
    x, d_y = inp(201, 5, 12), inp(202, 5, 12)
    causal = common.causal(5)
    empty_row = causal.copy()
    empty_row[:, 0] = -np.inf  # key 0 hidden from everyone: query 0 sees nothing
    for name, a in (("x", x), ("d_y", d_y), ("mask_causal", causal), ("mask_empty_row", empty_row)):
        common.save(HIDDEN, name, a)
    W2 = common.gqa_weights(7, 12, 4, 2)
    gqa_case(HIDDEN, "gqa_plain", x, W2, 4, 2, None, d_y)
    gqa_case(HIDDEN, "gqa_causal", x, W2, 4, 2, causal, d_y)
    g = gqa_case(HIDDEN, "gqa_empty_row", x, W2, 4, 2, empty_row, d_y)
    gqa_case(HIDDEN, "mqa_causal", x, common.gqa_weights(7, 12, 4, 1), 4, 1, causal, d_y)
    gqa_case(HIDDEN, "mha_causal", x, common.gqa_weights(7, 12, 4, 4), 4, 4, causal, d_y)
    new_w_k = inp(203, 12, 6, scale=1 / np.sqrt(12))
    common.save(HIDDEN, "gqa_new_w_k", new_w_k)
    gqa_case(HIDDEN, "gqa_overwrite_w_k", x, [W2[0], new_w_k, W2[2], W2[3]], 4, 2, causal, d_y,
             with_mistakes=False)

    W5 = mla_weights(7, 12, 5)
    mla_case(HIDDEN, "mla_plain", x, W5, 3, None, d_y)
    mla_case(HIDDEN, "mla_causal", x, W5, 3, causal, d_y)
    mla_case(HIDDEN, "mla_empty_row", x, W5, 3, empty_row, d_y)
    mla_case(HIDDEN, "mla_rank1", x, mla_weights(7, 12, 1), 3, causal, d_y)
    new_w_uk = inp(204, 5, 12, scale=1 / np.sqrt(5))
    common.save(HIDDEN, "mla_new_w_uk", new_w_uk)
    mla_case(HIDDEN, "mla_overwrite_w_uk", x, [W5[0], W5[1], new_w_uk, W5[3], W5[4]], 3, causal,
             d_y, with_mistakes=False)

    common.report_written(PUBLIC, HIDDEN)


if __name__ == "__main__":
    main()
