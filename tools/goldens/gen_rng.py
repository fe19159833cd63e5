#!/usr/bin/env python3
"""Writes the golden files that pin mha::NumpyRng to NumPy's random stream.

The C++ class NumpyRng (common/rng.h) promises to reproduce

    np.random.default_rng(seed).standard_normal(...)

bit for bit (and np.random.default_rng(seed).random(...)), and to build
weight matrices exactly like the NumPy lessons do.
This script records what NumPy actually produces so that common/rng_test.cc
can compare against it.

Run it with Debian's NumPy (1.x), from the repository root:

    /usr/bin/python3 tools/goldens/gen_rng.py

It uses only NumPy and writes .npy files into common/testdata/.
"""

import os

import numpy as np

OUT_DIR = os.path.join("common", "testdata")

# Seeds for the raw-stream goldens. 2**64 - 1 is the largest seed the C++
# API accepts; it exercises SeedSequence with two 32-bit entropy words.
NORMAL_SEEDS = (0, 1, 42, 12345, 2**64 - 1)
NORMAL_DRAWS = 10000

# Draw 241877 of seed 0 goes through the ziggurat's tail branch, where
# log1p(-u) and log(1 - u) give results one ulp apart (NumPy uses log1p).
# The first 10000 draws of the seeds above never hit such a case, so a short
# window around that draw is pinned separately.
TAIL_SEED = 0
TAIL_WINDOW_START = 241872
TAIL_WINDOW_LEN = 8


def weight_matrix(rng, rows, cols, fan_in):
    """The lessons' weight initialiser: N(0, 1/fan_in) in float32.

    Under NumPy 1.x casting rules the float64 scalar 1/sqrt(fan_in) is
    rounded to float32 once and the product is computed in float32; the
    final astype only makes that explicit (and is a no-op there).
    """
    z = rng.standard_normal((rows, cols))
    w = z.astype(np.float32) * (1 / np.sqrt(fan_in))
    return w.astype(np.float32)


def save(name, array):
    path = os.path.join(OUT_DIR, name)
    np.save(path, array)
    print(f"wrote {path}  dtype={array.dtype}  shape={array.shape}")


def main():
    # weight_matrix's casting claim, checked rather than assumed: under NumPy
    # 2 (NEP 50) float32 * float64-scalar is float64, so the product changes.
    probe = np.ones((1, 1), np.float32) * (1 / np.sqrt(5))
    assert probe.dtype == np.float32, "run with NumPy 1.x (legacy casting)"

    os.makedirs(OUT_DIR, exist_ok=True)

    # 1. Raw standard_normal streams, float64.
    for seed in NORMAL_SEEDS:
        draws = np.random.default_rng(seed).standard_normal(NORMAL_DRAWS)
        assert draws.dtype == np.float64
        save(f"rng_normal_seed{seed}.npy", draws)

    # 1b. The tail-branch window described at TAIL_WINDOW_START.
    draws = np.random.default_rng(TAIL_SEED).standard_normal(
        TAIL_WINDOW_START + TAIL_WINDOW_LEN)[TAIL_WINDOW_START:]
    save(f"rng_normal_seed{TAIL_SEED}_from{TAIL_WINDOW_START}.npy", draws)

    # 2. Single weight matrices, float32.
    for seed, rows, cols, fan_in in ((7, 5, 3, 5), (11, 16, 8, 16)):
        w = weight_matrix(np.random.default_rng(seed), rows, cols, fan_in)
        assert w.dtype == np.float32, w.dtype
        save(f"rng_matrix_seed{seed}_{rows}x{cols}_fanin{fan_in}.npy", w)

    # 3. Two matrices drawn one after the other from the same generator: the
    #    second must continue the stream where the first stopped.
    rng = np.random.default_rng(3)
    a = weight_matrix(rng, 4, 6, 4)
    b = weight_matrix(rng, 6, 4, 6)
    assert a.dtype == np.float32 and b.dtype == np.float32
    save("rng_two_matrices_seed3_a.npy", a)
    save("rng_two_matrices_seed3_b.npy", b)

    # 4. Uniform draws (Generator.random(), float64): two seeds, and one
    #    stream that alternates normals and uniforms (both continue the same
    #    generator: normal, normal, random, normal, random, random, ...).
    for seed in (0, 7):
        save(f"rng_random_seed{seed}.npy", np.random.default_rng(seed).random(1000))
    rng = np.random.default_rng(5)
    mixed = [rng.random() if i % 3 else rng.standard_normal() for i in range(300)]
    save("rng_mixed_seed5.npy", np.array(mixed, dtype=np.float64))


if __name__ == "__main__":
    main()
