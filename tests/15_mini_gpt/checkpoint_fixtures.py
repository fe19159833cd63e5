#!/usr/bin/python3
"""The checkpoint fixtures of labs/15_mini_gpt/checkpoint_test.cc, written by NumPy.

    /usr/bin/python3 tests/15_mini_gpt/checkpoint_fixtures.py

Writes labs/15_mini_gpt/testdata/:
  numpy_savez.npz       a whole checkpoint (checkpoint.h's format) of a tiny
                        model, saved by np.savez: the C++ reader must load it
  numpy_compressed.npz  the same by np.savez_compressed: the reader must refuse it

The tiny model: config (64, 32, 4, 2, 6, 2), base 10000, seed 7, the corpus's
tokens, code_hash "numpy"; its k-th tensor (in checkpoint.h's order) holds
(arange(size) + 1000 k) / 1024 in float32 (exact). checkpoint_test checks those
values, and that the C++ writer saves this model as the bytes of
testdata/written_by_cpp.npz, which tools/lab/tests/test_mini_gpt_checkpoint.py
reads with np.load.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TESTDATA = os.path.join(ROOT, "labs", "15_mini_gpt", "testdata")
sys.path.insert(0, HERE)
import verb_grammar  # noqa: E402

CONFIG = (64, 32, 4, 2, 6, 2)  # vocab, max_len, d_model, n_heads, d_ff, n_layers


def tensor_shapes(config=CONFIG):
    """[(name, shape)] in checkpoint.h's order."""
    vocab, _, d, _, f, layers = config
    out = [("embed", (vocab, d))]
    for l in range(layers):
        p = "blocks.%d." % l
        out += [(p + "ln1_gamma", (d,)), (p + "ln1_beta", (d,)),
                (p + "attn.W_Q", (d, d)), (p + "attn.W_K", (d, d)), (p + "attn.W_V", (d, d)),
                (p + "attn.W_O", (d, d)), (p + "ln2_gamma", (d,)), (p + "ln2_beta", (d,)),
                (p + "ffn.W_1", (d, f)), (p + "ffn.b_1", (f,)), (p + "ffn.W_2", (f, d)),
                (p + "ffn.b_2", (d,))]
    return out + [("lnf_gamma", (d,)), ("lnf_beta", (d,))]


def tiny_checkpoint():
    """Every array of the tiny model's checkpoint, by name."""
    arrays = {}
    for k, (name, shape) in enumerate(tensor_shapes()):
        size = int(np.prod(shape))
        arrays[name] = ((np.arange(size) + 1000 * k) / 1024).astype(np.float32).reshape(shape)
    arrays["config"] = np.array(CONFIG, dtype=np.int64)
    arrays["base"] = np.float64(10000.0)
    arrays["seed"] = np.uint64(7)
    arrays["tokens"] = np.array(verb_grammar.TOKENS)
    arrays["code_hash"] = np.array("numpy")
    return arrays


def main():
    os.makedirs(TESTDATA, exist_ok=True)
    arrays = tiny_checkpoint()
    np.savez(os.path.join(TESTDATA, "numpy_savez.npz"), **arrays)
    np.savez_compressed(os.path.join(TESTDATA, "numpy_compressed.npz"), **arrays)
    print("wrote numpy_savez.npz and numpy_compressed.npz in", os.path.relpath(TESTDATA, ROOT))


if __name__ == "__main__":
    main()
