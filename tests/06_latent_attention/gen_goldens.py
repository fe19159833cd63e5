"""Goldens for lab 6 (multi-head latent attention): tests/06_latent_attention/golden/*.npy.

Run from the repository root:  /usr/bin/python3 tests/06_latent_attention/gen_goldens.py
Writes the hidden tests' goldens and, in labs/06_latent_attention/golden/, the
public tests' (another layer: see public()).

The reference is torch.nn.MultiheadAttention with separate key/value widths
(kdim = vdim = kv_rank): its query is x, its key and value inputs are the
latent c = x @ W_DKV, and its in-projections are W_Q, W_UK and W_UV. That is
exactly naive MLA (K = c @ W_UK, V = c @ W_UV, attention, @ W_O), computed by
PyTorch's own code in float64. A second path (NumPy projections +
common.torch_attention per head) checks it before anything is written.

Known-mistake goldens: what a mistaken implementation returns on the same
inputs, so a failing test can name the mistake (docs/06_latent_attention.md,
"Classic mistakes").
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "goldens"))
from common import (causal, f64, golden_dir, inputs, public_golden_dir, save, split_heads,
                    torch_attention, weights)

OUT = golden_dir(__file__)
PUBLIC = public_golden_dir(__file__)


def draw_weights(seed, d, r):
    """W_Q, W_DKV, W_UK, W_UV, W_O: one default_rng stream, in this order."""
    rng = np.random.default_rng(seed)
    return {
        "W_Q": weights(rng, d, d, d),
        "W_DKV": weights(rng, d, r, d),
        "W_UK": weights(rng, r, d, r),
        "W_UV": weights(rng, r, d, r),
        "W_O": weights(rng, d, d, d),
    }


def torch_mla(x, w, H, mask):
    """Naive MLA through nn.MultiheadAttention(kdim=vdim=kv_rank), float64."""
    d = x.shape[1]
    r = w["W_DKV"].shape[1]
    m = torch.nn.MultiheadAttention(d, H, bias=False, kdim=r, vdim=r, batch_first=True)
    with torch.no_grad():
        # torch keeps (out, in) matrices: transpose our (in, out) ones.
        m.q_proj_weight.copy_(torch.from_numpy(f64(w["W_Q"]).T))
        m.k_proj_weight.copy_(torch.from_numpy(f64(w["W_UK"]).T))
        m.v_proj_weight.copy_(torch.from_numpy(f64(w["W_UV"]).T))
        m.out_proj.weight.copy_(torch.from_numpy(f64(w["W_O"]).T))
        xt = torch.from_numpy(f64(x))[None]
        c = xt @ torch.from_numpy(f64(w["W_DKV"]))
        am = None if mask is None else torch.from_numpy(f64(mask))
        y, _ = m(xt, c, c, attn_mask=am, need_weights=False)
    return torch.nan_to_num(y[0], nan=0.0).numpy()


def numpy_mla(x, w, H, mask, k_from="W_UK", v_from="W_UV", scale_dim=None, with_w_o=True):
    """Naive MLA from NumPy projections and common.torch_attention.

    The keyword arguments build the mistaken variants: keys and values from
    the wrong up-projection, another scale, no output projection.
    """
    x = f64(x)
    c = x @ f64(w["W_DKV"])
    Q, K, V = x @ f64(w["W_Q"]), c @ f64(w[k_from]), c @ f64(w[v_from])
    q, k, v = split_heads(Q, H), split_heads(K, H), split_heads(V, H)
    d_head = q.shape[-1]
    if scale_dim is not None:  # torch_attention divides by sqrt(d_head)
        q = q * np.sqrt(d_head) / np.sqrt(scale_dim)
    o, _ = torch_attention(q, k, v, mask)
    concat = o.transpose(1, 0, 2).reshape(x.shape[0], -1)
    return concat @ f64(w["W_O"]) if with_w_o else concat


def softmax_rows(s):
    s = torch.softmax(torch.from_numpy(s), dim=-1)
    return torch.nan_to_num(s, nan=0.0).numpy()


def absorbed_mistake(x, w, H, mask, kind):
    """forward_absorbed with one classic mistake (see the doc's list)."""
    x = f64(x)
    d = x.shape[1]
    dh = d // H
    r = w["W_DKV"].shape[1]
    c = x @ f64(w["W_DKV"])
    q = split_heads(x @ f64(w["W_Q"]), H)
    W_UK, W_UV, W_O = f64(w["W_UK"]), f64(w["W_UV"]), f64(w["W_O"])
    y = np.zeros_like(x)
    for h in range(H):
        blk = slice(h * dh, (h + 1) * dh)
        W_UK_h_T = W_UK[:, blk].T                          # (d_head, r)
        if kind == "wuk_reshaped":                         # reshape is not transpose
            W_UK_h_T = W_UK.reshape(d, r)[blk, :]
        q_lat = q[h] @ W_UK_h_T                            # (T, r)
        scale = {"kv_rank_scale": r, "dmodel_scale": d}.get(kind, dh)
        scores = q_lat @ c.T / np.sqrt(scale)              # (T, T)
        if kind == "scores_transposed":                    # keys x queries
            scores = scores.T
        if mask is not None:
            scores = scores + f64(mask)
        p = softmax_rows(scores)
        mixed = p @ c                                      # (T, r)
        if kind == "no_w_o":                               # W_UV folded, W_O forgotten
            y[:, blk] = mixed @ W_UV[:, blk]
        elif kind == "whole_w_uv":                         # every head's columns of W_UV
            y += mixed @ (W_UV @ W_O)
        else:
            y += mixed @ (W_UV[:, blk] @ W_O[blk, :])
    return y


def write_case(name, d, H, r, T, seed, x_seed, scale, mask, OUT=OUT):
    w = draw_weights(seed, d, r)
    x = inputs(x_seed, T, d, scale=scale)
    y = torch_mla(x, w, H, mask)
    check = numpy_mla(x, w, H, mask)
    assert np.allclose(y, check, atol=1e-9, rtol=1e-9), name
    for k in ("dmodel_scale", "kv_rank_scale", "no_w_o", "whole_w_uv", "wuk_reshaped",
              "scores_transposed", "none"):
        assert not np.allclose(absorbed_mistake(x, w, H, mask, k), y, atol=1e-3) or k == "none", k
    assert np.allclose(absorbed_mistake(x, w, H, mask, "none"), y, atol=1e-9), name

    Q = f64(x) @ f64(w["W_Q"])
    c = f64(x) @ f64(w["W_DKV"])
    s = np.einsum("htd,hsd->hts", split_heads(Q, H), split_heads(c @ f64(w["W_UK"]), H)) / np.sqrt(d // H)
    print(f"{name}: d_model={d} n_heads={H} kv_rank={r} T={T}  max |score| {np.abs(s).max():.1f}")

    save(OUT, name + "_x", x)
    if mask is not None:
        save(OUT, name + "_mask", mask)
    save(OUT, name + "_latent", c)
    save(OUT, name + "_output", y)
    # Mistakes visible in either forward.
    save(OUT, name + "_output_mistake_kv_rank_scale", numpy_mla(x, w, H, mask, scale_dim=r))
    save(OUT, name + "_output_mistake_dmodel_scale", numpy_mla(x, w, H, mask, scale_dim=d))
    save(OUT, name + "_output_mistake_no_w_o", numpy_mla(x, w, H, mask, with_w_o=False))
    save(OUT, name + "_output_mistake_k_v_swapped",
         numpy_mla(x, w, H, mask, k_from="W_UV", v_from="W_UK"))
    if mask is not None:
        save(OUT, name + "_output_mistake_mask_ignored", torch_mla(x, w, H, None))
    # Mistakes of the absorbed order only.
    for k in ("whole_w_uv", "wuk_reshaped", "scores_transposed"):
        save(OUT, name + "_output_mistake_" + k, absorbed_mistake(x, w, H, mask, k))
    return w, x


def seeded_weights(out, seed, d, r):
    """The seeded weights of MultiHeadLatentAttention(d, *, r, seed), and the
    matrices two classic mistakes draw instead."""
    w = draw_weights(seed, d, r)
    for k, v in w.items():
        save(out, "seed%d_%s" % (seed, k), v)
    # The same stream with the up-projections scaled for fan-in d_model.
    rng = np.random.default_rng(seed)
    weights(rng, d, d, d), weights(rng, d, r, d)
    save(out, "seed%d_W_UK_mistake_fan_in_d_model" % seed, weights(rng, r, d, d))
    save(out, "seed%d_W_UV_mistake_fan_in_d_model" % seed, weights(rng, r, d, d))
    # The same stream with W_DKV drawn before W_Q: W_Q comes out of draws d*r on.
    rng = np.random.default_rng(seed)
    weights(rng, d, r, d)
    save(out, "seed%d_W_Q_mistake_drawn_after_w_dkv" % seed, weights(rng, d, d, d))


def public():
    """The public tests' goldens (labs/06_latent_attention/golden): another
    layer than the hidden tests', MultiHeadLatentAttention(18, 3, 4, seed=7):
    d_model=18, d_head=6, kv_rank=4 and n_heads=3 all differ."""
    d, H, r, seed = 18, 3, 4, 7
    seeded_weights(PUBLIC, seed, d, r)
    # case1: no mask, moderate scores, so every scale mistake shows.
    w1, x1 = write_case("case1", d=d, H=H, r=r, T=6, seed=seed, x_seed=701, scale=1.0,
                        mask=None, OUT=PUBLIC)
    # case2: causal, key 0 masked too (query 0 sees no key), scores in the tens.
    m2 = causal(6)
    m2[:, 0] = -np.inf
    write_case("case2", d=d, H=H, r=r, T=6, seed=seed, x_seed=702, scale=4.0, mask=m2,
               OUT=PUBLIC)
    new_W_UK = inputs(703, r, d, scale=0.4)
    save(PUBLIC, "case1_new_W_UK", new_W_UK)
    save(PUBLIC, "case1_output_new_W_UK", torch_mla(x1, dict(w1, W_UK=new_W_UK), H, None))


def main():
    public()
    # The seeded weights themselves (d_model=24, n_heads=4, kv_rank=10, seed 6).
    seeded_weights(OUT, 6, 24, 10)

    # case1: d_head=6, kv_rank=10, d_model=24 all differ; moderate scores, no
    # mask, so every scale mistake shows.
    w1, x1 = write_case("case1", d=24, H=4, r=10, T=7, seed=6, x_seed=601, scale=1.0, mask=None)
    # case2: d_head=4, kv_rank=5, d_model=12; causal, inputs scaled so that
    # scores reach the hundreds (exp overflows float32 without the max shift).
    write_case("case2", d=12, H=3, r=5, T=6, seed=62, x_seed=602, scale=9.0, mask=causal(6))
    # case3: causal and key 0 masked (padding), so query 0 sees no key at all:
    # its output row must be zero, not NaN.
    m3 = causal(5)
    m3[:, 0] = -np.inf
    write_case("case3", d=20, H=2, r=7, T=5, seed=63, x_seed=603, scale=1.5, mask=m3)

    # Overwriting W_UK (and W_DKV) on the case1 layer: new matrices and the
    # outputs they must give.
    new_W_UK = inputs(604, 10, 24, scale=0.3)
    new_W_DKV = inputs(605, 24, 10, scale=0.2)
    save(OUT, "case1_new_W_UK", new_W_UK)
    save(OUT, "case1_new_W_DKV", new_W_DKV)
    w_uk = dict(w1, W_UK=new_W_UK)
    save(OUT, "case1_output_new_W_UK", torch_mla(x1, w_uk, 4, None))
    save(OUT, "case1_latent_new_W_DKV", f64(x1) @ f64(new_W_DKV))


if __name__ == "__main__":
    main()
