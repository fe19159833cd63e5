// Lab 10: the backward pass of attention and of the whole layer.
//
// attention_backward: for output = attention_batched(q, k, v, mask).output
// (lab 2) and an upstream gradient d_output = dL/d(output), return
// dL/dq, dL/dk and dL/dv, where L = sum(output * d_output). Per head h:
//
//   P  = softmax_rows(q k^T / sqrt(d_head) + mask)      (T, S)  recomputed
//   dv = P^T d_output                                    (S, d_head)
//   dP = d_output v^T                                    (T, S)
//   dS = P * (dP - rowsum(P * dP))                       (T, S)  softmax backward
//   dq = dS k / sqrt(d_head)                             (T, d_head)
//   dk = dS^T q / sqrt(d_head)                           (S, d_head)
//
// The softmax backward is a Jacobian-vector product: it never forms the
// (S, S) Jacobian of a row. The mask is a constant and gets no gradient, but
// it must be applied when P is recomputed: masked entries have P = 0 and so
// pass no gradient. A query that sees no key (an all -inf mask row) has an
// all-zero row of P; its row of dq is zero and it adds nothing to dk or dv.
//
// mha_backward: for y = layer.forward(x, mask) (lab 3) and d_y = dL/dy,
// L = sum(y * d_y), the gradient with respect to the input and each weight:
//
//   dW_O = concat^T d_y,  d_concat = d_y W_O^T            concat = combine_heads(o)
//   dq, dk, dv = attention_backward(q, k, v, mask, split_heads(d_concat))
//   dW_Q = x^T combine_heads(dq)      (likewise dW_K, dW_V)
//   dx = dQ W_Q^T + dK W_K^T + dV W_V^T   (x feeds all three projections)
//
// Both functions read everything they need from their arguments (the layer's
// public weights on every call) and keep no state.
//
// Shapes: q (H, T, d_head); k, v (H, S, d_head); mask (T, S); d_output
// (H, T, d_head). x and d_y (T, d_model); mask (T, T) in mha_backward.
// Bad arguments (the shape mismatches above, d_output not shaped like q,
// d_y not shaped like x, x whose width is not layer.d_model) throw
// std::invalid_argument naming the offending shapes.
//
// Lesson: docs/10_attention_backward.md.
#ifndef MHA_LABS_10_ATTENTION_BACKWARD_ATTENTION_BACKWARD_H_
#define MHA_LABS_10_ATTENTION_BACKWARD_ATTENTION_BACKWARD_H_

#include <optional>

#include "common/tensor.h"
#include "labs/02_batched_attention/attention.h"
#include "labs/03_output_projection/multi_head_attention.h"

namespace mha {

struct AttentionGrads {
  Tensor3 dq;  // (H, T, d_head)
  Tensor3 dk;  // (H, S, d_head)
  Tensor3 dv;  // (H, S, d_head)
};

// Gradients of sum(output * d_output) for output = attention_batched(q, k, v, mask).output;
// d_output: (H, T, d_head). A fully masked row contributes nothing.
AttentionGrads attention_backward(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                  const std::optional<Tensor2>& mask, const Tensor3& d_output);

struct MhaGrads {
  Tensor2 dx;                      // (T, d_model)
  Tensor2 dW_Q, dW_K, dW_V, dW_O;  // (d_model, d_model) each
};

// Gradients of sum(y * d_y) for y = layer.forward(x, mask); d_y: (T, d_model).
MhaGrads mha_backward(const MultiHeadAttention& layer, const Tensor2& x,
                      const std::optional<Tensor2>& mask, const Tensor2& d_y);

}  // namespace mha

#endif  // MHA_LABS_10_ATTENTION_BACKWARD_ATTENTION_BACKWARD_H_
