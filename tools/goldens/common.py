"""Shared pieces of the golden generators (run with Debian's /usr/bin/python3).

The C++ labs are checked against numbers computed here, independently, with
NumPy and PyTorch. Conventions match the labs' headers:

* weights are (in, out) and applied as x @ W (PyTorch's Linear stores
  (out, in): we transpose when loading them into torch modules);
* seeded weights: np.random.default_rng(seed), each (r, c) matrix with fan-in
  f is standard_normal((r, c)).astype(float32) * (1 / sqrt(f));
* masks are additive (T, S); a query row that can see no key gives an
  all-zero weight row and output row (PyTorch gives NaN there; we zero it).

Every golden is written as float32 .npy with np.save, so the C++ tests load
them with xt::load_npy<float>.
"""
import os
import sys

import numpy as np

if not sys.executable.startswith("/usr/bin/"):
    sys.exit("run the golden generators with Debian's /usr/bin/python3 "
             "(apt-get install python3-numpy python3-torch), not " + sys.executable)

import torch  # noqa: E402

torch.set_default_dtype(torch.float64)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def golden_dir(generator):
    """tests/NN_name/golden beside the generator (pass __file__), created if missing:
    the hidden tests' goldens."""
    d = os.path.join(os.path.dirname(os.path.abspath(generator)), "golden")
    os.makedirs(d, exist_ok=True)
    return d


def public_golden_dir(generator):
    """labs/NN_name/golden for the generator tests/NN_name/gen_goldens.py (pass
    __file__), created if missing: the public tests' goldens, which learners get."""
    lab_dir = os.path.basename(os.path.dirname(os.path.abspath(generator)))
    d = os.path.join(ROOT, "labs", lab_dir, "golden")
    os.makedirs(d, exist_ok=True)
    return d


def save(directory, name, array):
    """Writes `array` as float32 <directory>/<name>.npy."""
    # C order always: a transposed view would be written in Fortran order.
    np.save(os.path.join(directory, name + ".npy"), np.ascontiguousarray(array, dtype=np.float32))


def weights(rng, rows, cols, fan_in):
    """One seeded weight matrix, exactly as NumpyRng::normal_matrix draws it."""
    return rng.standard_normal((rows, cols)).astype(np.float32) * np.float32(1 / np.sqrt(fan_in))


def inputs(seed, *shape, scale=1.0):
    """Random float32 activations from their own generator (not the weights')."""
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def f64(a):
    """A float64 NumPy copy of `a`, for references computed in double."""
    return np.asarray(a, dtype=np.float64)


def t64(a):
    """A float64 torch tensor of `a`."""
    return torch.from_numpy(np.asarray(a, np.float64))


def split_heads(a, n_heads):
    """(T, n_heads*d_head) -> (n_heads, T, d_head): head h owns columns
    [h*d_head, (h+1)*d_head). NumPy arrays and torch tensors alike."""
    t, d = a.shape
    return a.reshape(t, n_heads, d // n_heads).swapaxes(0, 1)


def combine_heads(heads):
    """(H, T, d_head) -> (T, H*d_head), the inverse of split_heads."""
    h, t, dh = heads.shape
    return heads.swapaxes(0, 1).reshape(t, h * dh)


def draws(seed, d_model, count=4):
    """The first `count` seeded (d_model, d_model) matrices of one generator:
    W_Q, W_K, W_V, W_O of MultiHeadAttention(d_model, H, seed)."""
    rng = np.random.default_rng(seed)
    return [weights(rng, d_model, d_model, d_model) for _ in range(count)]


def causal(T, S=None):
    """(T, S) additive causal mask aligned bottom-right (the last T of S positions)."""
    S = T if S is None else S
    i = np.arange(T)[:, None] + (S - T)
    j = np.arange(S)[None, :]
    return np.where(j <= i, 0.0, -np.inf).astype(np.float32)


def torch_attention(q, k, v, mask=None):
    """Reference attention in float64 torch. q (H,T,d), k/v (H,S,d), mask (T,S).

    Returns (output (H,T,d), weights (H,T,S)) as float64 NumPy arrays, with
    the rows of fully masked queries set to zero.
    """
    q, k, v = (torch.from_numpy(np.asarray(a, np.float64)) for a in (q, k, v))
    scores = q @ k.transpose(-1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + torch.from_numpy(np.asarray(mask, np.float64))
    w = torch.softmax(scores, dim=-1)
    w = torch.nan_to_num(w, nan=0.0)
    return (w @ v).numpy(), w.numpy()


def torch_mha(x, W_Q, W_K, W_V, W_O, n_heads, mask=None):
    """The full layer through torch.nn.MultiheadAttention (no bias), float64.

    Returns (T, d_model). Rows of queries that can see no key are zero.
    """
    T, d = x.shape
    mha = torch.nn.MultiheadAttention(d, n_heads, bias=False, batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.from_numpy(
            np.concatenate([W_Q.T, W_K.T, W_V.T]).astype(np.float64)))
        mha.out_proj.weight.copy_(torch.from_numpy(W_O.T.astype(np.float64)))
        xt = torch.from_numpy(x.astype(np.float64))[None]
        m = None if mask is None else torch.from_numpy(mask.astype(np.float64))
        y, _ = mha(xt, xt, xt, attn_mask=m, need_weights=False)
    y = torch.nan_to_num(y[0], nan=0.0)
    return y.numpy()
