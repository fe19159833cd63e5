"""Goldens for lab 2 (batched attention), computed with PyTorch in float64.

Run from the repository root:  /usr/bin/python3 tests/02_batched_attention/gen_goldens.py
Writes tests/02_batched_attention/golden/*.npy (the hidden tests' goldens) and
labs/02_batched_attention/golden/*.npy (the public tests': other shapes and
seeds, see public()), float32, under 1 KiB each.

The reference is common.torch_attention (torch matmul + torch.softmax, fully
masked rows zeroed) and torch.softmax for softmax_rows. Next to each right
answer the script writes what a classic mistake computes on the same inputs
(`*_mistake_<name>.npy`), so a failing hidden test can name the mistake; see
docs/02_batched_attention.md, "Classic mistakes".

Cases (shapes chosen so no two axes share a length where it matters):
  self      H=2, T=S=4, d_head=3, moderate scores (all weights matter)
  masked    the same q, k, v with a mask: query 0 sees no key, the others
            see different subsets of keys
  cross     H=3, T=3 queries, S=5 keys, d_head=2, without and with a mask
  overflow  H=2, T=S=4, d_head=3, scores in the hundreds (exp overflows float32)
  leak      H=2, T=4, S=5, d_head=3; key 2 is masked for every query and its
            value is 1e30
  softmax_* inputs and outputs for softmax_rows
"""
import glob

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "goldens"))
import common  # noqa: E402  (tools/goldens/common.py)

OUT = common.golden_dir(__file__)
PUBLIC = common.public_golden_dir(__file__)
INF = np.inf


def scores_of(q, k, scale):
    return common.t64(q) @ common.t64(k).transpose(-1, -2) * scale


def from_scores(scores, v, dim=-1):
    """Softmax over `dim`, fully masked rows zeroed, then weights @ v."""
    w = torch.nan_to_num(torch.softmax(scores, dim=dim), nan=0.0)
    return (w @ common.t64(v)).numpy(), w.numpy()


def save_case(name, out, w, where=OUT):
    common.save(where, name + "_output", out)
    common.save(where, name + "_weights", w)


def save_mistake(name, mistake, out, w, where=OUT):
    common.save(where, f"{name}_output_mistake_{mistake}", out)
    common.save(where, f"{name}_weights_mistake_{mistake}", w)


def scale_mistakes(name, q, k, v, mask=None, where=OUT):
    """Mistakes that do not involve the mask: wrong scale, wrong softmax axis."""
    H, _, d_head = q.shape
    m = 0.0 if mask is None else common.t64(mask)
    save_mistake(name, "dmodel_scale", *from_scores(scores_of(q, k, 1 / np.sqrt(H * d_head)) + m, v),
                 where=where)
    save_mistake(name, "no_scale", *from_scores(scores_of(q, k, 1.0) + m, v), where=where)
    save_mistake(name, "query_axis_softmax",
                 *from_scores(scores_of(q, k, 1 / np.sqrt(d_head)) + m, v, dim=-2), where=where)


def mask_mistakes(name, q, k, v, mask, where=OUT):
    """Mistakes of the mask: never added, added after the softmax, NaN rows kept."""
    s = scores_of(q, k, 1 / np.sqrt(q.shape[-1]))
    save_mistake(name, "mask_ignored", *from_scores(s, v), where=where)
    # Mask added to the weights after the softmax: -inf weights, inf/NaN outputs.
    w_after = torch.softmax(s, dim=-1) + common.t64(mask)
    save_mistake(name, "mask_after_softmax", (w_after @ common.t64(v)).numpy(), w_after.numpy(),
                 where=where)
    # Fully masked row left as softmax gives it: NaN.
    w_nan = torch.softmax(s + common.t64(mask), dim=-1)
    save_mistake(name, "nan_row", (w_nan @ common.t64(v)).numpy(), w_nan.numpy(), where=where)


def naive_softmax_mistake(name, q, k, v, where=OUT):
    """A softmax without the max shift, in float32 as the C++ computes it:
    exp overflows to inf, inf / inf is NaN and finite / inf is 0."""
    s = (scores_of(q, k, 1 / np.sqrt(q.shape[-1])).numpy()).astype(np.float32)
    assert np.abs(s - 88.72).min() > 5, "a score too close to exp's overflow"
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(s)
        w = e / e.sum(axis=-1, keepdims=True)
        out = np.einsum("hts,hsd->htd", w.astype(np.float64), np.asarray(v, np.float64))
    assert np.isnan(w).any()
    save_mistake(name, "no_max", out, w, where=where)


def check_differs(name, where=OUT):
    right_w = np.load(f"{where}/{name}_weights.npy")
    for path in glob.glob(f"{where}/{name}_weights_mistake_*.npy"):
        wrong = np.load(path)
        same = wrong.shape == right_w.shape and np.allclose(wrong, right_w, atol=1e-3, equal_nan=True)
        assert not same, path + " is indistinguishable from the right answer"


