// Lab 6: multi-head latent attention (MLA), the DeepSeek-V2 idea in its
// simplest form.
//
// Keys and values are not cached. Each token is compressed to a latent
//   c = x @ W_DKV                                    (T, kv_rank)
// and only c is cached: kv_rank floats per token per layer. Keys and values
// are rebuilt from it with up-projections:
//   K = c @ W_UK,  V = c @ W_UV                      each (T, d_model)
//
// forward          naive: materialise K and V, then attention as in lab 3,
//                  then @ W_O.
// forward_absorbed the same numbers without ever building K or V: per head h,
//                  q_h @ k_h^T = (q_h @ W_UK_h^T) @ c^T, so W_UK is folded into
//                  the queries; and (p_h @ c) @ W_UV_h @ W_O_h folds W_UV into
//                  the output projection. Scores and outputs are computed
//                  from c directly.
//
// Seeded weights: NumpyRng(seed) draws W_Q, W_DKV, W_UK, W_UV, W_O in that
// order; fan-in d_model for W_Q, W_DKV and W_O, kv_rank for W_UK and W_UV.
// The weights are public; every call uses their current values. Bad arguments
// (sizes <= 0, d_model % n_heads != 0, wrong input width or mask shape) throw
// std::invalid_argument naming the offending values.
//
// Lesson: docs/06_latent_attention.md.
#ifndef MHA_LABS_06_LATENT_ATTENTION_LATENT_ATTENTION_H_
#define MHA_LABS_06_LATENT_ATTENTION_LATENT_ATTENTION_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "common/tensor.h"

namespace mha {

class MultiHeadLatentAttention {
 public:
  MultiHeadLatentAttention(int d_model, int n_heads, int kv_rank, std::uint64_t seed = 0);

  Tensor2 compress(const Tensor2& x) const;  // c = x @ W_DKV, (T, kv_rank): all the cache keeps

  // Naive: K = c @ W_UK, V = c @ W_UV, then attention as in lab 3, then @ W_O.
  Tensor2 forward(const Tensor2& x, const std::optional<Tensor2>& mask = std::nullopt) const;

  // Absorbed: W_UK folded into the queries and W_UV into W_O, so scores and
  // outputs are computed from c directly; K and V are never materialised.
  Tensor2 forward_absorbed(const Tensor2& x,
                           const std::optional<Tensor2>& mask = std::nullopt) const;

  std::size_t parameter_count() const;            // 2*d_model^2 + 3*d_model*kv_rank
  std::size_t kv_cache_floats_per_token() const;  // kv_rank

  int d_model, n_heads, kv_rank, d_head;
  Tensor2 W_Q;    // (d_model, d_model), fan-in d_model
  Tensor2 W_DKV;  // (d_model, kv_rank), fan-in d_model
  Tensor2 W_UK;   // (kv_rank, d_model), fan-in kv_rank
  Tensor2 W_UV;   // (kv_rank, d_model), fan-in kv_rank
  Tensor2 W_O;    // (d_model, d_model), fan-in d_model; drawn in this order

 private:
  // Lets the grader copy a layer between processes (common/grading/remote.h).
  friend struct remote::Access;
  MultiHeadLatentAttention() = default;
};

}  // namespace mha

#endif  // MHA_LABS_06_LATENT_ATTENTION_LATENT_ATTENTION_H_
