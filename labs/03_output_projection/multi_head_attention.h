// Lab 3: the full multi-head attention layer, with the output projection W_O.
//
//   Q = x @ W_Q,  K = x @ W_K,  V = x @ W_V                    each (T, d_model)
//   q, k, v = split_heads(Q|K|V, n_heads)                      each (H, T, d_head)
//   o = attention(q, k, v, mask).output                        (H, T, d_head)
//   y = combine_heads(o) @ W_O                                 (T, d_model)
//
// W_O is where the heads mix: without it each output column would come from
// one head only. The layer has 4 * d_model^2 parameters, d_model^2 more than
// a single head of full width, whatever the number of heads.
//
// Seeded weights: NumpyRng(seed) draws W_Q, W_K, W_V, W_O in that order,
// each (d_model, d_model) with fan-in d_model (see common/rng.h), so that
// np.random.default_rng(seed) in NumPy (docs/numpy/mha.py) gives the same layer.
// The weights are public: a test may overwrite them, and every later call
// must use the new values (do not cache anything derived from them).
//
// Bad arguments (d_model or n_heads <= 0, d_model % n_heads != 0, an input
// whose width is not d_model, a mask that is not (T, T)) throw
// std::invalid_argument naming the offending values.
//
// Lesson: docs/03_output_projection.md.
#ifndef MHA_LABS_03_OUTPUT_PROJECTION_MULTI_HEAD_ATTENTION_H_
#define MHA_LABS_03_OUTPUT_PROJECTION_MULTI_HEAD_ATTENTION_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "common/tensor.h"
#include "labs/02_batched_attention/attention.h"

namespace mha {

class MultiHeadAttention {
 public:
  MultiHeadAttention(int d_model, int n_heads, std::uint64_t seed = 0);

  // x: (T, d_model) -> (T, d_model): Q,K,V projections, split, attend, combine, @ W_O.
  Tensor2 forward(const Tensor2& x, const std::optional<Tensor2>& mask = std::nullopt) const;

  // The per-head step before combine and W_O; weights are what lab 7 analyses.
  AttentionResult attend(const Tensor2& x,
                         const std::optional<Tensor2>& mask = std::nullopt) const;

  std::size_t parameter_count() const;  // 4 * d_model^2

  int d_model, n_heads, d_head;
  Tensor2 W_Q, W_K, W_V, W_O;  // each (d_model, d_model), drawn in this order, fan-in d_model

 private:
  // Lets the grader copy a layer between processes (common/grading/remote.h).
  friend struct remote::Access;
  MultiHeadAttention() = default;
};

}  // namespace mha

#endif  // MHA_LABS_03_OUTPUT_PROJECTION_MULTI_HEAD_ATTENTION_H_
