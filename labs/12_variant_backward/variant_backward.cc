// Lab 12: the backward pass of grouped-query and latent attention. This is the file you edit.
// Read docs/12_variant_backward.md first; the header labs/12_variant_backward/variant_backward.h says what each function must do.
// Check your work with:  bazel test //labs/12_variant_backward/...
#include "labs/12_variant_backward/variant_backward.h"

#include <stdexcept>

// What you may call from earlier labs (labs/labs.json "calls"): split_heads and
// combine_heads (lab 1), softmax_rows and attention_batched (lab 2), causal_mask
// (lab 4), repeat_kv and GroupedQueryAttention's constructor (lab 5),
// MultiHeadLatentAttention's constructor and compress (lab 6), and
// attention_backward (lab 10). Helpers of common/core you may use too:
// shape_string (error messages), matrix_ref and vector_math (fast loops).
#include "common/core/shape_string.h"
#include "labs/01_split_heads/split_heads.h"
#include "labs/02_batched_attention/attention.h"
#include "labs/04_causal_mask/causal_mask.h"
#include "labs/05_grouped_query_attention/grouped_query_attention.h"
#include "labs/06_latent_attention/latent_attention.h"
#include "labs/10_attention_backward/attention_backward.h"

namespace mha {

GqaGrads gqa_backward(const GroupedQueryAttention& layer, const Tensor2& x,
                      const std::optional<Tensor2>& mask, const Tensor2& d_y) {
  // TODO:
  // 1. Check x (T, d_model), d_y (x's shape) and the mask (T, T).
  // 2. Recompute the forward: Q, K, V, each head's weights P and concat.
  // 3. dW_O = concat^T d_y; d_concat = d_y W_O^T.
  // 4. Lab 10's attention backward per query head, on the kv head it reads.
  // 5. Sum the kv-head gradients over the query heads of each group.
  // 6. dW_Q, dW_K, dW_V and dx (three paths).
  (void)layer, (void)x, (void)mask, (void)d_y;
  throw std::logic_error(
      "lab 12: gqa_backward is not implemented yet, see docs/12_variant_backward.md");
}

MlaGrads mla_backward(const MultiHeadLatentAttention& layer, const Tensor2& x,
                      const std::optional<Tensor2>& mask, const Tensor2& d_y) {
  // TODO:
  // 1. Check the arguments as above.
  // 2. Recompute the forward: c = x W_DKV, K = c W_UK, V = c W_UV, Q = x W_Q, P, concat.
  // 3. dW_O, d_concat, and the attention backward per head: dQ, dK, dV.
  // 4. dW_UK = c^T dK, dW_UV = c^T dV, dc = dK W_UK^T + dV W_UV^T.
  // 5. dW_DKV = x^T dc, dW_Q = x^T dQ, dx = dQ W_Q^T + dc W_DKV^T.
  (void)layer, (void)x, (void)mask, (void)d_y;
  throw std::logic_error(
      "lab 12: mla_backward is not implemented yet, see docs/12_variant_backward.md");
}

}  // namespace mha
