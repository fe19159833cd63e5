"""Goldens for lab 1 (split and combine heads), computed with NumPy.

Run from the repository root:  /usr/bin/python3 tests/01_split_heads/gen_goldens.py
Writes tests/01_split_heads/golden/*.npy (the hidden tests' goldens) and
labs/01_split_heads/golden/*.npy (the public tests' goldens, other shapes and
seeds), float32, a few hundred bytes each.

The reference is NumPy's own reshape and transpose, the two-line recipe of
the lesson:

    split:    x.reshape(T, H, d_head).transpose(1, 0, 2)     # (H, T, d_head)
    combine:  heads.transpose(1, 0, 2).reshape(T, H * d_head)  # (T, d_model)

Next to each right answer the script writes what a classic mistake produces on
the same input (`*_mistake_<name>.npy`), so a failing hidden test can say
which mistake it looks like (see docs/01_split_heads.md, "Classic mistakes").
"""
import glob

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "goldens"))
import common  # noqa: E402  (tools/goldens/common.py)

OUT = common.golden_dir(__file__)
PUBLIC = common.public_golden_dir(__file__)


def split_mistakes(x, H):
    T, d_model = x.shape
    d_head = d_model // H
    right = x.reshape(T, H, d_head).transpose(1, 0, 2)
    no_transpose = x.reshape(H, T, d_head)                   # reshape straight to (H, T, d_head)
    interleaved = x.reshape(T, d_head, H).transpose(2, 0, 1)  # head h gets columns h, h+H, ...
    last_col_zero = right.copy()
    last_col_zero[:, :, -1] = 0.0                            # a loop that stops one column early
    return right, {"no_transpose": no_transpose, "interleaved": interleaved,
                   "last_column_missing": last_col_zero}


def combine_mistakes(heads):
    H, T, d_head = heads.shape
    right = heads.transpose(1, 0, 2).reshape(T, H * d_head)
    no_transpose = heads.reshape(T, H * d_head)               # memory order is (H, T, d_head)
    interleaved = heads.transpose(1, 2, 0).reshape(T, H * d_head)
    return right, {"no_transpose": no_transpose, "interleaved": interleaved}


def save_split_case(out, prefix, x, H):
    heads, mistakes = split_mistakes(x, H)
    common.save(out, prefix + "_x", x)
    common.save(out, prefix + "_heads", heads)
    for name, a in mistakes.items():
        common.save(out, prefix + "_heads_mistake_" + name, a)


def save_combine_case(out, prefix, heads):
    x, mistakes = combine_mistakes(heads)
    common.save(out, prefix + "_heads_in", heads)
    common.save(out, prefix + "_x", x)
    for name, a in mistakes.items():
        common.save(out, prefix + "_x_mistake_" + name, a)


def check_mistakes_differ(out, prefixes):
    """Every mistake must differ from the right answer, or it could not be named."""
    for prefix in prefixes:
        right = np.load(f"{out}/{prefix}.npy")
        for path in glob.glob(f"{out}/{prefix}_mistake_*.npy"):
            wrong = np.load(path)
            assert wrong.shape != right.shape or not np.array_equal(wrong, right), path


def public():
    """The public tests' goldens (labs/01_split_heads/golden): other shapes and
    seeds than the hidden ones, still with no two axes of the same length."""
    # T=3 tokens, d_model=10, H=2 heads of d_head=5.
    save_split_case(PUBLIC, "split", common.inputs(111, 3, 10), 2)
    # combine_heads: H=3 heads, T=2 tokens, d_head=4 -> (2, 12).
    save_combine_case(PUBLIC, "combine", common.inputs(112, 3, 2, 4))
    check_mistakes_differ(PUBLIC, ("split_heads", "combine_x"))


def main():
    public()
    # Case "tall": T=5 tokens, d_model=12, H=3 heads of d_head=4
    # (T != d_head, d_head != H, so a swapped axis changes the shape or the order).
    save_split_case(OUT, "tall", common.inputs(101, 5, 12), 3)
    # Case "wide": T=2 tokens, d_model=12, H=2 heads of d_head=6 (T < d_head).
    save_split_case(OUT, "wide", common.inputs(102, 2, 12), 2)
    # combine_heads on its own input: H=4 heads, T=3 tokens, d_head=2.
    save_combine_case(OUT, "combine", common.inputs(103, 4, 3, 2))
    check_mistakes_differ(OUT, ("tall_heads", "wide_heads", "combine_x"))


if __name__ == "__main__":
    main()
