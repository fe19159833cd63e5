// mutant: attention written by hand with scores scaled by 1/sqrt(d_model) instead of 1/sqrt(d_head)
#include "labs/03_output_projection/multi_head_attention.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xview.hpp>

#include "common/rng.h"
#include "labs/01_split_heads/split_heads.h"

namespace mha {

MultiHeadAttention::MultiHeadAttention(int d_model, int n_heads, std::uint64_t seed)
    : d_model(d_model), n_heads(n_heads), d_head(0) {
  if (d_model <= 0) {
    throw std::invalid_argument("d_model=" + std::to_string(d_model) + " must be positive");
  }
  if (n_heads <= 0) {
    throw std::invalid_argument("n_heads=" + std::to_string(n_heads) + " must be positive");
  }
  if (d_model % n_heads != 0) {
    throw std::invalid_argument("d_model=" + std::to_string(d_model) +
                                " is not divisible by n_heads=" + std::to_string(n_heads));
  }
  d_head = d_model / n_heads;
  const std::size_t d = static_cast<std::size_t>(d_model);
  NumpyRng rng(seed);
  W_Q = rng.normal_matrix(d, d, d);
  W_K = rng.normal_matrix(d, d, d);
  W_V = rng.normal_matrix(d, d, d);
  W_O = rng.normal_matrix(d, d, d);
}

AttentionResult MultiHeadAttention::attend(const Tensor2& x,
                                           const std::optional<Tensor2>& mask) const {
  const std::size_t T = x.shape(0);
  if (x.shape(1) != static_cast<std::size_t>(d_model)) {
    throw std::invalid_argument("x has " + std::to_string(x.shape(1)) +
                                " columns, expected d_model=" + std::to_string(d_model));
  }
  if (mask && (mask->shape(0) != T || mask->shape(1) != T)) {
    throw std::invalid_argument("mask has shape (" + std::to_string(mask->shape(0)) + ", " +
                                std::to_string(mask->shape(1)) + "), expected (" +
                                std::to_string(T) + ", " + std::to_string(T) + ")");
  }
  Tensor3 q = split_heads(xt::linalg::dot(x, W_Q), n_heads);  // (H, T, d_head)
  Tensor3 k = split_heads(xt::linalg::dot(x, W_K), n_heads);  // (H, T, d_head)
  Tensor3 v = split_heads(xt::linalg::dot(x, W_V), n_heads);  // (H, T, d_head)
  const std::size_t H = static_cast<std::size_t>(n_heads);
  AttentionResult r;
  r.output = xt::zeros<float>({H, T, static_cast<std::size_t>(d_head)});
  r.weights = xt::zeros<float>({H, T, T});
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_model));  // the mistake
  for (std::size_t h = 0; h < H; ++h) {
    Tensor2 qh = xt::view(q, h, xt::all(), xt::all());
    Tensor2 kh = xt::view(k, h, xt::all(), xt::all());
    Tensor2 vh = xt::view(v, h, xt::all(), xt::all());
    Tensor2 scores = xt::linalg::dot(qh, xt::transpose(kh)) * scale;  // (T, T)
    if (mask) scores += *mask;
    Tensor2 w = softmax_rows(scores);  // (T, T)
    xt::view(r.weights, h, xt::all(), xt::all()) = w;
    xt::view(r.output, h, xt::all(), xt::all()) = xt::linalg::dot(w, vh);
  }
  return r;
}

Tensor2 MultiHeadAttention::forward(const Tensor2& x, const std::optional<Tensor2>& mask) const {
  return xt::linalg::dot(combine_heads(attend(x, mask).output), W_O);
}

std::size_t MultiHeadAttention::parameter_count() const {
  const std::size_t d = static_cast<std::size_t>(d_model);
  return 4 * d * d;
}

}  // namespace mha
