// Lab 5 reference solution: grouped-query attention (GQA).
//
//   x (T, d_model)
//     -> Q = x @ W_Q                       (T, d_model)      -> split (H, T, d_head)
//     -> K, V = x @ W_K, x @ W_V           (T, G*d_head)     -> split (G, T, d_head)
//     -> repeat_kv                         (H, T, d_head)    group g serves heads
//                                                            [g*H/G, (g+1)*H/G)
//     -> attention_batched                 (H, T, d_head)
//     -> combine_heads, @ W_O              (T, d_model)
//
// H = n_heads query heads, G = n_kv_heads key/value heads. Only K and V get
// smaller, so only they shrink the KV cache: by a factor H / G.
#include "labs/05_grouped_query_attention/grouped_query_attention.h"

#include <stdexcept>
#include <string>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xview.hpp>

#include "common/rng.h"
#include "common/core/shape_string.h"
#include "labs/01_split_heads/split_heads.h"
#include "labs/02_batched_attention/attention.h"

namespace mha {

Tensor3 repeat_kv(const Tensor3& kv, int n_heads) {
  const std::size_t n_kv_heads = kv.shape(0);
  if (n_heads <= 0) {
    throw std::invalid_argument("repeat_kv: n_heads=" + std::to_string(n_heads) +
                                " must be positive");
  }
  if (n_kv_heads == 0 || static_cast<std::size_t>(n_heads) % n_kv_heads != 0) {
    throw std::invalid_argument("repeat_kv: n_heads=" + std::to_string(n_heads) +
                                " is not divisible by n_kv_heads=" + std::to_string(n_kv_heads));
  }
  const std::size_t H = static_cast<std::size_t>(n_heads);
  const std::size_t S = kv.shape(1);
  const std::size_t d_head = kv.shape(2);
  const std::size_t group = H / n_kv_heads;  // query heads per kv head

  // Query heads are cut into consecutive groups: heads 0..group-1 read kv
  // head 0, the next `group` heads read kv head 1, and so on (np.repeat on
  // axis 0). Tiling instead (head h reads h % n_kv_heads) would interleave the
  // groups and pair each query head with another head's keys.
  Tensor3 out = xt::empty<float>({H, S, d_head});  // (H, S, d_head)
  for (std::size_t h = 0; h < H; ++h) {
    xt::view(out, h, xt::all(), xt::all()) = xt::view(kv, h / group, xt::all(), xt::all());
  }
  return out;
}

// The parameters are named apart from the members they set (-Wshadow).
GroupedQueryAttention::GroupedQueryAttention(int embed_dim, int num_heads, int num_kv_heads,
                                             std::uint64_t seed)
    : d_model(embed_dim), n_heads(num_heads), n_kv_heads(num_kv_heads), d_head(0) {
  // Check the sizes before drawing anything, so a bad layer never exists.
  if (d_model <= 0) {
    throw std::invalid_argument("GroupedQueryAttention: d_model=" + std::to_string(d_model) +
                                " must be positive");
  }
  if (n_heads <= 0) {
    throw std::invalid_argument("GroupedQueryAttention: n_heads=" + std::to_string(n_heads) +
                                " must be positive");
  }
  if (n_kv_heads <= 0) {
    throw std::invalid_argument("GroupedQueryAttention: n_kv_heads=" +
                                std::to_string(n_kv_heads) + " must be positive");
  }
  if (d_model % n_heads != 0) {
    throw std::invalid_argument("GroupedQueryAttention: d_model=" + std::to_string(d_model) +
                                " is not divisible by n_heads=" + std::to_string(n_heads));
  }
  if (n_heads % n_kv_heads != 0) {
    throw std::invalid_argument("GroupedQueryAttention: n_heads=" + std::to_string(n_heads) +
                                " is not divisible by n_kv_heads=" +
                                std::to_string(n_kv_heads) +
                                "; every kv head must serve the same number of query heads");
  }
  d_head = d_model / n_heads;

  // Queries keep full width; keys and values only have n_kv_heads heads of
  // the same d_head. Draw order and fan-in as in lab 3, so n_kv_heads ==
  // n_heads gives exactly lab 3's layer for the same seed.
  const std::size_t d = static_cast<std::size_t>(d_model);
  const std::size_t kv_width = static_cast<std::size_t>(n_kv_heads * d_head);
  NumpyRng rng(seed);
  W_Q = rng.normal_matrix(d, d, d);         // (d_model, d_model)
  W_K = rng.normal_matrix(d, kv_width, d);  // (d_model, n_kv_heads*d_head)
  W_V = rng.normal_matrix(d, kv_width, d);  // (d_model, n_kv_heads*d_head)
  W_O = rng.normal_matrix(d, d, d);         // (d_model, d_model)
}

Tensor2 GroupedQueryAttention::forward(const Tensor2& x, const std::optional<Tensor2>& mask) const {
  const std::size_t T = x.shape(0);
  if (x.shape(1) != static_cast<std::size_t>(d_model)) {
    throw std::invalid_argument("GroupedQueryAttention: x has shape " + shape_string(x) +
                                ", expected (T, d_model=" + std::to_string(d_model) + ")");
  }
  if (mask && (mask->shape(0) != T || mask->shape(1) != T)) {
    throw std::invalid_argument("GroupedQueryAttention: mask has shape " + shape_string(*mask) +
                                ", expected (" + std::to_string(T) + ", " +
                                std::to_string(T) + ")");
  }

  // pass 1: project. The weights are read on every call (never cached).
  Tensor2 Q = xt::linalg::dot(x, W_Q);  // (T, d_model)
  Tensor2 K = xt::linalg::dot(x, W_K);  // (T, n_kv_heads*d_head)
  Tensor2 V = xt::linalg::dot(x, W_V);  // (T, n_kv_heads*d_head)

  // pass 2: split. Q into n_heads heads, K and V into only n_kv_heads: this
  // (G, T, d_head) pair is what a KV cache would store.
  Tensor3 q = split_heads(Q, n_heads);     // (H, T, d_head)
  Tensor3 k = split_heads(K, n_kv_heads);  // (G, T, d_head)
  Tensor3 v = split_heads(V, n_kv_heads);  // (G, T, d_head)

  // pass 3: share. Each kv head serves its group of n_heads / n_kv_heads
  // consecutive query heads; after this the layer is plain MHA (lab 3).
  Tensor3 k_rep = repeat_kv(k, n_heads);  // (H, T, d_head)
  Tensor3 v_rep = repeat_kv(v, n_heads);  // (H, T, d_head)

  // pass 4: attention in every query head (lab 2), then mix heads with W_O.
  AttentionResult heads = attention_batched(q, k_rep, v_rep, mask);  // output (H, T, d_head)
  Tensor2 concat = combine_heads(heads.output);                       // (T, d_model)
  Tensor2 y = xt::linalg::dot(concat, W_O);                           // (T, d_model)
  return y;
}

std::size_t GroupedQueryAttention::parameter_count() const {
  // W_Q and W_O are (d_model, d_model); W_K and W_V are (d_model, G*d_head).
  const std::size_t d = static_cast<std::size_t>(d_model);
  const std::size_t kv_width = static_cast<std::size_t>(n_kv_heads) * d_head;
  return 2 * d * d + 2 * d * kv_width;
}

std::size_t GroupedQueryAttention::kv_cache_floats_per_token() const {
  // One key and one value vector per kv head; the query heads cache nothing.
  return 2 * static_cast<std::size_t>(n_kv_heads) * static_cast<std::size_t>(d_head);
}

}  // namespace mha
