"""Labs 1-5 in NumPy: multi-head attention from split heads to grouped-query
attention, written to be read next to the C++ labs.

    /usr/bin/python3 docs/numpy/mha.py

prints a few rows of a multi-head layer's and a grouped-query layer's output
for a fixed seed and input. `bazel run //labs/05_grouped_query_attention:print_numbers`
prints the same rows from your C++ labs 1-5, to the printed precision.

Everything follows the conventions of the C++ headers:
  * activations are (T, d_model), one row per token; per-head tensors are
    (H, T, d_head); masks are additive (T, S), 0 keeps a score, -inf removes it;
  * weights are stored (in, out) and applied as x @ W (PyTorch stores (out, in));
  * scores are scaled by 1/sqrt(d_head), never 1/sqrt(d_model);
  * the softmax subtracts the row max, and a row that is entirely -inf (a query
    that may see no key) gives zero weights and a zero output, never NaN;
  * seeded weights: one np.random.default_rng(seed) draws the matrices in the
    documented order; an (r, c) matrix with fan-in f is
    standard_normal((r, c)).astype(float32) * float32(1 / sqrt(f)).
Only NumPy is needed (on Debian 12: sudo apt-get install python3-numpy; or
pip install numpy in a virtual environment, see README.md). Everything is
float32, as in the C++ labs.
"""
import sys

try:
    import numpy as np
except ImportError:
    sys.exit("docs/numpy/mha.py needs NumPy: on Debian 12, sudo apt-get install python3-numpy "
             "(then run it with /usr/bin/python3); or python3 -m venv ~/venv-numpy && "
             "~/venv-numpy/bin/pip install numpy, then run it with ~/venv-numpy/bin/python")


def weight(rng, rows, cols, fan_in):
    """One seeded (rows, cols) weight matrix: what NumpyRng::normal_matrix draws.

    The scale is rounded to float32 once and the product taken in float32.
    Writing it as np.float32(...) matters: under NumPy 2's promotion rules a
    float64 scalar such as 1 / np.sqrt(fan_in) would turn the product into
    float64, and the weights would no longer match the C++ ones bit for bit.
    """
    z = rng.standard_normal((rows, cols))
    return z.astype(np.float32) * np.float32(1 / np.sqrt(fan_in))


# ----------------------------------------------------------------- lab 1

def split_heads(x, n_heads):
    """(T, d_model) -> (n_heads, T, d_head): head h owns columns [h*d_head, (h+1)*d_head)."""
    T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads != 0:
        raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
    d_head = d_model // n_heads
    # Cut each row into n_heads pieces, then bring the head axis to the front.
    # Reshaping straight to (n_heads, T, d_head) would mix tokens into heads.
    return x.reshape(T, n_heads, d_head).transpose(1, 0, 2)


def combine_heads(heads):
    """(n_heads, T, d_head) -> (T, n_heads * d_head), the inverse of split_heads."""
    n_heads, T, d_head = heads.shape
    return heads.transpose(1, 0, 2).reshape(T, n_heads * d_head)


# ----------------------------------------------------------------- lab 2

def softmax_rows(scores):
    """Softmax over the last axis; a row that is entirely -inf becomes zeros.

    The usual one-liner, exp(x - x.max()) / sum, turns such a row into NaN:
    its max is -inf and -inf - (-inf) is NaN. Shifting that row by 0 instead
    gives exp(-inf) = 0 everywhere, and dividing by a zero sum is skipped.
    """
    row_max = scores.max(axis=-1, keepdims=True)
    row_max = np.where(np.isneginf(row_max), np.float32(0), row_max)
    e = np.exp(scores - row_max)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total > 0, total, np.float32(1))


def attention(q, k, v, mask=None):
    """Scaled dot-product attention of every head at once.

    q: (H, T, d_head); k, v: (H, S, d_head); mask: (T, S) or None, shared by
    every head. Returns (output (H, T, d_head), weights (H, T, S)).
    """
    d_head = q.shape[-1]
    scores = q @ k.transpose(0, 2, 1) * np.float32(1 / np.sqrt(d_head))  # (H, T, S)
    if mask is not None:
        scores = scores + mask  # (T, S) broadcasts over the heads
    weights = softmax_rows(scores)  # (H, T, S)
    return weights @ v, weights  # (H, T, d_head)


# ----------------------------------------------------------------- lab 3

class MultiHeadAttention:
    """The full layer: Q, K, V projections, split, attend, combine, @ W_O."""

    def __init__(self, d_model, n_heads, seed=0):
        if d_model <= 0 or n_heads <= 0 or d_model % n_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        rng = np.random.default_rng(seed)  # one stream, four draws, in this order
        self.W_Q = weight(rng, d_model, d_model, d_model)
        self.W_K = weight(rng, d_model, d_model, d_model)
        self.W_V = weight(rng, d_model, d_model, d_model)
        self.W_O = weight(rng, d_model, d_model, d_model)

    def attend(self, x, mask=None):
        """Everything before combine_heads: (output (H, T, d_head), weights (H, T, T))."""
        q = split_heads(x @ self.W_Q, self.n_heads)
        k = split_heads(x @ self.W_K, self.n_heads)
        v = split_heads(x @ self.W_V, self.n_heads)
        return attention(q, k, v, mask)

    def forward(self, x, mask=None):
        """(T, d_model) -> (T, d_model). W_O is where the heads mix."""
        output, _ = self.attend(x, mask)
        return combine_heads(output) @ self.W_O

    def parameter_count(self):
        return 4 * self.d_model ** 2


