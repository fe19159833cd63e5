#!/usr/bin/env python3
"""Goldens for lab 5 (grouped-query attention): tests/05_grouped_query_attention/golden/
(the hidden tests') and labs/05_grouped_query_attention/golden/ (the public
tests', another layer: see public()).

Run from the repository root with Debian's Python:

    /usr/bin/python3 tests/05_grouped_query_attention/gen_goldens.py

repeat_kv is checked against np.repeat; the layer against a float64 torch
computation that shares K/V heads with torch.repeat_interleave (MQA: by
expanding the one K/V head) and then calls common.torch_attention.
Files named *_mistake_*.npy hold what a classic mistake produces on the same
inputs (docs/05_grouped_query_attention.md, "Classic mistakes").

The script also prints the parameter and KV-cache table of the lesson
(docs/05_grouped_query_attention.md, "How much does sharing save?"), computed
here from the weight shapes and checked against the closed-form formulas.
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "goldens"))
import common  # noqa: E402  (tools/goldens/common.py)

OUT = common.golden_dir(__file__)
PUBLIC = common.public_golden_dir(__file__)


# ------------------------------------------------------------------ weights

def draw_weights(seed, d_model, n_heads, n_kv_heads):
    """The API's draw: W_Q (d, d), W_K (d, G*dh), W_V (d, G*dh), W_O (d, d), fan-in d."""
    return common.gqa_weights(seed, d_model, n_heads, n_kv_heads)


def draw_weights_mistake_order(seed, d_model, n_heads, n_kv_heads):
    """Mistake: the two square matrices first (W_Q, W_O, then W_K, W_V)."""
    return common.gqa_weights(seed, d_model, n_heads, n_kv_heads, order="QOKV")


def draw_weights_mistake_square(seed, d_model):
    """Mistake: lab 3's draw, W_K and W_V (d, d) (no sharing at all)."""
    rng = np.random.default_rng(seed)
    return tuple(common.weights(rng, d_model, d_model, d_model) for _ in range(4))


