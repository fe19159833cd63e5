// Lab 2: scaled dot-product attention over all heads at once.
//
// For every head h, query i and key j:
//
//   scores[h,i,j]  = q[h,i,:] . k[h,j,:] / sqrt(d_head)  (+ mask[i,j])
//   weights[h,i,:] = softmax over j of scores[h,i,:]
//   output[h,i,:]  = sum_j weights[h,i,j] * v[h,j,:]
//
// Shapes: q (H, T, d_head); k and v (H, S, d_head); mask (T, S); weights
// (H, T, S); output (H, T, d_head). T queries attend over S keys (S == T in
// self-attention without a cache).
//
// Conventions shared by every lab:
//   - scores are scaled by 1/sqrt(d_head), never 1/sqrt(d_model);
//   - the mask is additive (0 keeps a score, -inf removes it) and one mask is
//     shared by every head;
//   - softmax subtracts the row max first, so large scores cannot overflow;
//   - a row whose scores are all -inf (a query that may see no key) gives an
//     all-zero weight row and an all-zero output row, never NaN.
// Bad arguments throw std::invalid_argument naming the offending values.
//
// Lesson: docs/02_batched_attention.md.
#ifndef MHA_LABS_02_BATCHED_ATTENTION_ATTENTION_H_
#define MHA_LABS_02_BATCHED_ATTENTION_ATTENTION_H_

#include <optional>

#include "common/tensor.h"

namespace mha {

struct AttentionResult {
  Tensor3 output;   // (n_heads, T, d_head)
  Tensor3 weights;  // (n_heads, T, S), each row sums to 1 (or is all zero, see above)
};

// Row-wise, numerically stable softmax of a (rows, cols) matrix. A row that
// is entirely -inf becomes a row of zeros.
Tensor2 softmax_rows(const Tensor2& scores);

// q: (H, T, d_head); k, v: (H, S, d_head); mask: (T, S) additive or none.
// The loop version visits one head at a time; the batched version does the
// whole (H, T, S) contraction at once. Both give the same numbers.
// Throws std::invalid_argument on mismatched shapes (head counts, d_head,
// key/value lengths, mask shape).
AttentionResult attention_loop(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                               const std::optional<Tensor2>& mask = std::nullopt);
AttentionResult attention_batched(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                  const std::optional<Tensor2>& mask = std::nullopt);

}  // namespace mha

#endif  // MHA_LABS_02_BATCHED_ATTENTION_ATTENTION_H_
