#!/usr/bin/env python3
"""Goldens for lab 4 (causal and padding masks): tests/04_causal_mask/golden/
(the hidden tests') and labs/04_causal_mask/golden/ (the public tests', other
sizes: see public()).

Run from the repository root with Debian's Python:

    /usr/bin/python3 tests/04_causal_mask/gen_goldens.py

The masks are built with np.triu / np.where, independently of the C++ code;
the layer-level outputs come from torch.nn.MultiheadAttention (through
common.torch_mha) and the attention-level ones from torch ops
(common.torch_attention). Next to each golden, files named *_mistake_*.npy
hold what a classic mistake produces on the same inputs, so that a failing
test can say which mistake it looks like (docs/04_causal_mask.md,
"Classic mistakes").
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "goldens"))
import common  # noqa: E402  (tools/goldens/common.py)

OUT = common.golden_dir(__file__)
PUBLIC = common.public_golden_dir(__file__)
NEG_INF = np.float32(-np.inf)


def triu_mask(T, S, k, fill=NEG_INF):
    """0 on and below the k-th diagonal, `fill` strictly above it (np.triu's k)."""
    return np.triu(np.full((T, S), fill, dtype=np.float32), k=k) + np.float32(0)


def padding(T, key_valid):
    valid = np.asarray(key_valid, dtype=bool)
    return np.where(valid[None, :], np.float32(0), NEG_INF).repeat(T, axis=0).astype(np.float32)


def square_masks(out, T):
    """causal_mask(T) and the masks of four classic mistakes."""
    name = "causal_T%d" % T
    common.save(out, name, triu_mask(T, T, k=1))
    # Diagonal excluded: a token may not attend to itself (row 0 sees nothing).
    common.save(out, name + "_mistake_strict", triu_mask(T, T, k=0))
    # Transposed: the future is kept and the past removed.
    common.save(out, name + "_mistake_transposed", triu_mask(T, T, k=1).T)
    # Multiplicative 0/1 mask (1 keeps, 0 removes) used as if it were additive.
    common.save(out, name + "_mistake_multiplicative", np.tril(np.ones((T, T), np.float32)))
    # A large finite negative instead of -inf.
    common.save(out, name + "_mistake_finite", triu_mask(T, T, k=1, fill=np.float32(-1e9)))


def cache_masks(out, T, S):
    """causal_mask(T, S): T new queries at positions S-T ... S-1 of S."""
    name = "causal_T%d_S%d" % (T, S)
    right = triu_mask(T, S, k=S - T + 1)
    assert np.array_equal(right, common.causal(T, S))  # the shared helper agrees
    common.save(out, name, right)
    # Aligned top-left, as if the new queries were positions 0 ... T-1.
    common.save(out, name + "_mistake_top_left", triu_mask(T, S, k=1))
    # Bottom-right but with the diagonal excluded.
    common.save(out, name + "_mistake_strict", triu_mask(T, S, k=S - T))
    common.save(out, name + "_mistake_finite", triu_mask(T, S, k=S - T + 1, fill=np.float32(-1e9)))


def padding_masks(out, T, valid, combined_T, combined_valid, finite_seed, finite_T, finite_S):
    """padding_mask(T, valid), and causal_mask(combined_T, S) + padding_mask(combined_T,
    combined_valid) with S = len(combined_valid)."""
    name = "padding_T%d_S%d" % (T, len(valid))
    common.save(out, name, padding(T, valid))
    common.save(out, name + "_mistake_inverted", padding(T, [not v for v in valid]))

    S = len(combined_valid)
    name = "combined_T%d_S%d" % (combined_T, S)
    causal = common.causal(combined_T, S)
    pad = padding(combined_T, combined_valid)
    common.save(out, name, causal + pad)
    # Combining with max keeps a key unless BOTH masks remove it.
    common.save(out, name + "_mistake_max", np.maximum(causal, pad))
    finite_combination(out, "combined_finite", finite_seed, finite_T, finite_S)


def finite_combination(out, name, seed, T, S):
    """Two finite additive masks (a learned bias, say) and their sum: max and
    min differ from the sum here, where on 0/-inf masks min happens to agree."""
    a = common.inputs(seed, T, S)
    b = common.inputs(seed + 1, T, S)
    common.save(out, name + "_a", a)
    common.save(out, name + "_b", b)
    common.save(out, name, a + b)
    common.save(out, name + "_mistake_max", np.maximum(a, b))
    common.save(out, name + "_mistake_min", np.minimum(a, b))


def hidden_masks():
    """The hidden tests' masks: causal_mask(6), causal_mask(3, 7) (three new
    queries at positions 4, 5, 6 of seven), padding_mask(3, {1,0,1,1,0}) and
    causal_mask(4, 6) + padding_mask(4, {0,1,1,1,1,0})."""
    square_masks(OUT, 6)
    cache_masks(OUT, 3, 7)
    padding_masks(OUT, 3, [True, False, True, True, False],
                  4, [False, True, True, True, True, False], 43, 3, 4)


def public():
    """The public tests' goldens (labs/04_causal_mask/golden): other sizes than
    the hidden ones, each with the masks of the classic mistakes."""
    square_masks(PUBLIC, 5)
    cache_masks(PUBLIC, 2, 5)  # two new tokens at positions 3 and 4 of five
    padding_masks(PUBLIC, 2, [False, True, True, False], 3, [True, False, True, True, True],
                  45, 2, 3)


def layer_forward():
    """MultiHeadAttention(12, 3, seed=4).forward(x, causal_mask(5)) through torch.

    Inputs are scaled so that scores reach the tens: an unstabilised softmax
    would overflow, and a wrong mask moves the outputs by O(1).
    """
    d_model, n_heads, T, seed = 12, 3, 5, 4
    rng = np.random.default_rng(seed)
    W_Q, W_K, W_V, W_O = (common.weights(rng, d_model, d_model, d_model) for _ in range(4))
    x = common.inputs(40, T, d_model, scale=4.0)
    common.save(OUT, "layer_x", x)

    def run(mask):
        return common.torch_mha(x, W_Q, W_K, W_V, W_O, n_heads, mask)

    common.save(OUT, "layer_causal_output", run(common.causal(T)))
    common.save(OUT, "layer_causal_output_mistake_strict", run(triu_mask(T, T, k=0)))
    common.save(OUT, "layer_causal_output_mistake_transposed", run(triu_mask(T, T, k=1).T))
    common.save(OUT, "layer_causal_output_mistake_multiplicative",
                run(np.tril(np.ones((T, T), np.float32))))


def huge_masked_key():
    """Attention where the last key has a huge score and a huge value.

    Only the last query may see that key. With -inf in the mask it gets
    exactly zero weight from every other query; with any finite mask (or a
    0/1 mask added to the scores) its score of ~1e12 wins and its value of
    1e30 floods every row.
    """
    H, T, d_head = 2, 5, 3
    q = np.abs(common.inputs(50, H, T, d_head)) + np.float32(0.5)  # positive, so q.k > 0
    k = common.inputs(51, H, T, d_head)
    v = common.inputs(52, H, T, d_head)
    k[:, -1, :] = np.float32(1e12)
    v[:, -1, :] = np.float32(1e30)
    common.save(OUT, "huge_key_q", q)
    common.save(OUT, "huge_key_k", k)
    common.save(OUT, "huge_key_v", v)
    out, _ = common.torch_attention(q, k, v, common.causal(T))
    common.save(OUT, "huge_key_output", out)
    leaked, _ = common.torch_attention(q, k, v, triu_mask(T, T, k=1, fill=np.float32(-1e9)))
    assert np.allclose(leaked, np.broadcast_to(v[:, -1:, :], leaked.shape))
    common.save(OUT, "huge_key_output_mistake_leak", leaked)


def main():
    public()
    hidden_masks()
    layer_forward()
    huge_masked_key()
    print("wrote goldens to", OUT)


if __name__ == "__main__":
    main()
