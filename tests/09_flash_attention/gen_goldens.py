#!/usr/bin/env python3
"""Golden files for lab 9 (09_flash_attention): tiled attention, online softmax.

Run from the repository root with Debian's Python:

    /usr/bin/python3 tests/09_flash_attention/gen_goldens.py

Writes labs/09_flash_attention/golden/*.npy (public: the learner gets them)
and tests/09_flash_attention/golden/*.npy (hidden), float32, C order.

The right answers are what lab 2's attention_batched must return on the same
inputs: PyTorch in float64 (common.torch_attention: matmul, torch.softmax,
fully masked rows zeroed), with lab 4's bottom-right causal mask
(common.causal) for the causal cases. Nothing here calls the C++ code.

Next to each right answer the script writes what a classic mistake of the
tiled loop computes (`<case>_output_mistake_<name>.npy`), by running the
loop of docs/09_flash_attention.md in NumPy with that one mistake, at the
case's main block sizes (below). The same loop without a mistake is checked
against PyTorch first, so the simulation itself is tested. Its exponentials
are taken in float32, as the C++ code takes them, so an exp that underflows
to 0 there underflows here too (that is what the max-initialised-to-0
mistake runs into).

The mistakes (docs/09_flash_attention.md, "Classic mistakes"):
  no_rescale               l and o not multiplied by exp(m_old - m_new)
  output_not_rescaled      l rescaled, o not
  divide_per_block         o += (p / l_running) @ v in the loop, no final o / l
  max_init_zero            m starts at 0, not -inf
  nan_first_block_masked   no guard for m_new = -inf: NaN rows
  remainder_dropped        only S // block_k key blocks (the short last one lost)
  causal_skip_off_by_one   floor instead of ceil: the diagonal key block skipped
  top_left_causal          query i sees keys j <= i instead of j <= S - T + i

Cases, public (labs/09_flash_attention/golden):
  masked    H=2, T=11, S=13, d_head=6, scores of spread ~3, a mask with a
            fully masked row (0), a row whose first key block is fully
            masked (1), a row that sees only the last key (2); blocks 4 x 5
  overflow  H=2, T=9, S=16, d_head=4, no mask, scores in the hundreds
            (q, k in quarter integers: the scores are exact in float32);
            rows 3 and 6 of each head see only scores below -150, every other
            row has a positive max; blocks 3 x 5
  causal    H=2, T=7, S=12 (S > T), d_head=5, attention_tiled_causal;
            blocks 3 x 5
Cases, hidden (tests/09_flash_attention/golden):
  cross        H=3, T=17, S=29, d_head=5, no mask; blocks 5 x 7
  masked       H=3, T=17, S=29, d_head=5, mask (rows 0, 4 fully masked, rows
               1, 9 masked over keys [0, 8), row 2 sees only key 28); blocks 6 x 7
  overflow     H=2, T=12, S=23, d_head=16, scores in the hundreds, rows 2, 7, 11
               below -150; blocks 4 x 6
  causal_cross H=2, T=9, S=26, d_head=4, attention_tiled_causal; blocks 4 x 6
  causal_self  H=2, T=S=21, d_head=6, attention_tiled_causal; blocks 8 x 5
Each case has <case>_q, _k, _v (and _mask) inputs and <case>_output.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools", "goldens"))
import common  # noqa: E402  (tools/goldens/common.py)

PUBLIC = common.public_golden_dir(__file__)
HIDDEN = common.golden_dir(__file__)
INF = np.inf

MISTAKES = ["no_rescale", "output_not_rescaled", "divide_per_block", "max_init_zero",
            "nan_first_block_masked", "remainder_dropped", "causal_skip_off_by_one",
            "top_left_causal"]


def tiled(q, k, v, mask, bq, bk, causal=False, mistake=None):
    """The tiled loop with an online softmax, in NumPy, optionally with one mistake.

    q (H, T, d), k and v (H, S, d), mask (T, S) or None. float64 except the
    exponentials, which are float32 like the C++ code's."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    H, T, d = q.shape
    S = k.shape[1]
    scale = 1.0 / np.sqrt(d)
    out = np.zeros((H, T, d))

    def position(i):  # absolute position of query i (bottom-right causal)
        return i if mistake == "top_left_causal" else S - T + i

    def exp32(x):
        return np.exp(x.astype(np.float32)).astype(np.float64)

    with np.errstate(invalid="ignore", over="ignore"):
        for h in range(H):
            for i0 in range(0, T, bq):
                i1 = min(i0 + bq, T)
                rows = i1 - i0
                m = np.full(rows, 0.0 if mistake == "max_init_zero" else -INF)
                l = np.zeros(rows)
                o = np.zeros((rows, d))
                if causal:
                    visible = position(i1 - 1) + 1
                    rounded_down = mistake == "causal_skip_off_by_one"
                    n_blocks = visible // bk if rounded_down else -(-visible // bk)
                else:
                    n_blocks = S // bk if mistake == "remainder_dropped" else -(-S // bk)
                for b in range(n_blocks):
                    j0, j1 = b * bk, min(b * bk + bk, S)
                    s = q[h, i0:i1] @ k[h, j0:j1].T * scale          # (rows, n_keys)
                    if mask is not None:
                        s = s + mask[i0:i1, j0:j1]
                    if causal:
                        future = np.arange(j0, j1)[None, :] > np.array(
                            [position(i) for i in range(i0, i1)])[:, None]
                        s = np.where(future, -INF, s)
                    p = np.zeros_like(s)
                    for r in range(rows):
                        new_m = max(m[r], s[r].max())
                        if new_m == -INF and mistake != "nan_first_block_masked":
                            continue                                  # p row stays 0
                        corr = np.exp(m[r] - new_m)                   # NaN if both -inf
                        p[r] = exp32(s[r] - new_m)
                        if mistake == "no_rescale":
                            l[r] = l[r] + p[r].sum()
                        else:
                            l[r] = l[r] * corr + p[r].sum()
                        if mistake not in ("no_rescale", "output_not_rescaled") and corr != 1.0:
                            o[r] *= corr
                        if mistake == "divide_per_block":
                            p[r] /= l[r]
                        m[r] = new_m
                    o += p @ v[h, j0:j1]
                if mistake == "divide_per_block":
                    out[h, i0:i1] = o
                else:
                    inv = np.array([0.0 if x == 0 else 1.0 / x for x in l])
                    out[h, i0:i1] = o * inv[:, None]
    return out


