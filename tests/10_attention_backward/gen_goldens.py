#!/usr/bin/env python3
"""Golden files for lab 10 (10_attention_backward): gradients of attention.

Run from the repository root with Debian's Python:

    /usr/bin/python3 tests/10_attention_backward/gen_goldens.py

Writes tests/10_attention_backward/golden/*.npy (hidden) and
labs/10_attention_backward/golden/*.npy (public), float32. The numbers come
from PyTorch's autograd in float64, independently of the C++ code:

* attention: out = softmax(q k^T / sqrt(d_head) + mask) v written in torch
  ops, with a query that sees no key given an all-zero weight row (the
  suite's convention; torch.softmax alone gives NaN there), then
  out.backward(d_output);
* the layer: the same attention inside lab 3's layer (x @ W_Q, split, attend,
  combine, @ W_O) in torch ops, checked against torch.nn.MultiheadAttention's
  output and, where no row is fully masked, against autograd through
  nn.MultiheadAttention itself; then y.backward(d_y).

Next to each gradient, `<case>_<grad>_mistake_<m>.npy` holds what a classic
mistake <m> computes instead (a hand-written NumPy backward with that one
error; the same backward without errors is checked against autograd first).

Hidden attention cases (H=3, T=5, S=7, d_head=4 unless named): cross (no
mask), causal (bottom-right (5, 7) causal mask), empty_row (causal, and query
0 sees no key), large (scores in the hundreds), single_head (H=1, T=S=4,
d_head=6). Files: <case>_q, _k, _v, _mask, _d_output; <case>_dq, _dk, _dv.

Hidden layer cases (d_model=12, n_heads=3, seed 7, T=5): mha_plain,
mha_causal, mha_empty_row (key 0 hidden from every query: query 0 sees
nothing), mha_one_head (n_heads=1). Files: mha_x, mha_d_y, mha_mask_causal,
mha_mask_empty_row; <case>_dx, _dW_Q, _dW_K, _dW_V, _dW_O. mha_new_w_v and
mha_overwrite_w_v_*: gradients after W_V is overwritten.

Public (labs/10_attention_backward/golden): attention H=2, T=3, S=4,
d_head=5 with a causal mask (pub_*), and the layer d_model=8, n_heads=2,
seed 3, T=4, causal (pub_mha_*).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "goldens"))
import common  # noqa: E402  (tools/goldens/common.py)

HIDDEN = common.golden_dir(__file__)
PUBLIC = common.public_golden_dir(__file__)

# Mistakes of the attention backward, and which gradients each one changes.
ATTENTION_MISTAKES = {
    "no_row_sum": ("dq", "dk"),
    "row_sum_over_queries": ("dq", "dk"),
    "no_scale": ("dq", "dk"),
    "dk_dv_swapped": ("dk", "dv"),
    "mask_leak": ("dq", "dk", "dv"),  # only where the mask removes something
}
# Mistakes of the layer's backward (the attention ones carry through too).
LAYER_MISTAKES = {
    "no_row_sum": ("dx", "dW_Q", "dW_K"),
    "row_sum_over_queries": ("dx", "dW_Q", "dW_K"),
    "no_scale": ("dx", "dW_Q", "dW_K"),
    "dk_dv_swapped": ("dx", "dW_K", "dW_V"),
    "w_o_grad_transposed": ("dW_O",),
    "dx_query_path_only": ("dx",),
    "dx_weights_not_transposed": ("dx",),
    # mha_backward recomputes the forward and P without the mask it was given
    # (only where the mask removes something).
    "mask_not_in_backward": ("dx", "dW_Q", "dW_K", "dW_V", "dW_O"),
}


# ---------------------------------------------------------------- autograd (the goldens)

def autograd_attention(q, k, v, mask, d_output):
    """(dq, dk, dv) of sum(out * d_output), float64 NumPy."""
    q, k, v = (common.t64(a).requires_grad_() for a in (q, k, v))
    out = common.torch_attention_autograd(q, k, v, mask)
    out.backward(common.t64(d_output))
    return q.grad.numpy(), k.grad.numpy(), v.grad.numpy()


def torch_layer(x, Ws, n_heads, mask):
    W_Q, W_K, W_V, W_O = Ws
    q, k, v = (common.split_heads(x @ W, n_heads) for W in (W_Q, W_K, W_V))
    return common.combine_heads(common.torch_attention_autograd(q, k, v, mask)) @ W_O


def autograd_layer(x, Ws, n_heads, mask, d_y):
    """{dx, dW_Q, dW_K, dW_V, dW_O} of sum(y * d_y), float64 NumPy."""
    x = common.t64(x).requires_grad_()
    W = [common.t64(w).requires_grad_() for w in Ws]
    y = torch_layer(x, W, n_heads, mask)
    # The same layer as torch.nn.MultiheadAttention (lab 3's goldens).
    assert np.allclose(y.detach().numpy(), common.torch_mha(x.detach().numpy(), *Ws, n_heads, mask),
                       atol=1e-10)
    y.backward(common.t64(d_y))
    grads = {"dx": x.grad.numpy()}
    for name, w in zip(("dW_Q", "dW_K", "dW_V", "dW_O"), W):
        grads[name] = w.grad.numpy()
    return grads


# ---------------------------------------------------------------- by hand (the mistakes)

def manual_attention_backward(q, k, v, mask, dO, mistake=None):
    """The backward in float64 NumPy, with at most one classic mistake."""
    q, k, v, dO = (np.asarray(a, np.float64) for a in (q, k, v, dO))
    scale = 1 / np.sqrt(q.shape[-1])
    scores = q @ k.transpose(0, 2, 1) * scale
    if mask is not None and mistake != "mask_leak":
        scores = scores + mask
    P = common.softmax_rows(scores)                            # (H, T, S)
    dv = P.transpose(0, 2, 1) @ dO                             # (H, S, d)
    dP = dO @ v.transpose(0, 2, 1)                             # (H, T, S)
    if mistake == "no_row_sum":
        dS = P * dP
    elif mistake == "row_sum_over_queries":
        dS = P * (dP - (P * dP).sum(axis=-2, keepdims=True))
    else:
        dS = P * (dP - (P * dP).sum(axis=-1, keepdims=True))
    s = 1.0 if mistake == "no_scale" else scale
    dq = dS @ k * s
    dk = dS.transpose(0, 2, 1) @ q * s
    if mistake == "dk_dv_swapped":
        dk, dv = dv, dk
    return {"dq": dq, "dk": dk, "dv": dv}


def manual_layer_backward(x, Ws, n_heads, mask, d_y, mistake=None):
    x, d_y = np.asarray(x, np.float64), np.asarray(d_y, np.float64)
    W_Q, W_K, W_V, W_O = (np.asarray(w, np.float64) for w in Ws)
    q, k, v = (common.split_heads(x @ W, n_heads) for W in (W_Q, W_K, W_V))
    if mistake == "mask_not_in_backward":
        mask, mistake = None, None
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + mask
    concat = common.combine_heads(common.softmax_rows(scores) @ v)
    dW_O = d_y.T @ concat if mistake == "w_o_grad_transposed" else concat.T @ d_y
    d_heads = common.split_heads(d_y @ W_O.T, n_heads)
    g = manual_attention_backward(q, k, v, mask, d_heads, mistake)
    dQ, dK, dV = common.combine_heads(g["dq"]), common.combine_heads(g["dk"]), common.combine_heads(g["dv"])
    if mistake == "dx_query_path_only":
        dx = dQ @ W_Q.T
    elif mistake == "dx_weights_not_transposed":
        dx = dQ @ W_Q + dK @ W_K + dV @ W_V
    else:
        dx = dQ @ W_Q.T + dK @ W_K.T + dV @ W_V.T
    return {"dx": dx, "dW_Q": x.T @ dQ, "dW_K": x.T @ dK, "dW_V": x.T @ dV, "dW_O": dW_O}


# ---------------------------------------------------------------- writing

def attention_case(out, case, q, k, v, mask, dO, with_mistakes=True):
    for name, a in (("q", q), ("k", k), ("v", v), ("d_output", dO)):
        common.save(out, case + "_" + name, a)
    if mask is not None:
        common.save(out, case + "_mask", mask)
    dq, dk, dv = autograd_attention(q, k, v, mask, dO)
    grads = {"dq": dq, "dk": dk, "dv": dv}
    common.assert_grads_close(manual_attention_backward(q, k, v, mask, dO), grads, case, 1e-12)
    masks_something = mask is not None and not np.all(np.isfinite(mask))
    mistakes = {m: changed for m, changed in ATTENTION_MISTAKES.items()
                if with_mistakes and (m != "mask_leak" or masks_something)}
    common.save_grads(out, case, grads, mistakes,
                      lambda m: manual_attention_backward(q, k, v, mask, dO, m))
    return grads


def layer_case(out, case, x, Ws, n_heads, mask, d_y, with_mistakes=True):
    grads = autograd_layer(x, Ws, n_heads, mask, d_y)
    common.assert_grads_close(manual_layer_backward(x, Ws, n_heads, mask, d_y), grads, case, 1e-12)
    if mask is None or np.all(np.isfinite(mask).any(axis=-1)):
        common.assert_grads_close(common.autograd_nn_mha(x, Ws, n_heads, mask, d_y), grads, case,
                                  1e-10)
    masks_something = mask is not None and not np.all(np.isfinite(mask))
    mistakes = {m: changed for m, changed in LAYER_MISTAKES.items()
                if with_mistakes and (m != "mask_not_in_backward" or masks_something)}
    common.save_grads(out, case, grads, mistakes,
                      lambda m: manual_layer_backward(x, Ws, n_heads, mask, d_y, m))
    return grads


def main():
    inp = common.inputs

    # ---- public: attention H=2, T=3, S=4, d_head=5, causal (3, 4)
    attention_case(PUBLIC, "pub", inp(11, 2, 3, 5, scale=1.5), inp(12, 2, 4, 5, scale=1.5),
                   inp(13, 2, 4, 5), common.causal(3, 4), inp(14, 2, 3, 5))
    # ---- public: the layer d_model=8, n_heads=2, seed 3, T=4, causal
    Ws = common.draws(3, 8)
    x, d_y = inp(15, 4, 8), inp(16, 4, 8)
    common.save(PUBLIC, "pub_mha_x", x)
    common.save(PUBLIC, "pub_mha_d_y", d_y)
    common.save(PUBLIC, "pub_mha_mask", common.causal(4))
    layer_case(PUBLIC, "pub_mha", x, Ws, 2, common.causal(4), d_y)

    # ---- hidden: attention H=3, T=5, S=7, d_head=4
    H, T, S, D = 3, 5, 7, 4
    q, k, v, dO = inp(101, H, T, D), inp(102, H, S, D), inp(103, H, S, D), inp(104, H, T, D)
    attention_case(HIDDEN, "cross", q, k, v, None, dO)
    attention_case(HIDDEN, "causal", q, k, v, common.causal(T, S), dO)
    empty = common.causal(T, S)
    empty[0, :] = -np.inf  # query 0 sees no key
    g = attention_case(HIDDEN, "empty_row", q, k, v, empty, dO)
    assert np.all(g["dq"][:, 0] == 0.0)
    # Scores in the hundreds: q and k scaled by 12 give |q.k|/2 up to ~300.
    ql, kl = inp(105, H, T, D, scale=12.0), inp(106, H, S, D, scale=12.0)
    max_score = np.abs(ql @ kl.transpose(0, 2, 1) / 2).max()
    assert max_score > 150, max_score
    print("large: max |score| = %.0f" % max_score)
    attention_case(HIDDEN, "large", ql, kl, v, common.causal(T, S), dO, with_mistakes=False)
    attention_case(HIDDEN, "single_head", inp(107, 1, 4, 6), inp(108, 1, 4, 6), inp(109, 1, 4, 6),
                   None, inp(110, 1, 4, 6))

    # ---- hidden: the layer d_model=12, n_heads=3, seed 7, T=5
    Ws = common.draws(7, 12)
    x, d_y = inp(201, 5, 12), inp(202, 5, 12)
    causal = common.causal(5)
    empty_row = causal.copy()
    empty_row[:, 0] = -np.inf  # key 0 hidden from everyone: query 0 sees nothing
    for name, a in (("mha_x", x), ("mha_d_y", d_y), ("mha_mask_causal", causal),
                    ("mha_mask_empty_row", empty_row)):
        common.save(HIDDEN, name, a)
    layer_case(HIDDEN, "mha_plain", x, Ws, 3, None, d_y)
    layer_case(HIDDEN, "mha_causal", x, Ws, 3, causal, d_y)
    g = layer_case(HIDDEN, "mha_empty_row", x, Ws, 3, empty_row, d_y)
    layer_case(HIDDEN, "mha_one_head", x, Ws, 1, causal, d_y)
    # Overwritten W_V: the next call must use it.
    new_w_v = inp(203, 12, 12, scale=1 / np.sqrt(12))
    common.save(HIDDEN, "mha_new_w_v", new_w_v)
    layer_case(HIDDEN, "mha_overwrite_w_v", x, [Ws[0], Ws[1], new_w_v, Ws[3]], 3, causal, d_y,
               with_mistakes=False)

    common.report_written(PUBLIC, HIDDEN)


if __name__ == "__main__":
    main()
