// Lab 6 reference solution: multi-head latent attention (MLA).
//
// Multi-head attention caches K and V: 2 * d_model floats per token per
// layer. MLA caches one latent vector per token instead,
//
//   c = x @ W_DKV                                   (T, kv_rank)
//
// and rebuilds keys and values from it when attending:
//
//   K = c @ W_UK,  V = c @ W_UV                     each (T, d_model)
//
// Two ways to compute the same layer:
//
//   forward           naive: build K and V, then labs 1-3 as they are.
//   forward_absorbed  never builds K or V. Per head h, with W_UK_h and W_UV_h
//                     the (kv_rank, d_head) column blocks of W_UK and W_UV
//                     and W_O_h the (d_head, d_model) row block of W_O:
//
//     scores_h = q_h @ k_h^T       = q_h @ (c @ W_UK_h)^T = (q_h @ W_UK_h^T) @ c^T
//     out      = sum_h p_h @ v_h @ W_O_h = sum_h (p_h @ c) @ (W_UV_h @ W_O_h)
//
// The scale stays 1/sqrt(d_head): the scores are the same numbers, only the
// order of the products changed, even though the dot product now runs over
// kv_rank latent dimensions.
#include "labs/06_latent_attention/latent_attention.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "common/rng.h"
#include "common/core/shape_string.h"
#include "labs/01_split_heads/split_heads.h"
#include "labs/02_batched_attention/attention.h"

