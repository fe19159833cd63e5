#!/usr/bin/env python3
"""Golden files for lab 11 (11_rotary_embeddings): rotary position embeddings.

Run from the repository root with Debian's Python:

    /usr/bin/python3 tests/11_rotary_embeddings/gen_goldens.py

Writes tests/11_rotary_embeddings/golden/*.npy (hidden tests) and
labs/11_rotary_embeddings/golden/*.npy (public tests), float32.

The rotation is written the way Hugging Face's Llama writes it, in float64
PyTorch: inv_freq = 1 / base^(arange(0, d, 2) / d), emb = cat(freqs, freqs),
x * cos(emb) + rotate_half(x) * sin(emb), with rotate_half(x) = cat(-x2, x1)
(apply_rotary_pos_emb below). The layer projects, splits the heads, rotates q
and k, attends (common.torch_attention) and applies W_O, all in float64.

Next to each right answer, what one classic mistake computes on the same
input, `<case>_mistake_<name>.npy`, so a failing test can name the mistake
(docs/11_rotary_embeddings.md, "Classic mistakes"; the names are those of
labs/11_rotary_embeddings/rotary_embeddings_test_util.h):

  adjacent_pairs     pairs (2i, 2i+1), as Meta's original Llama code (view_as_complex)
  exponent_i         theta_i = base^(-i/d_head) instead of base^(-2i/d_head)
  float_angles       p * theta_i multiplied in float32 (theta_i rounded to float first)
  sin_sign           the rotation by -p * theta_i
  values_rotated     v rotated like q and k
  before_split       the rotation applied over d_model before split_heads
  restart_positions  a decoder that rotates each step's tokens from position 0
  rotated_twice      a decoder that rotates the (already rotated) cached keys again
  unrotated_cache    (cache only) keys cached before they were rotated

Files, for a rotation case C:  C_x (H, T, d_head), C_out, C_out_mistake_*.
For a layer case L:  L_W_Q .. L_W_O (the seeded draws), L_x (T, d_model),
L_forward (causal), L_forward_mistake_*, and for the decoder
L_<schedule>_mistake_* (rows a mistaken decoder returns for that chunking),
L_keys / L_values (H, T, d_head, what the cache holds at the end of the
"chunks" schedule) with their mistakes. The simulation of the decoder must
agree with the full forward for every chunking before anything is written.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "goldens"))
import common  # noqa: E402  (tools/goldens/common.py)
import torch  # noqa: E402

HIDDEN = common.golden_dir(__file__)
PUBLIC = common.public_golden_dir(__file__)


# --------------------------------------------------------------- the rotation

def rotate_half(x):
    """Hugging Face Llama's rotate_half: (x1, x2) -> (-x2, x1) over the last axis."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def inv_freq(d, base, exponent=2):
    """theta_i for pair i, float64 (exponent 1 is the i/d mistake)."""
    i = torch.arange(0, d // 2, dtype=torch.float64)
    return 1.0 / (base ** (exponent * i / d))


def cos_sin(positions, d, base, exponent=2, float_angles=False):
    """(T, d) cos and sin as Llama's rotary embedding caches them: each pair's
    angle twice (cat(freqs, freqs)), for the given absolute positions."""
    p = torch.as_tensor(np.asarray(positions, np.float64))
    theta = inv_freq(d, base, exponent)
    if float_angles:
        # the mistake: theta rounded to float, then p * theta multiplied in float32
        freqs = torch.outer(p.float(), theta.float())
        c, s = freqs.cos().double(), freqs.sin().double()
    else:
        freqs = torch.outer(p, theta)
        c, s = freqs.cos(), freqs.sin()
    return torch.cat((c, c), dim=-1), torch.cat((s, s), dim=-1)


def apply_rotary_pos_emb(x, cos, sin):
    """x (..., T, d) rotated as Hugging Face's Llama does (half-split pairs)."""
    return x * cos + rotate_half(x) * sin


def rope(x, positions, base, mistake=None):
    """x (H, T, d) float64 numpy, row t at positions[t] -> rotated (H, T, d).
    `mistake` switches one classic error of the rotation itself on."""
    x = common.t64(x)
    d = x.shape[-1]
    if mistake == "adjacent_pairs":
        # Meta's original Llama: consecutive features are one complex number.
        p = torch.as_tensor(np.asarray(positions, np.float64))
        freqs = torch.outer(p, inv_freq(d, base))
        rot = torch.polar(torch.ones_like(freqs), freqs)  # (T, d/2) complex
        xc = torch.view_as_complex(x.reshape(*x.shape[:-1], d // 2, 2).contiguous())
        return torch.view_as_real(xc * rot).reshape(x.shape).numpy()
    cos, sin = cos_sin(positions, d, base,
                       exponent=1 if mistake == "exponent_i" else 2,
                       float_angles=mistake == "float_angles")
    if mistake == "sin_sign":
        sin = -sin
    return apply_rotary_pos_emb(x, cos, sin).numpy()


ROTATION_MISTAKES = ["adjacent_pairs", "exponent_i", "float_angles", "sin_sign"]


def rotation_case(out, name, H, T, d, start, base, x_seed):
    x = common.inputs(x_seed, H, T, d)
    positions = np.arange(start, start + T)
    common.save(out, name + "_x", x)
    y = rope(common.f64(x), positions, base)
    # Norm preservation, checked here too: each pair keeps its length.
    half = d // 2
    n_in = x.astype(np.float64)[..., :half] ** 2 + x.astype(np.float64)[..., half:] ** 2
    n_out = y[..., :half] ** 2 + y[..., half:] ** 2
    assert np.allclose(n_in, n_out, rtol=1e-12, atol=1e-12), name
    common.save(out, name + "_out", y)
    for m in ROTATION_MISTAKES:
        common.save(out, name + "_out_mistake_" + m, rope(common.f64(x), positions, base, m))


def angles_case(out, name, n, d, base):
    p = torch.arange(n, dtype=torch.float64)
    common.save(out, name + "_angles", torch.outer(p, inv_freq(d, base)).numpy())
    common.save(out, name + "_angles_mistake_exponent_i",
                torch.outer(p, inv_freq(d, base, exponent=1)).numpy())


# ------------------------------------------------------------------ the layer

def project(x, W, H, positions, base, mistake=None):
    """q, k, v (H, T, d_head) float64 of the tokens x (T, d_model) at `positions`."""
    W_Q, W_K, W_V, _ = (common.f64(w) for w in W)
    x = common.f64(x)
    Q, K, V = x @ W_Q, x @ W_K, x @ W_V
    rot = mistake if mistake in ROTATION_MISTAKES else None
    if mistake == "before_split":
        # one "head" of width d_model: pairs (i, i + d_model/2), theta of d_model
        Q, K = (rope(M[None], positions, base)[0] for M in (Q, K))
        return common.split_heads(Q, H), common.split_heads(K, H), common.split_heads(V, H)
    q, k, v = (common.split_heads(M, H) for M in (Q, K, V))
    q, k = rope(q, positions, base, rot), rope(k, positions, base, rot)
    if mistake == "values_rotated":
        v = rope(v, positions, base)
    return q, k, v


def forward(x, W, H, base, mask, start=0, mistake=None):
    """The full layer, float64: (T, d_model)."""
    T = x.shape[0]
    q, k, v = project(x, W, H, np.arange(start, start + T), base, mistake)
    out, _ = common.torch_attention(q, k, v, mask)
    return common.combine_heads(out) @ common.f64(W[3])


def decode(x, W, H, base, chunks, mistake=None):
    """Replays a decoder fed x in `chunks`; returns (rows (T, d_model), cached keys,
    cached values (H, T, d_head)). `mistake` switches one decoder error on."""
    rows, ks, vs, P = [], [], [], 0
    for t in chunks:
        x_new = x[P:P + t]
        start = 0 if mistake == "restart_positions" else P
        positions = np.arange(start, start + t)
        if mistake == "unrotated_cache":
            q, _, v = project(x_new, W, H, positions, base)
            k = common.split_heads(common.f64(x_new) @ common.f64(W[1]), H)  # not rotated
        else:
            q, k, v = project(x_new, W, H, positions, base, mistake)
        ks.append(k)
        vs.append(v)
        K, V = np.concatenate(ks, axis=1), np.concatenate(vs, axis=1)  # (H, P + t, d_head)
        if mistake == "rotated_twice":
            K = rope(K, np.arange(P + t), base)  # turned a second time at every step
        out, _ = common.torch_attention(q, K, V, common.causal(t, P + t))
        rows.append(common.combine_heads(out) @ common.f64(W[3]))
        P += t
    return np.concatenate(rows), np.concatenate(ks, axis=1), np.concatenate(vs, axis=1)


LAYER_MISTAKES = ["adjacent_pairs", "exponent_i", "sin_sign", "values_rotated", "before_split"]
DECODER_MISTAKES = ["restart_positions", "rotated_twice", "values_rotated", "before_split"]


def layer_case(out, name, d, H, T, seed, x_seed, base, chunks):
    W = common.draws(seed, d)
    for w, n in zip(W, ["W_Q", "W_K", "W_V", "W_O"]):
        common.save(out, name + "_" + n, w)
    x = common.inputs(x_seed, T, d)
    common.save(out, name + "_x", x)
    mask = common.causal(T)
    y = forward(x, W, H, base, mask)
    # The relative-position property, in the reference itself.
    assert np.allclose(y, forward(x, W, H, base, mask, start=777), rtol=1e-9, atol=1e-9), name
    common.save(out, name + "_forward", y)
    for m in LAYER_MISTAKES:
        common.save(out, name + "_forward_mistake_" + m, forward(x, W, H, base, mask, 0, m))
    schedules = {"prefill": [T], "single": [1] * T, "chunks": chunks}
    for s, c in schedules.items():
        rows, keys, values = decode(x, W, H, base, c)
        assert np.allclose(rows, y, rtol=1e-9, atol=1e-9), (name, s)
        for m in DECODER_MISTAKES:
            common.save(out, "%s_%s_mistake_%s" % (name, s, m), decode(x, W, H, base, c, m)[0])
    _, keys, values = decode(x, W, H, base, chunks)
    common.save(out, name + "_keys", keys)
    common.save(out, name + "_values", values)
    for m in ["restart_positions", "unrotated_cache", "values_rotated"]:
        _, k_m, v_m = decode(x, W, H, base, chunks, m)
        common.save(out, name + "_keys_mistake_" + m, k_m)
        common.save(out, name + "_values_mistake_" + m, v_m)


def main():
    for d in (HIDDEN, PUBLIC):
        for f in os.listdir(d):
            if f.endswith(".npy"):
                os.remove(os.path.join(d, f))

    # Public. Small positions: d_head 8, start 3.
    rotation_case(PUBLIC, "rope", H=2, T=6, d=8, start=3, base=10000.0, x_seed=1101)
    # Positions near 10^6, where a float angle is off by up to ~0.06 rad (d_head 128).
    rotation_case(PUBLIC, "far", H=1, T=4, d=16, start=999_998, base=10000.0, x_seed=1102)
    angles_case(PUBLIC, "small", n=6, d=8, base=10000.0)
    # The layer: d_model 16, 2 heads of d_head 8; decoder chunks 3, 1, 4.
    layer_case(PUBLIC, "layer", d=16, H=2, T=8, seed=111, x_seed=1103, base=10000.0,
               chunks=[3, 1, 4])

    # Hidden: other shapes, seeds and bases (500000 is Llama 3's).
    rotation_case(HIDDEN, "rope", H=3, T=5, d=6, start=17, base=500000.0, x_seed=1111)
    rotation_case(HIDDEN, "far", H=2, T=3, d=32, start=1_048_570, base=10000.0, x_seed=1112)
    rotation_case(HIDDEN, "far_llama3", H=1, T=5, d=12, start=654_321, base=500000.0,
                  x_seed=1113)
    angles_case(HIDDEN, "wide", n=9, d=10, base=500000.0)
    layer_case(HIDDEN, "layer", d=24, H=3, T=9, seed=112, x_seed=1114, base=10000.0,
               chunks=[2, 4, 1, 2])
    layer_case(HIDDEN, "llama3", d=24, H=4, T=10, seed=113, x_seed=1115, base=500000.0,
               chunks=[5, 1, 1, 3])

    common.report_written(PUBLIC, HIDDEN)


if __name__ == "__main__":
    main()