# ----------------------------------------------------------------- lab 4

def causal_mask(T, S=None):
    """(T, S): query i is position S - T + i and sees keys j <= S - T + i."""
    S = T if S is None else S
    if T <= 0 or S < T:
        raise ValueError(f"T={T} and S={S}: need 0 < T <= S")
    i = np.arange(T)[:, None] + (S - T)
    j = np.arange(S)[None, :]
    return np.where(j <= i, np.float32(0), np.float32(-np.inf))


def padding_mask(T, key_valid):
    """(T, S): -inf in the column of every key whose key_valid is False."""
    valid = np.asarray(key_valid, dtype=bool)
    return np.where(valid[None, :], np.float32(0), np.float32(-np.inf)).repeat(T, axis=0)


def combine_masks(a, b):
    """Additive masks compose by addition: a key removed by either stays removed."""
    if a.shape != b.shape:
        raise ValueError(f"a has shape {a.shape} but b has shape {b.shape}")
    return a + b


# ----------------------------------------------------------------- lab 5

def repeat_kv(kv, n_heads):
    """(n_kv_heads, S, d_head) -> (n_heads, S, d_head): kv head g serves query
    heads g * group ... (g + 1) * group - 1 (np.repeat, not np.tile)."""
    n_kv_heads = kv.shape[0]
    if n_heads <= 0 or n_heads % n_kv_heads != 0:
        raise ValueError(f"n_heads={n_heads} is not divisible by n_kv_heads={n_kv_heads}")
    return np.repeat(kv, n_heads // n_kv_heads, axis=0)


class GroupedQueryAttention:
    """n_heads query heads share n_kv_heads key/value heads."""

    def __init__(self, d_model, n_heads, n_kv_heads, seed=0):
        if min(d_model, n_heads, n_kv_heads) <= 0 or d_model % n_heads or n_heads % n_kv_heads:
            raise ValueError(f"d_model={d_model}, n_heads={n_heads}, n_kv_heads={n_kv_heads}")
        self.d_model, self.n_heads, self.n_kv_heads = d_model, n_heads, n_kv_heads
        self.d_head = d_model // n_heads
        kv_width = n_kv_heads * self.d_head
        rng = np.random.default_rng(seed)  # the order of lab 3; fan-in d_model for all four
        self.W_Q = weight(rng, d_model, d_model, d_model)
        self.W_K = weight(rng, d_model, kv_width, d_model)
        self.W_V = weight(rng, d_model, kv_width, d_model)
        self.W_O = weight(rng, d_model, d_model, d_model)

    def forward(self, x, mask=None):
        q = split_heads(x @ self.W_Q, self.n_heads)      # (H, T, d_head)
        k = split_heads(x @ self.W_K, self.n_kv_heads)   # (G, T, d_head): what a cache keeps
        v = split_heads(x @ self.W_V, self.n_kv_heads)   # (G, T, d_head)
        output, _ = attention(q, repeat_kv(k, self.n_heads), repeat_kv(v, self.n_heads), mask)
        return combine_heads(output) @ self.W_O

    def parameter_count(self):
        return 2 * self.d_model ** 2 + 2 * self.d_model * self.n_kv_heads * self.d_head

    def kv_cache_floats_per_token(self):
        return 2 * self.n_kv_heads * self.d_head


# ----------------------------------------------------------------- the numbers

D_MODEL, N_HEADS, N_KV_HEADS, T = 8, 4, 2, 4
# The input seed is chosen so that no printed value lies within 6e-6 of a
# rounding boundary of the 4th decimal: float32 sums taken in another order
# (BLAS in C++, NumPy's own loops here) differ by about 1e-6, which then
# cannot change a printed digit.
LAYER_SEED, INPUT_SEED = 0, 2947


def print_rows(title, y):
    print(title)
    for t, row in enumerate(y):
        print("  row %d:" % t + "".join(" %8.4f" % value for value in row))


def main():
    # The input comes from its own generator, drawn as a (T, d_model) matrix
    # with fan-in 1: NumpyRng(INPUT_SEED).normal_matrix(T, d_model, 1) in C++.
    x = weight(np.random.default_rng(INPUT_SEED), T, D_MODEL, 1)
    mask = causal_mask(T)
    mha = MultiHeadAttention(D_MODEL, N_HEADS, seed=LAYER_SEED)
    gqa = GroupedQueryAttention(D_MODEL, N_HEADS, N_KV_HEADS, seed=LAYER_SEED)
    print("x: (T=%d, d_model=%d) from default_rng(%d); causal mask" % (T, D_MODEL, INPUT_SEED))
    print_rows("MultiHeadAttention(d_model=%d, n_heads=%d, seed=%d).forward(x, causal_mask(%d))"
               % (D_MODEL, N_HEADS, LAYER_SEED, T), mha.forward(x, mask))
    print_rows("GroupedQueryAttention(d_model=%d, n_heads=%d, n_kv_heads=%d, seed=%d)"
               ".forward(x, causal_mask(%d))" % (D_MODEL, N_HEADS, N_KV_HEADS, LAYER_SEED, T),
               gqa.forward(x, mask))
    print("parameters: MHA %d, GQA %d; KV cache floats per token: MHA %d, GQA %d"
          % (mha.parameter_count(), gqa.parameter_count(), 2 * D_MODEL,
             gqa.kv_cache_floats_per_token()))


if __name__ == "__main__":
    main()
