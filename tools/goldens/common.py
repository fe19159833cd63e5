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

# PyTorch only where a helper uses it (torch_*, t64, autograd_nn_mha): a
# NumPy-only generator runs without it. When it is installed, it is loaded
# here, so that every generator that uses it gets float64 as its default dtype.
try:
    import torch  # noqa: E402
except ImportError:
    torch = None
else:
    torch.set_default_dtype(torch.float64)


def _torch():
    """torch, or a clear exit when a helper that needs it runs without it."""
    if torch is None:
        sys.exit("this golden helper needs PyTorch: apt-get install python3-torch "
                 "(tools/setup.sh --dev installs it)")
    return torch
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
    _torch()
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
    _torch()
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
    _torch()
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


def gqa_weights(seed, d_model, n_heads, n_kv_heads, order="QKVO", kv_fan_in=None):
    """W_Q (d, d), W_K, W_V (d, n_kv_heads*d_head), W_O (d, d) of
    GroupedQueryAttention(d_model, n_heads, n_kv_heads, seed), fan-in d_model.
    Two classic mistakes: `order` is the order of the draws (the API's is
    "QKVO"; "QOKV" draws the square ones first), and `kv_fan_in` scales W_K
    and W_V by another fan-in. The result is always W_Q, W_K, W_V, W_O."""
    kv = n_kv_heads * (d_model // n_heads)
    shape = {"Q": (d_model, d_model), "K": (kv, kv_fan_in or d_model),
             "V": (kv, kv_fan_in or d_model), "O": (d_model, d_model)}
    rng = np.random.default_rng(seed)
    drawn = {m: weights(rng, d_model, *shape[m]) for m in order}
    return [drawn[m] for m in "QKVO"]


def report_written(*directories):
    """Prints how many .npy files (and bytes) each directory holds."""
    for d in directories:
        files = [f for f in os.listdir(d) if f.endswith(".npy")]
        size = sum(os.path.getsize(os.path.join(d, f)) for f in files)
        print("wrote %d files (%d bytes) to %s" % (len(files), size, os.path.relpath(d, ROOT)))


# ------------------------------------------------------------ backward passes (labs 10, 12)

def torch_attention_autograd(q, k, v, mask):
    """Attention in differentiable float64 torch ops, (H, T, d) output, with the
    suite's convention for a query that sees no key: an all-zero weight row,
    with no NaN in the forward or the backward (torch.softmax alone gives NaN)."""
    _torch()
    scores = q @ k.transpose(-1, -2) / np.sqrt(q.shape[-1])
    if mask is None:
        return torch.softmax(scores, dim=-1) @ v
    m = t64(mask)
    sees_a_key = torch.isfinite(m).any(dim=-1, keepdim=True)  # (T, 1), constant
    scores = torch.where(sees_a_key, scores + m, torch.zeros_like(scores))
    return (torch.softmax(scores, dim=-1) * sees_a_key) @ v


def autograd_nn_mha(x, Ws, n_heads, mask, d_y):
    """{dx, dW_Q, dW_K, dW_V, dW_O} of sum(y * d_y) through
    torch.nn.MultiheadAttention (no bias; rows that see no key give NaN there,
    so only for masks where every query sees a key). Ws = W_Q, W_K, W_V, W_O."""
    _torch()
    d = x.shape[1]
    mha = torch.nn.MultiheadAttention(d, n_heads, bias=False, batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(t64(np.concatenate([Ws[0].T, Ws[1].T, Ws[2].T])))
        mha.out_proj.weight.copy_(t64(Ws[3].T))
    xt = t64(x)[None].requires_grad_()
    y, _ = mha(xt, xt, xt, attn_mask=None if mask is None else t64(mask), need_weights=False)
    y[0].backward(t64(d_y))
    w_in = mha.in_proj_weight.grad.numpy()  # (3d, d), (out, in)
    return {"dx": xt.grad[0].numpy(), "dW_Q": w_in[:d].T, "dW_K": w_in[d:2 * d].T,
            "dW_V": w_in[2 * d:].T, "dW_O": mha.out_proj.weight.grad.numpy().T}


def softmax_rows(scores):
    """NumPy softmax over the last axis; an all -inf row gives zeros."""
    m = scores.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(scores - m)
    s = e.sum(axis=-1, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)


def assert_grads_close(found, expected, case, tol):
    """Every gradient of `expected` (a dict) matches `found` to rtol = atol = tol."""
    for g in expected:
        assert np.allclose(found[g], expected[g], rtol=tol, atol=tol), (case, g)


def save_grads(out, case, grads, mistakes, wrong_of):
    """<case>_<g>.npy for each gradient g, and <case>_<g>_mistake_<m>.npy for
    each mistake m that changes g. mistakes: {m: names of the gradients it
    changes}; wrong_of(m): the gradients m computes instead (a dict), each
    changed one asserted to differ clearly from the right one."""
    for g, value in grads.items():
        assert np.all(np.isfinite(value)), (case, g)
        save(out, case + "_" + g, value)
    for m, changed in mistakes.items():
        wrong = wrong_of(m)
        for g in changed:
            assert not np.allclose(wrong[g], grads[g], rtol=1e-2, atol=1e-3), (case, g, m)
            save(out, "%s_%s_mistake_%s" % (case, g, m), wrong[g])