def quarter_integers(seed, shape, scale):
    """Random multiples of 1/4: their products and sums are exact in float32."""
    return np.round(common.inputs(seed, *shape, scale=scale) * 4) / 4


def differ(a, b):
    return not (a.shape == b.shape and np.allclose(a, b, atol=1e-3, rtol=1e-3, equal_nan=True))


def save_case(directory, name, q, k, v, mask, bq, bk, causal, must_catch):
    """Writes the inputs, the right output and every mistake that changes it.
    `must_catch`: mistakes this case exists to expose (asserted to differ)."""
    q, k, v = (np.asarray(a, np.float32) for a in (q, k, v))
    T, S = q.shape[1], k.shape[1]
    full_mask = common.causal(T, S) if causal else mask
    right, _ = common.torch_attention(q, k, v, full_mask)
    assert np.all(np.isfinite(right))
    # The loop without a mistake is the same softmax: the rescaling is exact.
    sim = tiled(q, k, v, mask, bq, bk, causal)
    assert np.allclose(sim, right, atol=1e-6, rtol=1e-6), (name, np.abs(sim - right).max())

    common.save(directory, name + "_q", q)
    common.save(directory, name + "_k", k)
    common.save(directory, name + "_v", v)
    if mask is not None:
        common.save(directory, name + "_mask", mask)
    common.save(directory, name + "_output", right)

    written = {}
    for mistake in MISTAKES:
        if mistake in ("causal_skip_off_by_one", "top_left_causal") and not causal:
            continue
        if mistake == "remainder_dropped" and causal:
            continue  # the reference's causal loop counts its blocks elsewhere
        wrong = tiled(q, k, v, mask, bq, bk, causal, mistake)
        if not differ(wrong, right):
            assert mistake not in must_catch, (name, mistake, "does not change the output")
            continue
        for other, w in written.items():
            assert differ(wrong, w), (name, mistake, other, "give the same output")
        written[mistake] = wrong
        # One NaN bit pattern (BLAS may return either sign), so reruns give
        # byte-identical files.
        wrong = np.where(np.isnan(wrong), np.nan, wrong)
        common.save(directory, name + "_output_mistake_" + mistake, wrong)
    missing = set(must_catch) - set(written)
    assert not missing, (name, missing)
    print("%-6s %-13s blocks %d x %d, mistakes: %s" % (
        "public" if directory == PUBLIC else "hidden", name, bq, bk, " ".join(written)))


def spread_qkv(seed, H, T, S, d):
    """Random q (H, T, d), k and v (H, S, d) from seeds seed, seed+1, seed+2,
    q and k scaled so that the scores spread ~3."""
    q = common.inputs(seed, H, T, d, scale=np.sqrt(3.0))
    k = common.inputs(seed + 1, H, S, d, scale=np.sqrt(3.0))
    v = common.inputs(seed + 2, H, S, d)
    return q, k, v


