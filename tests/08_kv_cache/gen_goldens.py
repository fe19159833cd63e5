#!/usr/bin/env python3
"""Golden files for lab 8 (08_kv_cache): KV-cache decoding.

Run from the repository root with Debian's Python:

    /usr/bin/python3 tests/08_kv_cache/gen_goldens.py

Writes tests/08_kv_cache/golden/*.npy (hidden tests) and
labs/08_kv_cache/golden/*.npy (public tests), float32. The numbers come from
PyTorch and NumPy, independently of the C++ code:

* GQA / MHA / MQA: the full sequence through a causal
  torch.nn.MultiheadAttention in float64. A GQA layer is an MHA layer whose
  key and value weights repeat each kv head's columns for its group of query
  heads, so torch's own module computes it (gqa_as_mha below).
* MLA: NumPy, float64: K = c @ W_UK, V = c @ W_UV with c = x @ W_DKV, then
  causal attention per head (common.torch_attention) and @ W_O.

Whatever the chunking, a decoder must return exactly those rows. A NumPy
simulation of the decoder (decode_gqa, decode_mla) replays every chunking
the tests use and must agree with the full forward before anything is
written. The same simulation with one classic mistake switched on writes
`<case>_<schedule>_mistake_<name>.npy`: what that mistaken decoder returns, so
a failing test can name it (docs/08_kv_cache.md, "Classic mistakes"). A
mistake that gives the right numbers for some chunking (a top-left mask on a
prefill from an empty cache, an off-by-one inside single-token steps) has no
file for that chunking.

Files, for each case C (weights as (in, out), applied as x @ W):

  C_x                          (T, d_model) the whole sequence
  C_W_Q, C_W_K, C_W_V, C_W_O   GQA cases;  C_W_Q, C_W_DKV, C_W_UK, C_W_UV, C_W_O  MLA
  C_forward                    (T, d_model) the full causal forward: every row
  C_keys, C_values             (n_kv_heads, T, d_head) what a GQA cache holds at the end
  C_latents                    (T, kv_rank) what an MLA cache holds at the end
  C_<schedule>_mistake_<m>     (T, d_model) the rows a mistaken decoder returns
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "goldens"))
import common  # noqa: E402  (tools/goldens/common.py)

HIDDEN = common.golden_dir(__file__)
PUBLIC = common.public_golden_dir(__file__)

# Chunkings. Their names are what the tests call them.
def schedules(T, chunks):
    return {"prefill": [T], "single": [1] * T, "chunks": chunks}


# ----------------------------------------------------------------- references

def gqa_as_mha(W, n_heads, n_kv_heads):
    """(d_model, G*d_head) -> (d_model, H*d_head): kv head g's columns repeated
    for each query head of its group (np.repeat over heads)."""
    d = W.shape[0]
    dh = W.shape[1] // n_kv_heads
    blocks = W.reshape(d, n_kv_heads, dh)
    return np.repeat(blocks, n_heads // n_kv_heads, axis=1).reshape(d, n_heads * dh)


def torch_gqa(x, w, H, G, mask):
    """The full layer through torch.nn.MultiheadAttention, float64."""
    return common.torch_mha(x, w["W_Q"], gqa_as_mha(w["W_K"], H, G), gqa_as_mha(w["W_V"], H, G),
                            w["W_O"], H, mask)


def numpy_mla(x, w, H, mask):
    """Naive MLA in float64: K and V rebuilt from the latent, then attention."""
    x = common.f64(x)
    c = x @ common.f64(w["W_DKV"])
    q, k, v = common.split_heads(x @ common.f64(w["W_Q"]), H), common.split_heads(c @ common.f64(w["W_UK"]), H), common.split_heads(c @ common.f64(w["W_UV"]), H)
    o, _ = common.torch_attention(q, k, v, mask)
    return common.combine_heads(o) @ common.f64(w["W_O"])


# ------------------------------------------------------- the decoder, simulated

def chunk_mask(P, T_new, S, mistake):
    """The (T_new, S) mask a decoder uses for T_new new queries after P cached
    positions, S keys in all; query i sits at absolute position P + i."""
    i = np.arange(T_new)[:, None]
    j = np.arange(S)[None, :]
    if mistake == "top_left":          # query i placed at i, as if the cache were empty
        visible = j <= i
    elif mistake == "off_by_one":      # query i placed at P + i + 1: sees the next token too
        visible = j <= P + i + 1
    else:                              # bottom-right: lab 4's causal_mask(T_new, S)
        visible = j <= P + i
    return np.where(visible, 0.0, -np.inf)


def decode(x, w, H, schedule, mistake, heads):
    """Rows a decoder returns when x is fed in chunks of `schedule`.
    heads(q, S) gives the (q, k, v) heads that attend over the first S
    positions (what the cache holds then); q (H, T_new, d_head) is the chunk's."""
    x = common.f64(x)
    rows, P = [], 0
    for T_new in schedule:
        q = common.split_heads(x[P:P + T_new] @ common.f64(w["W_Q"]), H)  # (H, T_new, d_head)
        if mistake == "appended_after":
            # attends over what the cache held before this step, no mask: the
            # new tokens see neither themselves nor each other
            S = P
            mask = np.zeros((T_new, S))
        else:
            S = P + T_new
            mask = chunk_mask(P, T_new, S, mistake)
        o, _ = common.torch_attention(*heads(q, S), mask)
        rows.append(common.combine_heads(o) @ common.f64(w["W_O"]))
        P += T_new
    return np.concatenate(rows)


