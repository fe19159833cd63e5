#!/usr/bin/env python3
"""Golden files for lab 3 (03_output_projection): the full multi-head layer.

Run from the repository root with Debian's Python:

    /usr/bin/python3 tests/03_output_projection/gen_goldens.py

Writes tests/03_output_projection/golden/*.npy (the hidden tests' goldens) and
labs/03_output_projection/golden/*.npy (the public tests': another layer, see
public()), float32. The numbers come from NumPy and PyTorch, independently of
the C++ code:

* seeded weights: np.random.default_rng(seed), W_Q, W_K, W_V, W_O in that
  order, each (d_model, d_model) with fan-in d_model, exactly as the NumPy
  lesson's MultiHeadAttention.__init__ draws them (common.weights);
* layer outputs: torch.nn.MultiheadAttention (common.torch_mha) in float64;
* per-head attention weights and outputs: common.torch_attention on the
  projections split into heads with NumPy's reshape + transpose.

Files (d_model=12, n_heads=3 so d_head=4, T=5, weight seed 7 unless named):

  weights_seed7_d12            (4, 12, 12) W_Q, W_K, W_V, W_O stacked
  weights_seed0_d6             (4, 6, 6)   the default seed, d_model=6
  x, x_large                   (5, 12) inputs; x_large has logits in the hundreds
  mask_causal, mask_empty_row  (5, 5) additive masks; the second hides every
                               key from query 0 (a fully masked row)
  <case>_forward               (5, 12) forward output for case in
                               plain, causal, empty_row, large
  <case>_forward_mistake_<m>   what a classic mistake <m> outputs instead
  attend_weights, attend_output           (3, 5, 5) / (3, 5, 4), x without mask
  attend_empty_row_weights                (3, 5, 5), x with mask_empty_row
  attend_*_mistake_<m>
  single_head_forward          (5, 12) n_heads=1: plain attention then @ W_O
  new_w_o, new_w_q             (12, 12) replacement weights
  overwrite_w_o_forward, overwrite_w_q_forward   forward after overwriting
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "goldens"))
import common  # noqa: E402  (tools/goldens/common.py)

OUT = common.golden_dir(__file__)
PUBLIC = common.public_golden_dir(__file__)

T, D_MODEL, N_HEADS = 5, 12, 3
D_HEAD = D_MODEL // N_HEADS
SEED = 7


def per_head(x, W_Q, W_K, W_V, n_heads, mask, scale=None, split_fn=common.split_heads):
    """Per-head attention in float64 torch. `scale` replaces 1/sqrt(d_head)."""
    x64 = x.astype(np.float64)
    q, k, v = (split_fn(x64 @ W.astype(np.float64), n_heads) for W in (W_Q, W_K, W_V))
    if scale is not None:
        # torch_attention divides by sqrt(d_head); rescale q to get `scale`.
        q = q * (scale * np.sqrt(q.shape[-1]))
    return common.torch_attention(q, k, v, mask)


def reshape_split(a, n_heads):
    """The mistake: (T, d_model) reshaped straight to (H, T, d_head)."""
    t, d = a.shape
    return a.reshape(n_heads, t, d // n_heads)


def block_diagonal(W, n_heads):
    """W_O with every off-diagonal (d_head, d_head) block zeroed: no mixing."""
    d = W.shape[0]
    dh = d // n_heads
    out = np.zeros_like(W)
    for h in range(n_heads):
        out[h * dh:(h + 1) * dh, h * dh:(h + 1) * dh] = W[h * dh:(h + 1) * dh, h * dh:(h + 1) * dh]
    return out


def forward_mistakes(x, Ws, mask, n_heads=N_HEADS):
    """What each classic mistake outputs on (x, mask) with draws Ws = [d0..d3]."""
    W_Q, W_K, W_V, W_O = Ws
    t, d_model = x.shape
    out, _ = per_head(x, W_Q, W_K, W_V, n_heads, mask)
    concat = common.combine_heads(out)
    out_dm, _ = per_head(x, W_Q, W_K, W_V, n_heads, mask, scale=1 / np.sqrt(d_model))
    out_rs, _ = per_head(x, W_Q, W_K, W_V, n_heads, mask, split_fn=reshape_split)
    return {
        "no_w_o": concat,
        "dmodel_scale": common.combine_heads(out_dm) @ W_O,
        "w_o_drawn_first": common.torch_mha(x, Ws[1], Ws[2], Ws[3], Ws[0], n_heads, mask),
        "k_drawn_before_q": common.torch_mha(x, Ws[1], Ws[0], Ws[2], Ws[3], n_heads, mask),
        # split and combine both as bare reshapes, no transpose
        "split_without_transpose": out_rs.reshape(t, d_model) @ W_O,
        "w_o_per_head": concat @ block_diagonal(W_O, n_heads),
        "w_o_transposed": concat @ W_O.T,
    }


def attend_mistakes(x, Ws, mask, which, n_heads=N_HEADS):
    """Per-head attend() results of the mistakes that change them; which: 0 output, 1 weights."""
    W_Q, W_K, W_V, W_O = Ws
    d_model = x.shape[1]
    return {
        "dmodel_scale": per_head(x, W_Q, W_K, W_V, n_heads, mask, scale=1 / np.sqrt(d_model))[which],
        "split_without_transpose": per_head(x, W_Q, W_K, W_V, n_heads, mask,
                                            split_fn=reshape_split)[which],
        "w_o_drawn_first": per_head(x, Ws[1], Ws[2], Ws[3], n_heads, mask)[which],
        "k_drawn_before_q": per_head(x, Ws[1], Ws[0], Ws[2], n_heads, mask)[which],
    }


def save_with_mistakes(name, value, mistakes, out=OUT):
    common.save(out, name, value)
    for m, wrong in mistakes.items():
        assert not np.allclose(wrong, value, atol=1e-3), (name, m)
        common.save(out, name + "_mistake_" + m, wrong)


def public():
    """The public tests' goldens (labs/03_output_projection/golden): another
    layer than the hidden tests' (d_model=10, n_heads=2 so d_head=5, T=4,
    seed 5), with a random W_O, a causal mask and logits in the hundreds, so
    that every classic mistake changes the numbers."""
    d_model, n_heads, t, seed = 10, 2, 4, 5
    Ws = common.draws(seed, d_model)
    W_Q, W_K, W_V, W_O = Ws
    common.save(PUBLIC, "weights_seed5_d10", np.stack(Ws))
    common.save(PUBLIC, "weights_seed5_d10_mistake_w_o_drawn_first",
                np.stack([Ws[1], Ws[2], Ws[3], Ws[0]]))
    common.save(PUBLIC, "weights_seed5_d10_mistake_k_drawn_before_q",
                np.stack([Ws[1], Ws[0], Ws[2], Ws[3]]))

    x = common.inputs(121, t, d_model)
    x_large = common.inputs(122, t, d_model, scale=20.0)
    q = common.split_heads(x_large.astype(np.float64) @ W_Q, n_heads)
    k = common.split_heads(x_large.astype(np.float64) @ W_K, n_heads)
    max_logit = np.abs(q @ k.transpose(0, 2, 1) / np.sqrt(d_model // n_heads)).max()
    assert max_logit > 200, max_logit
    causal = common.causal(t)
    common.save(PUBLIC, "x", x)
    common.save(PUBLIC, "x_large", x_large)
    common.save(PUBLIC, "mask_causal", causal)
    for case, xi, mask in (("plain", x, None), ("causal", x, causal), ("large", x_large, None)):
        y = common.torch_mha(xi, W_Q, W_K, W_V, W_O, n_heads, mask)
        assert np.all(np.isfinite(y))
        save_with_mistakes(case + "_forward", y, forward_mistakes(xi, Ws, mask, n_heads), PUBLIC)
    _, w = per_head(x, W_Q, W_K, W_V, n_heads, causal)
    save_with_mistakes("attend_causal_weights", w, attend_mistakes(x, Ws, causal, 1, n_heads),
                       PUBLIC)

    # Overwriting W_Q: the next forward must use it.
    new_w_q = common.inputs(123, d_model, d_model, scale=1 / np.sqrt(d_model))
    common.save(PUBLIC, "new_w_q", new_w_q)
    common.save(PUBLIC, "overwrite_w_q_forward",
                common.torch_mha(x, new_w_q, W_K, W_V, W_O, n_heads))


def main():
    public()
    Ws = common.draws(SEED, D_MODEL)
    W_Q, W_K, W_V, W_O = Ws

    # Seeded weights, bit for bit, plus the stacks two wrong draw orders give.
    common.save(OUT, "weights_seed7_d12", np.stack(Ws))
    common.save(OUT, "weights_seed7_d12_mistake_w_o_drawn_first", np.stack([Ws[1], Ws[2], Ws[3], Ws[0]]))
    common.save(OUT, "weights_seed7_d12_mistake_k_drawn_before_q", np.stack([Ws[1], Ws[0], Ws[2], Ws[3]]))
    common.save(OUT, "weights_seed0_d6", np.stack(common.draws(0, 6)))

    x = common.inputs(101, T, D_MODEL)
    # Scale 20: projections ~ N(0, 400), so logits q.k/sqrt(d_head) have a
    # standard deviation near 400, far beyond float32 exp's overflow at ~88.
    x_large = common.inputs(202, T, D_MODEL, scale=20.0)
    q = common.split_heads(x_large.astype(np.float64) @ W_Q, N_HEADS)
    k = common.split_heads(x_large.astype(np.float64) @ W_K, N_HEADS)
    max_logit = np.abs(q @ k.transpose(0, 2, 1) / np.sqrt(D_HEAD)).max()
    assert max_logit > 200, max_logit
    print("x_large: max |logit| = %.0f" % max_logit)

    causal = common.causal(T)
    empty_row = causal.copy()
    empty_row[:, 0] = -np.inf  # key 0 hidden from everyone: query 0 sees nothing
    common.save(OUT, "x", x)
    common.save(OUT, "x_large", x_large)
    common.save(OUT, "mask_causal", causal)
    common.save(OUT, "mask_empty_row", empty_row)

    # The layer, through torch.nn.MultiheadAttention.
    for case, xi, mask in (("plain", x, None), ("causal", x, causal),
                           ("empty_row", x, empty_row), ("large", x_large, None)):
        y = common.torch_mha(xi, W_Q, W_K, W_V, W_O, N_HEADS, mask)
        assert np.all(np.isfinite(y))
        if case == "empty_row":
            assert np.all(y[0] == 0.0) and np.any(y[1] != 0.0)
        save_with_mistakes(case + "_forward", y, forward_mistakes(xi, Ws, mask))

    # attend(): per-head outputs and weights before combine and W_O.
    out, w = per_head(x, W_Q, W_K, W_V, N_HEADS, None)
    save_with_mistakes("attend_output", out, attend_mistakes(x, Ws, None, 0))
    save_with_mistakes("attend_weights", w, attend_mistakes(x, Ws, None, 1))
    _, w_er = per_head(x, W_Q, W_K, W_V, N_HEADS, empty_row)
    assert np.all(w_er[:, 0, :] == 0.0)
    save_with_mistakes("attend_empty_row_weights", w_er, attend_mistakes(x, Ws, empty_row, 1))

    # n_heads = 1: one full-width head, plain scaled dot-product attention.
    xt = torch.from_numpy(x.astype(np.float64))
    Q, K, V = (xt @ torch.from_numpy(W.astype(np.float64)) for W in (W_Q, W_K, W_V))
    p = torch.softmax(Q @ K.T / np.sqrt(D_MODEL), dim=-1)
    single = (p @ V).numpy() @ W_O
    assert np.allclose(single, common.torch_mha(x, W_Q, W_K, W_V, W_O, 1), atol=1e-9)
    common.save(OUT, "single_head_forward", single)

    # Overwritten weights: the next forward must use them.
    new_w_o = common.inputs(303, D_MODEL, D_MODEL, scale=1 / np.sqrt(D_MODEL))
    new_w_q = common.inputs(404, D_MODEL, D_MODEL, scale=1 / np.sqrt(D_MODEL))
    common.save(OUT, "new_w_o", new_w_o)
    common.save(OUT, "new_w_q", new_w_q)
    common.save(OUT, "overwrite_w_o_forward", common.torch_mha(x, W_Q, W_K, W_V, new_w_o, N_HEADS))
    common.save(OUT, "overwrite_w_q_forward", common.torch_mha(x, new_w_q, W_K, W_V, W_O, N_HEADS))

    print("wrote %d files to %s" % (len(os.listdir(OUT)), OUT))


if __name__ == "__main__":
    main()
