// Lab 5: grouped-query attention (GQA) and multi-query attention (MQA).
//
// n_heads query heads share n_kv_heads key/value heads: query heads are cut
// into n_kv_heads consecutive groups of n_heads / n_kv_heads, and every head
// in group g reads kv head g. The KV cache shrinks by n_heads / n_kv_heads.
//
//   n_kv_heads == n_heads  multi-head attention (same seed, same weights and
//                          same output as lab 3's MultiHeadAttention)
//   n_kv_heads == 1        multi-query attention
//
// Shapes: Q = x @ W_Q (T, d_model) -> (n_heads, T, d_head);
//         K, V = x @ W_K|W_V (T, n_kv_heads*d_head) -> (n_kv_heads, T, d_head)
//         -> repeat_kv -> (n_heads, T, d_head); then attention, combine, @ W_O.
//
// Seeded weights: NumpyRng(seed) draws W_Q, W_K, W_V, W_O in that order, all
// with fan-in d_model. The weights are public; every call uses their current
// values. Bad arguments (sizes <= 0, d_model % n_heads != 0,
// n_heads % n_kv_heads != 0, wrong input width or mask shape) throw
// std::invalid_argument naming the offending values.
//
// Lesson: docs/05_grouped_query_attention.md.
#ifndef MHA_LABS_05_GROUPED_QUERY_ATTENTION_GROUPED_QUERY_ATTENTION_H_
#define MHA_LABS_05_GROUPED_QUERY_ATTENTION_GROUPED_QUERY_ATTENTION_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "common/tensor.h"

namespace mha {

// (n_kv_heads, S, d_head) -> (n_heads, S, d_head): query head h reads kv head
// h / (n_heads / n_kv_heads), i.e. each kv head repeated in place (np.repeat),
// not the whole stack tiled (np.tile).
Tensor3 repeat_kv(const Tensor3& kv, int n_heads);

class GroupedQueryAttention {
 public:
  GroupedQueryAttention(int d_model, int n_heads, int n_kv_heads, std::uint64_t seed = 0);

  // x: (T, d_model) -> (T, d_model).
  Tensor2 forward(const Tensor2& x, const std::optional<Tensor2>& mask = std::nullopt) const;

  std::size_t parameter_count() const;            // 2*d_model^2 + 2*d_model*n_kv_heads*d_head
  std::size_t kv_cache_floats_per_token() const;  // 2 * n_kv_heads * d_head, one layer

  int d_model, n_heads, n_kv_heads, d_head;
  Tensor2 W_Q;  // (d_model, d_model)
  Tensor2 W_K;  // (d_model, n_kv_heads*d_head)
  Tensor2 W_V;  // (d_model, n_kv_heads*d_head)
  Tensor2 W_O;  // (d_model, d_model); drawn in this order, fan-in d_model

 private:
  // Lets the grader copy a layer between processes (common/grading/remote.h).
  friend struct remote::Access;
  GroupedQueryAttention() = default;
};

}  // namespace mha

#endif  // MHA_LABS_05_GROUPED_QUERY_ATTENTION_GROUPED_QUERY_ATTENTION_H_
