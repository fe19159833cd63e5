"""Goldens for lab 14 (The transformer block), computed with NumPy and PyTorch.

Run from the repository root:  /usr/bin/python3 tests/14_transformer_block/gen_goldens.py
Writes tests/14_transformer_block/golden/*.npy (hidden) and labs/14_transformer_block/golden/*.npy (public).
Next to each right answer, write what a classic mistake computes on the same
input (`*_mistake_<name>.npy`), so a failing test can say which mistake it
looks like (see docs/14_transformer_block.md, "Classic mistakes").
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "goldens"))
import common  # noqa: E402  (tools/goldens/common.py)

HIDDEN = common.golden_dir(__file__)
PUBLIC = common.public_golden_dir(__file__)


def save_case(out, case, x):
    """<case>_x, the right answer <case>_y, and what each classic mistake gives."""
    common.save(out, case + "_x", x)
    common.save(out, case + "_y", 2 * x)
    common.save(out, case + "_y_mistake_doubled_twice", 4 * x)


def main():
    # (Template values, exact in float32. A real lab draws its inputs with
    # common.inputs(seed, ...) and its weights as the header says.)
    save_case(PUBLIC, "pub", (np.arange(12, dtype=np.float32).reshape(4, 3) - 5) / 4)
    save_case(HIDDEN, "tall", (np.arange(18, dtype=np.float32).reshape(9, 2) - 7) / 8)
    common.report_written(PUBLIC, HIDDEN)


if __name__ == "__main__":
    main()
