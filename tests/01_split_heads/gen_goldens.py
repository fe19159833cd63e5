"""Goldens for lab 1 (split and combine heads), computed with NumPy.

Run from the repository root:  /usr/bin/python3 tests/01_split_heads/gen_goldens.py
Writes tests/01_split_heads/golden/*.npy (float32, a few hundred bytes each).

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


def main():
    # Case "tall": T=5 tokens, d_model=12, H=3 heads of d_head=4
    # (T != d_head, d_head != H, so a swapped axis changes the shape or the order).
    x = common.inputs(101, 5, 12)
    heads, mistakes = split_mistakes(x, 3)
    common.save(OUT, "tall_x", x)
    common.save(OUT, "tall_heads", heads)
    for name, a in mistakes.items():
        common.save(OUT, "tall_heads_mistake_" + name, a)

    # Case "wide": T=2 tokens, d_model=12, H=2 heads of d_head=6 (T < d_head).
    x = common.inputs(102, 2, 12)
    heads, mistakes = split_mistakes(x, 2)
    common.save(OUT, "wide_x", x)
    common.save(OUT, "wide_heads", heads)
    for name, a in mistakes.items():
        common.save(OUT, "wide_heads_mistake_" + name, a)

    # combine_heads on its own input: H=4 heads, T=3 tokens, d_head=2.
    heads = common.inputs(103, 4, 3, 2)
    x, mistakes = combine_mistakes(heads)
    common.save(OUT, "combine_heads_in", heads)
    common.save(OUT, "combine_x", x)
    for name, a in mistakes.items():
        common.save(OUT, "combine_x_mistake_" + name, a)

    # Every mistake must differ from the right answer, or it could not be named.
    for prefix in ("tall_heads", "wide_heads", "combine_x"):
        right = np.load(f"{OUT}/{prefix}.npy")
        for path in glob.glob(f"{OUT}/{prefix}_mistake_*.npy"):
            wrong = np.load(path)
            assert wrong.shape != right.shape or not np.array_equal(wrong, right), path


if __name__ == "__main__":
    main()
