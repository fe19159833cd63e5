"""Lab 15's checkpoint file (labs/15_mini_gpt/checkpoint.h) is what NumPy reads:
np.load, without pickle, on testdata/written_by_cpp.npz, the bytes the C++ writer
saves (labs/15_mini_gpt/checkpoint_test checks that it still writes them) for the
fixture model of tests/15_mini_gpt/checkpoint_fixtures.py."""
import os
import sys

import numpy as np

from labs import ROOT

sys.path.insert(0, os.path.join(ROOT, "tests", "15_mini_gpt"))
import checkpoint_fixtures  # noqa: E402

WRITTEN = os.path.join(ROOT, "labs", "15_mini_gpt", "testdata", "written_by_cpp.npz")


def test_numpy_reads_every_array_the_cpp_writer_saved_without_pickle():
    want = checkpoint_fixtures.tiny_checkpoint()
    with np.load(WRITTEN, allow_pickle=False) as z:
        assert sorted(z.files) == sorted(want)
        for name, value in want.items():
            value = np.asarray(value)
            assert z[name].dtype == value.dtype, name
            assert z[name].shape == value.shape, name
            assert (z[name] == value).all(), name


def test_the_format_is_the_one_checkpoint_h_documents():
    with np.load(WRITTEN, allow_pickle=False) as z:
        vocab, max_len, d_model, n_heads, d_ff, n_layers = (int(v) for v in z["config"])
        assert z["embed"].shape == (vocab, d_model)
        assert z["blocks.%d.ffn.W_1" % (n_layers - 1)].shape == (d_model, d_ff)
        assert z["tokens"].dtype.kind == "U" and z["tokens"].shape == (vocab,)
        assert z["tokens"][9] == "tú"
        assert z["code_hash"].shape == () and z["seed"].dtype == np.uint64
        assert z["base"].dtype == np.float64 and max_len >= 1 and d_model % n_heads == 0