def self_and_masked():
    H, T, d = 2, 4, 3
    q, k, v = common.inputs(201, H, T, d), common.inputs(202, H, T, d), common.inputs(203, H, T, d)
    for n, a in (("q", q), ("k", k), ("v", v)):
        common.save(OUT, "self_" + n, a)

    save_case("self", *common.torch_attention(q, k, v))
    scale_mistakes("self", q, k, v)
    # q and k swapped: scores = k @ q^T, i.e. the transposed weights are used.
    save_mistake("self", "swapped_qk", *from_scores(scores_of(k, q, 1 / np.sqrt(d)), v))
    check_differs("self")

    mask = np.array([[-INF, -INF, -INF, -INF],   # query 0 may see no key
                     [0.0, -INF, 0.0, -INF],
                     [0.0, 0.0, 0.0, -INF],
                     [0.0, -INF, 0.0, 0.0]], np.float32)
    common.save(OUT, "masked_mask", mask)
    save_case("masked", *common.torch_attention(q, k, v, mask))
    mask_mistakes("masked", q, k, v, mask)
    scale_mistakes("masked", q, k, v, mask)
    check_differs("masked")


def cross():
    H, T, S, d = 3, 3, 5, 2
    q, k, v = common.inputs(211, H, T, d), common.inputs(212, H, S, d), common.inputs(213, H, S, d)
    for n, a in (("q", q), ("k", k), ("v", v)):
        common.save(OUT, "cross_" + n, a)
    save_case("cross", *common.torch_attention(q, k, v))
    scale_mistakes("cross", q, k, v)
    check_differs("cross")

    mask = common.causal(T, S)  # the 3 queries are the last 3 of 5 positions
    common.save(OUT, "cross_masked_mask", mask)
    save_case("cross_masked", *common.torch_attention(q, k, v, mask))
    save_mistake("cross_masked", "mask_ignored", *common.torch_attention(q, k, v))
    scale_mistakes("cross_masked", q, k, v, mask)
    check_differs("cross_masked")


def overflow_case(where, H, T, d, first_seed, scale, v_seed):
    """Scores in the hundreds: exp(score) overflows float32 above ~88.7. The
    first seed from first_seed whose rows all have a clear winner (top-2 gap
    >= 10, so float32 rounding of scores near 300 cannot move the weights
    visibly) and no score within 5 of exp's overflow."""
    for seed in range(first_seed, 400):
        q = common.inputs(seed, H, T, d, scale=scale)
        k = common.inputs(seed + 1000, H, T, d, scale=scale)
        s = np.sort((scores_of(q, k, 1 / np.sqrt(d))).numpy(), axis=-1)
        if (s[..., -1] - s[..., -2]).min() >= 10 and np.abs(s).max() >= 200 and \
                np.abs(s - 88.72).min() > 5:
            break
    else:
        raise RuntimeError("no overflow seed found")
    v = common.inputs(v_seed, H, T, d)
    for n, a in (("q", q), ("k", k), ("v", v)):
        common.save(where, "overflow_" + n, a)
    save_case("overflow", *common.torch_attention(q, k, v), where=where)
    naive_softmax_mistake("overflow", q, k, v, where=where)


def overflow():
    overflow_case(OUT, H=2, T=4, d=3, first_seed=221, scale=12.0, v_seed=223)


def leak():
    H, T, S, d = 2, 4, 5, 3
    q, k, v = common.inputs(231, H, T, d), common.inputs(232, H, S, d), common.inputs(233, H, S, d)
    v[:, 2, :] = 1e30  # a masked key whose value would swamp any leak
    mask = np.zeros((T, S), np.float32)
    mask[:, 2] = -INF
    for n, a in (("q", q), ("k", k), ("v", v), ("mask", mask)):
        common.save(OUT, "leak_" + n, a)
    out, _ = common.torch_attention(q, k, v, mask)
    assert np.abs(out).max() < 10
    common.save(OUT, "leak_output", out)


def softmax():
    # Random rows of moderate size.
    x = common.inputs(241, 4, 6, scale=2.0)
    common.save(OUT, "softmax_random_scores", x)
    common.save(OUT, "softmax_random_probs", torch.softmax(common.t64(x), dim=-1).numpy())

    # Logits near 1000: exp overflows float32 (and float64) without the max shift.
    x = np.array([[1000.0, 999.0, 990.0, 0.0, -5.0],
                  [300.0, 298.5, 120.0, 299.0, 10.0],
                  [0.5, -1.0, 2.0, 0.0, 1.0]], np.float32)
    common.save(OUT, "softmax_huge_scores", x)
    common.save(OUT, "softmax_huge_probs", torch.softmax(common.t64(x), dim=-1).numpy())
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x)  # float32, as the C++ computes it
        naive = e / e.sum(axis=-1, keepdims=True)
    assert np.isnan(naive[0]).any() and np.isnan(naive[1]).any() and np.isfinite(naive[2]).all()
    common.save(OUT, "softmax_huge_probs_mistake_no_max", naive)

    # Masked entries, with one row that is entirely -inf.
    x = np.array([[0.3, -INF, 1.2, 0.1],
                  [-INF, -INF, -INF, -INF],
                  [2.0, 1.0, -INF, -0.5]], np.float32)
    common.save(OUT, "softmax_masked_scores", x)
    p = torch.softmax(common.t64(x), dim=-1)
    common.save(OUT, "softmax_masked_probs", torch.nan_to_num(p, nan=0.0).numpy())
    common.save(OUT, "softmax_masked_probs_mistake_nan_row", p.numpy())


