// Lab 3 reference solution: the full multi-head attention layer.
//
//   x (T, d_model)
//     -> Q, K, V = x @ W_Q, x @ W_K, x @ W_V      each (T, d_model)
//     -> split_heads                              each (H, T, d_head)
//     -> attention_batched                        (H, T, d_head), weights (H, T, T)
//     -> combine_heads                            (T, d_model)
//     -> @ W_O                                    (T, d_model)
//
// Everything but the projections is reused from labs 1 and 2: this file only
// adds the four weight matrices and the order in which they are applied.
#include "labs/03_output_projection/multi_head_attention.h"

#include <stdexcept>
#include <string>

#include <xtensor-blas/xlinalg.hpp>

#include "common/rng.h"
#include "common/core/shape_string.h"
#include "labs/01_split_heads/split_heads.h"

namespace mha {

// The parameters are named apart from the members they set (-Wshadow).
MultiHeadAttention::MultiHeadAttention(int embed_dim, int num_heads, std::uint64_t seed)
    : d_model(embed_dim), n_heads(num_heads), d_head(0) {
  // Check the sizes before drawing anything, so a bad layer never exists.
  if (d_model <= 0) {
    throw std::invalid_argument("MultiHeadAttention: d_model=" + std::to_string(d_model) +
                                " must be positive");
  }
  if (n_heads <= 0) {
    throw std::invalid_argument("MultiHeadAttention: n_heads=" + std::to_string(n_heads) +
                                " must be positive");
  }
  if (d_model % n_heads != 0) {
    throw std::invalid_argument("MultiHeadAttention: d_model=" + std::to_string(d_model) +
                                " is not divisible by n_heads=" + std::to_string(n_heads));
  }
  d_head = d_model / n_heads;

  // One generator, four draws, in the order our NumPy version uses (docs/numpy/mha.py): the
  // stream continues from one matrix to the next, so swapping two lines here
  // gives a different (but equally random-looking) layer.
  const std::size_t d = static_cast<std::size_t>(d_model);
  NumpyRng rng(seed);
  W_Q = rng.normal_matrix(d, d, d);  // (d_model, d_model)
  W_K = rng.normal_matrix(d, d, d);  // (d_model, d_model)
  W_V = rng.normal_matrix(d, d, d);  // (d_model, d_model)
  W_O = rng.normal_matrix(d, d, d);  // (d_model, d_model)
}

AttentionResult MultiHeadAttention::attend(const Tensor2& x,
                                           const std::optional<Tensor2>& mask) const {
  const std::size_t T = x.shape(0);
  if (x.shape(1) != static_cast<std::size_t>(d_model)) {
    throw std::invalid_argument("MultiHeadAttention: x has shape " + shape_string(x) +
                                ", expected (T, d_model=" + std::to_string(d_model) + ")");
  }
  // Self-attention: every token is both a query and a key, so the mask is
  // (T, T). Checking here names the layer's own T in the message.
  if (mask && (mask->shape(0) != T || mask->shape(1) != T)) {
    throw std::invalid_argument("MultiHeadAttention: mask has shape " + shape_string(*mask) +
                                ", expected (" + std::to_string(T) + ", " +
                                std::to_string(T) + ")");
  }

  // pass 1: project. One (d_model, d_model) product per role computes every
  // head's projection at once; head h's slice is columns [h*d_head, (h+1)*d_head).
  // The weights are read on every call (never cached), so overwriting W_Q
  // between calls takes effect.
  Tensor2 Q = xt::linalg::dot(x, W_Q);  // (T, d_model)
  Tensor2 K = xt::linalg::dot(x, W_K);  // (T, d_model)
  Tensor2 V = xt::linalg::dot(x, W_V);  // (T, d_model)

  // pass 2: give each head its own (T, d_head) slice (lab 1).
  Tensor3 q = split_heads(Q, n_heads);  // (H, T, d_head)
  Tensor3 k = split_heads(K, n_heads);  // (H, T, d_head)
  Tensor3 v = split_heads(V, n_heads);  // (H, T, d_head)

  // pass 3: scaled dot-product attention in every head at once (lab 2);
  // it scales by 1/sqrt(d_head) and handles the mask and fully masked rows.
  return attention_batched(q, k, v, mask);  // output (H, T, d_head), weights (H, T, T)
}

Tensor2 MultiHeadAttention::forward(const Tensor2& x, const std::optional<Tensor2>& mask) const {
  AttentionResult heads = attend(x, mask);       // output (H, T, d_head)
  Tensor2 concat = combine_heads(heads.output);  // (T, d_model)
  // pass 4: W_O is where the heads mix. Without it, output column c would
  // come from head c / d_head alone; with it, every output column is a
  // learned combination of all heads' outputs at that position.
  Tensor2 y = xt::linalg::dot(concat, W_O);  // (T, d_model)
  return y;
}

std::size_t MultiHeadAttention::parameter_count() const {
  // Four (d_model, d_model) matrices. The head count does not appear: H heads
  // of width d_head = d_model / H use 3 * d_model^2 for Q, K, V together, and
  // W_O adds one more d_model^2.
  const std::size_t d = static_cast<std::size_t>(d_model);
  return 4 * d * d;
}

}  // namespace mha