def decode_gqa(x, w, H, G, schedule, mistake=None):
    """Rows a GQA decoder returns when x is fed in chunks of `schedule`."""
    x64 = common.f64(x)
    K_all, V_all = x64 @ common.f64(w["W_K"]), x64 @ common.f64(w["W_V"])  # what the cache ends up holding

    def heads(q, S):
        k = np.repeat(common.split_heads(K_all[:S], G), H // G, axis=0)  # (H, S, d_head)
        v = np.repeat(common.split_heads(V_all[:S], G), H // G, axis=0)
        return q, k, v
    return decode(x, w, H, schedule, mistake, heads)


def decode_mla(x, w, H, schedule, mistake=None):
    """Rows an MLA decoder returns (computed naively; the absorbed form gives
    the same numbers)."""
    c_all = common.f64(x) @ common.f64(w["W_DKV"])

    def heads(q, S):
        c = c_all[:S]
        k, v = common.split_heads(c @ common.f64(w["W_UK"]), H), common.split_heads(c @ common.f64(w["W_UV"]), H)
        if mistake == "kv_rank_scale":  # torch_attention divides by sqrt(d_head)
            r = c.shape[1]
            q = q * np.sqrt(q.shape[-1]) / np.sqrt(r)
        return q, k, v
    return decode(x, w, H, schedule, mistake, heads)


# ---------------------------------------------------------------------- cases

GQA_MISTAKES = ("top_left", "appended_after", "off_by_one")
MLA_MISTAKES = ("top_left", "appended_after", "off_by_one", "kv_rank_scale")


# The mistakes each chunking shows (the tests list the same): a top-left mask
# is right when the cache is empty, so a prefill cannot show it; an
# off-by-one inside a chunk needs a chunk of two or more.
SHOWN = {"prefill": {"appended_after", "off_by_one", "kv_rank_scale"},
         "single": {"top_left", "appended_after", "kv_rank_scale"},
         "chunks": {"top_left", "appended_after", "off_by_one", "kv_rank_scale"}}


def save_mistakes(out, case, sched_name, y, wrongs):
    for m, wrong in wrongs.items():
        shows = not np.allclose(wrong, y, atol=1e-3)
        assert shows == (m in SHOWN[sched_name]), (case, sched_name, m)
        if shows:
            common.save(out, "%s_%s_mistake_%s" % (case, sched_name, m), wrong)


def gqa_case(out, case, d, H, G, T, seed, x_seed, chunks, scale=1.0):
    rng = np.random.default_rng(seed)
    dh = d // H
    w = {"W_Q": common.weights(rng, d, d, d), "W_K": common.weights(rng, d, G * dh, d),
         "W_V": common.weights(rng, d, G * dh, d), "W_O": common.weights(rng, d, d, d)}
    x = common.inputs(x_seed, T, d, scale=scale)
    y = torch_gqa(x, w, H, G, common.causal(T))
    s = common.split_heads(common.f64(x) @ common.f64(w["W_Q"]), H) @ np.repeat(common.split_heads(common.f64(x) @ common.f64(w["W_K"]), G), H // G,
                                                    axis=0).transpose(0, 2, 1) / np.sqrt(dh)
    print("%s: max |score| %.0f" % (case, np.abs(s).max()))
    # Two independent routes to the same rows: torch's module, and per-head
    # NumPy attention on the un-expanded kv heads.
    assert np.allclose(y, decode_gqa(x, w, H, G, [T]), atol=1e-9, rtol=1e-9), case
    for name, w_ in w.items():
        common.save(out, case + "_" + name, w_)
    common.save(out, case + "_x", x)
    common.save(out, case + "_forward", y)
    common.save(out, case + "_keys", common.split_heads(common.f64(x) @ common.f64(w["W_K"]), G))
    common.save(out, case + "_values", common.split_heads(common.f64(x) @ common.f64(w["W_V"]), G))
    for sched_name, sched in schedules(T, chunks).items():
        assert sum(sched) == T
        assert np.allclose(decode_gqa(x, w, H, G, sched), y, atol=1e-9, rtol=1e-9), (case, sched)
        save_mistakes(out, case, sched_name, y,
                      {m: decode_gqa(x, w, H, G, sched, m) for m in GQA_MISTAKES})
    print("%s: d_model=%d n_heads=%d n_kv_heads=%d T=%d chunks=%s" % (case, d, H, G, T, chunks))


def mla_case(out, case, d, H, r, T, seed, x_seed, chunks, scale=1.0):
    rng = np.random.default_rng(seed)
    w = {"W_Q": common.weights(rng, d, d, d), "W_DKV": common.weights(rng, d, r, d),
         "W_UK": common.weights(rng, r, d, r), "W_UV": common.weights(rng, r, d, r),
         "W_O": common.weights(rng, d, d, d)}
    x = common.inputs(x_seed, T, d, scale=scale)
    y = numpy_mla(x, w, H, common.causal(T))
    for name, w_ in w.items():
        common.save(out, case + "_" + name, w_)
    common.save(out, case + "_x", x)
    common.save(out, case + "_forward", y)
    common.save(out, case + "_latents", common.f64(x) @ common.f64(w["W_DKV"]))
    for sched_name, sched in schedules(T, chunks).items():
        assert sum(sched) == T
        assert np.allclose(decode_mla(x, w, H, sched), y, atol=1e-9, rtol=1e-9), (case, sched)
        save_mistakes(out, case, sched_name, y,
                      {m: decode_mla(x, w, H, sched, m) for m in MLA_MISTAKES})
    print("%s: d_model=%d n_heads=%d kv_rank=%d T=%d chunks=%s" % (case, d, H, r, T, chunks))


def main():
    for d in (HIDDEN, PUBLIC):
        for f in os.listdir(d):
            if f.endswith(".npy"):
                os.remove(os.path.join(d, f))  # a mistake file may no longer apply

    # Public: d_head = 6 != n_heads = 4, two groups of two query heads.
    gqa_case(PUBLIC, "gqa", d=24, H=4, G=2, T=8, seed=81, x_seed=801, chunks=[3, 1, 4])
    # Public MLA: d_head = 5, kv_rank = 6, d_model = 20 all differ.
    mla_case(PUBLIC, "mla", d=20, H=4, r=6, T=7, seed=82, x_seed=802, chunks=[2, 3, 2])

    # Hidden: other shapes and seeds.
    # MHA: n_kv_heads == n_heads, d_head 4 != n_heads 3.
    gqa_case(HIDDEN, "mha", d=12, H=3, G=3, T=9, seed=83, x_seed=803, chunks=[2, 4, 1, 2])
    # GQA: 8 query heads in 2 groups of 4, d_head 4; a prefill of 5 then single tokens.
    gqa_case(HIDDEN, "gqa", d=32, H=8, G=2, T=10, seed=84, x_seed=804, chunks=[5, 1, 1, 3])
    # MQA: one kv head for 3 query heads, d_head 6.
    gqa_case(HIDDEN, "mqa", d=18, H=3, G=1, T=7, seed=85, x_seed=805, chunks=[1, 3, 2, 1])
    # Large inputs: scores in the hundreds, so the softmax must subtract its max.
    gqa_case(HIDDEN, "large", d=16, H=4, G=2, T=6, seed=86, x_seed=806, chunks=[2, 2, 2],
             scale=12.0)
    # MLA: d_model 24, d_head 6, kv_rank 10.
    mla_case(HIDDEN, "mla", d=24, H=4, r=10, T=9, seed=87, x_seed=807, chunks=[4, 1, 2, 2])
    # MLA with large scores, d_head 4, kv_rank 5.
    mla_case(HIDDEN, "mla_large", d=12, H=3, r=5, T=6, seed=88, x_seed=808, chunks=[3, 3],
             scale=8.0)

    common.report_written(PUBLIC, HIDDEN)


if __name__ == "__main__":
    main()
