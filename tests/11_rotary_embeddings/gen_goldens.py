"""Goldens for lab 11 (Rotary position embeddings (RoPE)), computed with NumPy and PyTorch.

Run from the repository root:  /usr/bin/python3 tests/11_rotary_embeddings/gen_goldens.py
Writes tests/11_rotary_embeddings/golden/*.npy (hidden) and labs/11_rotary_embeddings/golden/*.npy (public).
Next to each right answer, write what a classic mistake computes on the same
input (`*_mistake_<name>.npy`), so a failing test can say which mistake it
looks like (see docs/11_rotary_embeddings.md, "Classic mistakes").
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "goldens"))
import common  # noqa: E402  (tools/goldens/common.py)

OUT = common.golden_dir(__file__)


def main():
    x = common.inputs(11, 4, 3)
    common.save(OUT, "example_x", x)
    common.save(OUT, "example_y", 2 * x)
    common.save(OUT, "example_y_mistake_doubled_twice", 4 * x)


if __name__ == "__main__":
    main()