namespace mha {
namespace {

void check_input(const Tensor2& x, int d_model) {
  if (x.shape(1) != static_cast<std::size_t>(d_model)) {
    throw std::invalid_argument("MultiHeadLatentAttention: x has shape " + shape_string(x) +
                                ", expected (T, d_model=" + std::to_string(d_model) + ")");
  }
}

// Self-attention: T queries, the same T tokens as keys.
void check_mask(const std::optional<Tensor2>& mask, std::size_t T) {
  if (mask && (mask->shape(0) != T || mask->shape(1) != T)) {
    throw std::invalid_argument("MultiHeadLatentAttention: mask has shape " + shape_string(*mask) +
                                ", expected (" + std::to_string(T) + ", " + std::to_string(T) +
                                ")");
  }
}

}  // namespace

// The parameters are named apart from the members they set (-Wshadow).
MultiHeadLatentAttention::MultiHeadLatentAttention(int embed_dim, int num_heads, int latent_rank,
                                                   std::uint64_t seed)
    : d_model(embed_dim), n_heads(num_heads), kv_rank(latent_rank), d_head(0) {
  const std::string who = "MultiHeadLatentAttention: ";
  if (d_model <= 0) {
    throw std::invalid_argument(who + "d_model=" + std::to_string(d_model) + " must be positive");
  }
  if (n_heads <= 0) {
    throw std::invalid_argument(who + "n_heads=" + std::to_string(n_heads) + " must be positive");
  }
  if (kv_rank <= 0) {
    throw std::invalid_argument(who + "kv_rank=" + std::to_string(kv_rank) + " must be positive");
  }
  if (d_model % n_heads != 0) {
    throw std::invalid_argument(who + "d_model=" + std::to_string(d_model) +
                                " is not divisible by n_heads=" + std::to_string(n_heads));
  }
  d_head = d_model / n_heads;

  // One stream, five draws, in the header's order. The up-projections read a
  // kv_rank-wide latent, so their fan-in is kv_rank, not d_model.
  const std::size_t d = static_cast<std::size_t>(d_model);
  const std::size_t r = static_cast<std::size_t>(kv_rank);
  NumpyRng rng(seed);
  W_Q = rng.normal_matrix(d, d, d);    // (d_model, d_model)
  W_DKV = rng.normal_matrix(d, r, d);  // (d_model, kv_rank)
  W_UK = rng.normal_matrix(r, d, r);   // (kv_rank, d_model)
  W_UV = rng.normal_matrix(r, d, r);   // (kv_rank, d_model)
  W_O = rng.normal_matrix(d, d, d);    // (d_model, d_model)
}

Tensor2 MultiHeadLatentAttention::compress(const Tensor2& x) const {
  check_input(x, d_model);
  // The down-projection: this (T, kv_rank) matrix is the whole KV cache.
  Tensor2 c = xt::linalg::dot(x, W_DKV);  // (T, kv_rank)
  return c;
}

Tensor2 MultiHeadLatentAttention::forward(const Tensor2& x,
                                          const std::optional<Tensor2>& mask) const {
  check_input(x, d_model);
  check_mask(mask, x.shape(0));

  // pass 1: queries from x, keys and values rebuilt from the latent. K and V
  // are full (T, d_model) matrices here: the memory MLA is meant to save.
  Tensor2 Q = xt::linalg::dot(x, W_Q);   // (T, d_model)
  Tensor2 c = compress(x);               // (T, kv_rank)
  Tensor2 K = xt::linalg::dot(c, W_UK);  // (T, d_model)
  Tensor2 V = xt::linalg::dot(c, W_UV);  // (T, d_model)

  // pass 2: from here on it is lab 3 exactly: split, attend, combine, W_O.
  Tensor3 q = split_heads(Q, n_heads);                       // (H, T, d_head)
  Tensor3 k = split_heads(K, n_heads);                       // (H, T, d_head)
  Tensor3 v = split_heads(V, n_heads);                       // (H, T, d_head)
  AttentionResult heads = attention_batched(q, k, v, mask);  // output (H, T, d_head)

  // pass 3: concatenate the heads and mix them.
  Tensor2 concat = combine_heads(heads.output);  // (T, d_model)
  Tensor2 y = xt::linalg::dot(concat, W_O);      // (T, d_model)
  return y;
}

Tensor2 MultiHeadLatentAttention::forward_absorbed(const Tensor2& x,
                                                   const std::optional<Tensor2>& mask) const {
  check_input(x, d_model);
  const std::size_t T = x.shape(0);
  check_mask(mask, T);
  const std::size_t dh = static_cast<std::size_t>(d_head);
  // The scores are q_h @ k_h^T, whatever order we multiply in, so the scale
  // is the one of lab 2: 1/sqrt(d_head), not 1/sqrt(kv_rank).
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_head));

  // pass 1: queries, and the latent, which is all we read for keys and
  // values. K and V are never built: the only (T, d_model) matrices in this
  // function are the queries and the output.
  Tensor2 Q = xt::linalg::dot(x, W_Q);  // (T, d_model)
  Tensor3 q = split_heads(Q, n_heads);  // (H, T, d_head)
  Tensor2 c = compress(x);              // (T, kv_rank)
  Tensor2 c_t = xt::transpose(c);       // (kv_rank, T)

  Tensor2 y = xt::zeros<float>({T, static_cast<std::size_t>(d_model)});  // (T, d_model)
  for (std::size_t h = 0; h < static_cast<std::size_t>(n_heads); ++h) {
    // Head h owns columns [lo, hi) of W_UK and W_UV and rows [lo, hi) of W_O.
    const std::size_t lo = h * dh, hi = (h + 1) * dh;
    Tensor2 W_UK_h = xt::view(W_UK, xt::all(), xt::range(lo, hi));  // (kv_rank, d_head)
    Tensor2 W_UV_h = xt::view(W_UV, xt::all(), xt::range(lo, hi));  // (kv_rank, d_head)
    Tensor2 W_O_h = xt::view(W_O, xt::range(lo, hi), xt::all());    // (d_head, d_model)

    Tensor2 q_h = xt::view(q, h, xt::all(), xt::all());  // (T, d_head)

    // pass 2: absorb W_UK into the query. q_h @ W_UK_h^T asks "which latent
    // directions would make a key that matches me?", so the query can be
    // compared with c directly. (A deployed model would fold W_Q_h @ W_UK_h^T
    // into one (d_model, kv_rank) matrix once; we recompute because the
    // weights are public and may change between calls.)
    Tensor2 q_latent = xt::linalg::dot(q_h, xt::transpose(W_UK_h));  // (T, kv_rank)
    Tensor2 scores = xt::linalg::dot(q_latent, c_t) * scale;         // (T, T)
    if (mask) scores += *mask;

    // pass 3: softmax from lab 2: stable for large scores, zero rows for
    // queries that may see no key.
    Tensor2 p = softmax_rows(scores);  // (T, T)

    // pass 4: absorb W_UV into the output projection. p @ c mixes latents
    // (T, kv_rank); W_UV_h @ W_O_h turns a latent straight into this head's
    // contribution to the output, so the value vectors v_h never exist.
    Tensor2 mixed = xt::linalg::dot(p, c);             // (T, kv_rank)
    Tensor2 W_UVO_h = xt::linalg::dot(W_UV_h, W_O_h);  // (kv_rank, d_model)
    y += xt::linalg::dot(mixed, W_UVO_h);              // (T, d_model)
  }
  return y;
}

std::size_t MultiHeadLatentAttention::parameter_count() const {
  // W_Q and W_O: d_model^2 each; W_DKV, W_UK, W_UV: d_model * kv_rank each.
  const std::size_t d = static_cast<std::size_t>(d_model);
  const std::size_t r = static_cast<std::size_t>(kv_rank);
  return 2 * d * d + 3 * d * r;
}

std::size_t MultiHeadLatentAttention::kv_cache_floats_per_token() const {
  // Only c is cached: one kv_rank vector per token, shared by keys and
  // values and by every head.
  return static_cast<std::size_t>(kv_rank);
}

}  // namespace mha