def draw_weights_mistake_fanin(seed, d_model, n_heads, n_kv_heads):
    """Mistake: W_K and W_V scaled by 1/sqrt(G*d_head) instead of 1/sqrt(d_model)."""
    return common.gqa_weights(seed, d_model, n_heads, n_kv_heads,
                              kv_fan_in=n_kv_heads * (d_model // n_heads))


# ------------------------------------------------------------ torch reference

def torch_gqa(x, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads, mask=None, share="repeat"):
    """GQA forward in float64 torch. share="repeat" is the right sharing
    (torch.repeat_interleave); "tile" is the classic mistake (Tensor.repeat)."""
    T, d_model = x.shape
    d_head = d_model // n_heads
    xt = torch.from_numpy(x.astype(np.float64))

    def heads(W, n):  # (T, n*d_head) -> (n, T, d_head)
        return (xt @ torch.from_numpy(W.astype(np.float64))).reshape(T, n, d_head).transpose(0, 1)

    q = heads(W_Q, n_heads)
    k = heads(W_K, n_kv_heads)
    v = heads(W_V, n_kv_heads)
    group = n_heads // n_kv_heads
    if share == "repeat":
        k, v = k.repeat_interleave(group, dim=0), v.repeat_interleave(group, dim=0)
    else:
        k, v = k.repeat(group, 1, 1), v.repeat(group, 1, 1)
    out, _ = common.torch_attention(q.numpy(), k.numpy(), v.numpy(), mask)  # (H, T, d_head)
    concat = torch.from_numpy(out).transpose(0, 1).reshape(T, d_model)
    return (concat @ torch.from_numpy(W_O.astype(np.float64))).numpy()


def torch_mqa(x, W_Q, W_K, W_V, W_O, n_heads, mask=None):
    """MQA (one K/V head) in float64 torch: the single head is expanded by hand."""
    T, d_model = x.shape
    d_head = d_model // n_heads
    xt = torch.from_numpy(x.astype(np.float64))
    q = (xt @ torch.from_numpy(W_Q.astype(np.float64))).reshape(T, n_heads, d_head).transpose(0, 1)
    k1 = xt @ torch.from_numpy(W_K.astype(np.float64))  # (T, d_head)
    v1 = xt @ torch.from_numpy(W_V.astype(np.float64))  # (T, d_head)
    k = k1.unsqueeze(0).expand(n_heads, T, d_head)
    v = v1.unsqueeze(0).expand(n_heads, T, d_head)
    scores = q @ k.transpose(-1, -2) / np.sqrt(d_head)
    if mask is not None:
        scores = scores + torch.from_numpy(mask.astype(np.float64))
    w = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    concat = (w @ v).transpose(0, 1).reshape(T, d_model)
    return (concat @ torch.from_numpy(W_O.astype(np.float64))).numpy()


# ------------------------------------------------------------------ goldens

def repeat_goldens():
    kv = common.inputs(60, 2, 3, 5)  # (n_kv_heads=2, S=3, d_head=5)
    common.save(OUT, "repeat_kv_input", kv)
    common.save(OUT, "repeat_kv_6heads", np.repeat(kv, 3, axis=0))
    common.save(OUT, "repeat_kv_6heads_mistake_tiled", np.tile(kv, (3, 1, 1)))


def group_goldens():
    """d_model=16, 8 query heads, 2 kv heads, d_head=2: kv head g holds the constant
    10*(g+1) and W_O is the identity, so output column block h says which kv head
    query head h read."""
    T, H, G, d_head = 3, 8, 2, 2
    group = H // G
    right = np.zeros((T, H * d_head), np.float32)
    tiled = np.zeros((T, H * d_head), np.float32)
    for h in range(H):
        right[:, h * d_head:(h + 1) * d_head] = 10 * (h // group + 1)
        tiled[:, h * d_head:(h + 1) * d_head] = 10 * (h % G + 1)
    common.save(OUT, "group_reads", right)
    common.save(OUT, "group_reads_mistake_tiled", tiled)


def layer_case(out, wprefix, xname, oprefix, d_model, H, G, T, seed, x_seed):
    """GroupedQueryAttention(d_model, H, G, seed): its weights (with the draws of
    three mistakes) and forward, with and without a causal mask; inputs scaled
    so that scores reach the tens."""
    W = draw_weights(seed, d_model, H, G)
    for name, w in zip(("W_Q", "W_K", "W_V", "W_O"), W):
        common.save(out, wprefix + name, w)
    order = draw_weights_mistake_order(seed, d_model, H, G)
    square = draw_weights_mistake_square(seed, d_model)
    fanin = draw_weights_mistake_fanin(seed, d_model, H, G)
    for i, name in enumerate(("W_Q", "W_K", "W_V", "W_O")):
        if not np.array_equal(order[i], W[i]):
            common.save(out, wprefix + "%s_mistake_order" % name, order[i])
        if not np.array_equal(fanin[i], W[i]):
            common.save(out, wprefix + "%s_mistake_fanin" % name, fanin[i])
        if not np.array_equal(square[i], W[i]) and name != "W_Q":
            common.save(out, wprefix + "%s_mistake_square" % name, square[i])

    x = common.inputs(x_seed, T, d_model, scale=4.0)
    common.save(out, xname, x)
    mask = common.causal(T)
    for suffix, m in (("", None), ("_causal", mask)):
        common.save(out, oprefix + suffix, torch_gqa(x, *W, H, G, m))
        common.save(out, "%s%s_mistake_tiled" % (oprefix, suffix),
                    torch_gqa(x, *W, H, G, m, share="tile"))
        common.save(out, "%s%s_mistake_order" % (oprefix, suffix), torch_gqa(x, *order, H, G, m))
        common.save(out, "%s%s_mistake_fanin" % (oprefix, suffix), torch_gqa(x, *fanin, H, G, m))
        # Lab 3's layer with the same seed: square W_K, W_V, no sharing.
        common.save(out, "%s%s_mistake_square" % (oprefix, suffix),
                    common.torch_mha(x, *square, H, m))
    common.save(out, oprefix + "_causal_mistake_no_mask", torch_gqa(x, *W, H, G, None))
    # The shared-head path agrees with torch's own layer when nothing is shared.
    Wm = draw_weights(seed, d_model, H, H)
    assert np.allclose(torch_gqa(x, *Wm, H, H, mask), common.torch_mha(x, *Wm, H, mask))
    return mask


def layer_goldens():
    """GroupedQueryAttention(16, 4, 2, seed=3), the hidden tests' main layer."""
    layer_case(OUT, "gqa_seed3_", "gqa_x", "gqa_output", d_model=16, H=4, G=2, T=5, seed=3,
               x_seed=70)


def public():
    """The public tests' goldens (labs/05_grouped_query_attention/golden): another
    layer, GroupedQueryAttention(24, 4, 2, seed=4): d_head=6, groups of 2, so
    d_head, n_heads and n_kv_heads all differ; and repeat_kv of 3 kv heads."""
    mask = layer_case(PUBLIC, "seed4_", "x", "output", d_model=24, H=4, G=2, T=5, seed=4,
                      x_seed=91)
    common.save(PUBLIC, "mask_causal", mask)
    kv = common.inputs(92, 3, 2, 4)  # (n_kv_heads=3, S=2, d_head=4)
    common.save(PUBLIC, "repeat_kv_input", kv)
    common.save(PUBLIC, "repeat_kv_6heads", np.repeat(kv, 2, axis=0))
    common.save(PUBLIC, "repeat_kv_6heads_mistake_tiled", np.tile(kv, (2, 1, 1)))


def mqa_goldens():
    """GroupedQueryAttention(16, 4, 1, seed=8): multi-query attention, causal."""
    d_model, H, T, seed = 16, 4, 5, 8
    W = draw_weights(seed, d_model, H, 1)
    x = common.inputs(80, T, d_model, scale=4.0)
    common.save(OUT, "mqa_x", x)
    mask = common.causal(T)
    y = torch_mqa(x, *W, H, mask)
    assert np.allclose(y, torch_gqa(x, *W, H, 1, mask))
    common.save(OUT, "mqa_output_causal", y)
    common.save(OUT, "mqa_output_causal_mistake_square",
                common.torch_mha(x, *draw_weights_mistake_square(seed, d_model), H, mask))


# ---------------------------------------------------- the lesson's exercise

def production_table():
    """Parameters and KV cache per layer, MHA vs GQA (8 kv heads) vs MQA."""
    rows = []
    for d_model, H in ((768, 12), (1024, 16), (2048, 16), (8192, 64)):
        d_head = d_model // H

        def params(G):
            # Count from the weight shapes: W_Q, W_K, W_V, W_O.
            shapes = [(d_model, d_model), (d_model, G * d_head), (d_model, G * d_head),
                      (d_model, d_model)]
            n = sum(r * c for r, c in shapes)
            assert n == 2 * d_model**2 + 2 * d_model * G * d_head  # the header's formula
            return n

        def cache(G):
            return 2 * G * d_head

        mha, mqa = params(H), params(1)
        assert mha == 4 * d_model**2
        saved = mha - mqa
        assert saved == 2 * d_model * (d_model - d_head)
        gqa8 = params(8) if H % 8 == 0 else None
        rows.append((d_model, H, d_head, mha, mqa, saved, 100.0 * saved / mha, gqa8,
                     cache(H), cache(8) if H % 8 == 0 else None, cache(1)))

    print("| d_model | n_heads | d_head | MHA params | MQA params | MQA saves | GQA-8 params |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        gqa = "{:,}".format(r[7]) if r[7] is not None else "not allowed (12 % 8 != 0)"
        print("| {} | {} | {} | {:,} | {:,} | {:,} ({:.1f}%) | {} |".format(
            r[0], r[1], r[2], r[3], r[4], r[5], r[6], gqa))
    print()
    print("| d_model | n_heads | MHA cache | GQA-8 cache | shrink | MQA cache | shrink |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        H = r[1]
        if r[9] is not None:
            gqa, gshrink = "{:,}".format(r[9]), "{}x".format(H // 8)
            assert r[8] // r[9] == H // 8
        else:
            gqa, gshrink = "-", "-"
        assert r[8] // r[10] == H
        print("| {} | {} | {:,} | {} | {} | {:,} | {}x |".format(
            r[0], H, r[8], gqa, gshrink, r[10], H))
    print()
    # The doc's example: the 8192-wide model, 80 layers, 128k tokens, 2-byte floats.
    layers, tokens, nbytes = 80, 128 * 1024, 2
    mha_gb = rows[-1][8] * layers * tokens * nbytes / 1e9
    gqa_gb = rows[-1][9] * layers * tokens * nbytes / 1e9
    print("KV cache, d_model=8192, 80 layers, 128k tokens, 2 bytes: "
          "MHA {:.0f} GB, GQA-8 {:.0f} GB".format(mha_gb, gqa_gb))


def main():
    public()
    repeat_goldens()
    group_goldens()
    layer_goldens()
    mqa_goldens()
    print("wrote goldens to", OUT)
    print()
    production_table()


if __name__ == "__main__":
    main()