def masked_case(seed, H, T, S, d, block_k, first_block_rows, empty_rows, last_key_row):
    """spread_qkv and a random mask (a quarter of the entries -inf) with the
    special rows the docstring lists."""
    q, k, v = spread_qkv(seed, H, T, S, d)
    rng = np.random.default_rng(seed + 3)
    mask = np.where(rng.random((T, S)) < 0.25, -INF, 0.0)
    for r in range(T):  # every ordinary row keeps at least two keys
        if np.isinf(mask[r]).sum() > S - 2:
            mask[r, :2] = 0.0
    for r in empty_rows:
        mask[r, :] = -INF
    for r in first_block_rows:  # first key block hidden, later ones partly visible
        mask[r, :block_k] = -INF
        mask[r, block_k + 1] = 0.0
    if last_key_row is not None:
        mask[last_key_row, :] = -INF
        mask[last_key_row, S - 1] = 0.0
    return q, k, v, mask.astype(np.float32)


def overflow_case(seed, H, T, S, d, negative_rows):
    """Scores in the hundreds, exact in float32; `negative_rows` see only
    scores below -150, every other row has a positive max."""
    k = quarter_integers(seed + 1, (H, S, d), 1.0)
    k[:, :, 0] = 8 + np.abs(k[:, :, 0])             # every key leans along axis 0
    k[:, -1, 0] += 3                                 # the last key (in the last block) most
    q = quarter_integers(seed, (H, T, d), 30.0)
    q[:, :, 0] = np.abs(q[:, :, 0]) + 4              # most queries lean along it too
    for r in negative_rows:                          # these queries point away from all keys
        q[:, r, :] = quarter_integers(seed + 10 + r, (H, d), 1.0)
        q[:, r, 0] = -20.0 * np.sqrt(d)
    v = common.inputs(seed + 2, H, S, d)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(d)
    row_max = scores.max(axis=-1)
    others = [r for r in range(T) if r not in negative_rows]
    assert np.all(row_max[:, negative_rows] < -150), row_max
    assert np.all(row_max[:, others] > 0), row_max
    assert np.abs(scores).max() > 200, np.abs(scores).max()
    return q, k, v


# What every tiled case must expose, and what some cases exist for.
ONLINE = ["no_rescale", "output_not_rescaled", "divide_per_block"]
CAUSAL = ["top_left_causal", "causal_skip_off_by_one"]

# (directory, name, inputs (q, k, v[, mask]), block_q, block_k, causal, the
# mistakes it must expose besides ONLINE), in the order they are written.
CASES = [
    (PUBLIC, "masked",
     lambda: masked_case(901, H=2, T=11, S=13, d=6, block_k=5, first_block_rows=[1],
                         empty_rows=[0], last_key_row=2),
     4, 5, False, ["nan_first_block_masked", "remainder_dropped"]),
    (PUBLIC, "overflow", lambda: overflow_case(911, H=2, T=9, S=16, d=4, negative_rows=[3, 6]),
     3, 5, False, ["max_init_zero", "remainder_dropped"]),
    (PUBLIC, "causal", lambda: spread_qkv(921, H=2, T=7, S=12, d=5), 3, 5, True, CAUSAL),
    (HIDDEN, "cross", lambda: spread_qkv(101, H=3, T=17, S=29, d=5),
     5, 7, False, ["remainder_dropped"]),
    (HIDDEN, "masked",
     lambda: masked_case(111, H=3, T=17, S=29, d=5, block_k=8, first_block_rows=[1, 9],
                         empty_rows=[0, 4], last_key_row=2),
     6, 7, False, ["nan_first_block_masked", "remainder_dropped"]),
    (HIDDEN, "overflow",
     lambda: overflow_case(121, H=2, T=12, S=23, d=16, negative_rows=[2, 7, 11]),
     4, 6, False, ["max_init_zero", "remainder_dropped"]),
    (HIDDEN, "causal_cross", lambda: spread_qkv(131, H=2, T=9, S=26, d=4), 4, 6, True, CAUSAL),
    # T == S: a top-left and a bottom-right causal mask agree here.
    (HIDDEN, "causal_self", lambda: spread_qkv(141, H=2, T=21, S=21, d=6), 8, 5, True,
     ["causal_skip_off_by_one"]),
]


def main():
    for directory, name, inputs, bq, bk, causal, must_catch in CASES:
        q, k, v, *mask = inputs()
        save_case(directory, name, q, k, v, mask[0] if mask else None, bq, bk, causal,
                  ONLINE + must_catch)

    for d in (PUBLIC, HIDDEN):
        print("%d files in %s" % (len(os.listdir(d)), d))


if __name__ == "__main__":
    main()