def public():
    """The public tests' goldens (labs/02_batched_attention/golden): other
    shapes and seeds than the hidden ones, chosen so that every classic
    mistake changes the numbers: three heads (so d_model = 3 * d_head and a
    1/sqrt(d_model) scale differs), T == S for the self case (so swapped q and
    k still fit), T < S with a causal mask, a fully masked query, scores in the
    hundreds."""
    H, T, d = 3, 5, 4
    q, k, v = (common.inputs(seed, H, T, d, scale=1.3) for seed in (251, 252, 253))
    for n, a in (("q", q), ("k", k), ("v", v)):
        common.save(PUBLIC, "self_" + n, a)
    save_case("self", *common.torch_attention(q, k, v), where=PUBLIC)
    scale_mistakes("self", q, k, v, where=PUBLIC)
    save_mistake("self", "swapped_qk", *from_scores(scores_of(k, q, 1 / np.sqrt(d)), v),
                 where=PUBLIC)
    check_differs("self", where=PUBLIC)

    mask = np.array([[0.0, -INF, -INF, 0.0, -INF],
                     [0.0, 0.0, -INF, -INF, -INF],
                     [-INF, -INF, -INF, -INF, -INF],   # query 2 may see no key
                     [0.0, -INF, 0.0, 0.0, -INF],
                     [0.0, 0.0, 0.0, 0.0, 0.0]], np.float32)
    common.save(PUBLIC, "masked_mask", mask)
    save_case("masked", *common.torch_attention(q, k, v, mask), where=PUBLIC)
    mask_mistakes("masked", q, k, v, mask, where=PUBLIC)
    scale_mistakes("masked", q, k, v, mask, where=PUBLIC)
    check_differs("masked", where=PUBLIC)

    # 3 new queries over 6 keys (a KV cache of 3), d_head=4, two heads.
    H, T, S, d = 2, 3, 6, 4
    q, k, v = common.inputs(254, H, T, d), common.inputs(255, H, S, d), common.inputs(256, H, S, d)
    mask = common.causal(T, S)
    for n, a in (("q", q), ("k", k), ("v", v), ("mask", mask)):
        common.save(PUBLIC, "cross_" + n, a)
    save_case("cross", *common.torch_attention(q, k, v, mask), where=PUBLIC)
    save_mistake("cross", "mask_ignored", *common.torch_attention(q, k, v), where=PUBLIC)
    scale_mistakes("cross", q, k, v, mask, where=PUBLIC)
    check_differs("cross", where=PUBLIC)

    # Scores in the hundreds, with a clear winner in every row.
    overflow_case(PUBLIC, H=2, T=4, d=5, first_seed=261, scale=10.0, v_seed=262)

    # softmax_rows on its own: logits in the hundreds, and a fully masked row.
    x = np.array([[500.0, 499.0, 480.0, -3.0],
                  [2.0, 1.0, 0.0, -1.0],
                  [120.0, 121.5, 60.0, 119.0]], np.float32)
    common.save(PUBLIC, "softmax_huge_scores", x)
    common.save(PUBLIC, "softmax_huge_probs", torch.softmax(common.t64(x), dim=-1).numpy())
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x)
        naive = e / e.sum(axis=-1, keepdims=True)
    assert np.isnan(naive[0]).any() and np.isnan(naive[2]).any() and np.isfinite(naive[1]).all()
    common.save(PUBLIC, "softmax_huge_probs_mistake_no_max", naive)
    x = np.array([[-INF, -INF, -INF, -INF, -INF],
                  [1.0, -INF, 0.5, 2.0, -INF]], np.float32)
    common.save(PUBLIC, "softmax_masked_scores", x)
    p = torch.softmax(common.t64(x), dim=-1)
    common.save(PUBLIC, "softmax_masked_probs", torch.nan_to_num(p, nan=0.0).numpy())
    common.save(PUBLIC, "softmax_masked_probs_mistake_nan_row", p.numpy())


def main():
    public()
    self_and_masked()
    cross()
    overflow()
    leak()
    softmax()


if __name__ == "__main__":
    main()
