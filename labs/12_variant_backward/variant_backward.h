// Lab 12: the backward pass of grouped-query and latent attention.
//
// gqa_backward: for y = layer.forward(x, mask) (lab 5) and an upstream
// gradient d_y = dL/dy, L = sum(y * d_y), the gradient with respect to the
// input and each weight. The forward is lab 3's with one change: query head h
// reads kv head h / (n_heads / n_kv_heads) (repeat_kv). So the backward is
// lab 10's, with one change at the same place:
//
//   Q = x W_Q (T, d_model);  K = x W_K, V = x W_V (T, n_kv_heads*d_head)
//   k_rep, v_rep = repeat_kv(split_heads(K)), repeat_kv(split_heads(V))   (n_heads, T, d_head)
//   dW_O = concat^T d_y,  d_concat = d_y W_O^T
//   dq, dk_rep, dv_rep = lab 10's attention backward on (q, k_rep, v_rep)
//   dk[g] = sum of dk_rep[h] over the query heads h that read kv head g      (likewise dv)
//   dW_Q = x^T dQ,  dW_K = x^T dK,  dW_V = x^T dV
//   dx = dQ W_Q^T + dK W_K^T + dV W_V^T
//
// The sum is repeat_kv's adjoint: repeat_kv copies one kv head into
// n_heads / n_kv_heads places, so each copy's gradient flows back into the
// same kv head, and gradients that meet add up. n_kv_heads == n_heads gives
// lab 10's mha_backward exactly; n_kv_heads == 1 (multi-query) sums all heads.
//
// mla_backward: for y = layer.forward(x, mask) (lab 6), the same L:
//
//   c = x W_DKV (T, kv_rank);  K = c W_UK, V = c W_UV (T, d_model);  Q = x W_Q
//   dQ, dK, dV, dW_O as in lab 10 (every query head has its own K and V head)
//   dW_UK = c^T dK,  dW_UV = c^T dV
//   dc = dK W_UK^T + dV W_UV^T           (c feeds both K and V: two paths)
//   dW_DKV = x^T dc,  dW_Q = x^T dQ
//   dx = dQ W_Q^T + dc W_DKV^T          (x feeds the queries and the latent)
//
// forward_absorbed computes the same function of the same weights as
// forward (only the order of the products differs), so these are its
// gradients too.
//
// Both functions read the layer's public weights on every call and keep no
// state. Bad arguments (x whose width is not layer.d_model, d_y not shaped
// like x, a mask not (T, T)) throw std::invalid_argument naming the shapes.
//
// Lesson: docs/12_variant_backward.md.
#ifndef MHA_LABS_12_VARIANT_BACKWARD_VARIANT_BACKWARD_H_
#define MHA_LABS_12_VARIANT_BACKWARD_VARIANT_BACKWARD_H_

#include <optional>

#include "common/tensor.h"
#include "labs/05_grouped_query_attention/grouped_query_attention.h"
#include "labs/06_latent_attention/latent_attention.h"

namespace mha {

struct GqaGrads {       // fields in lab 10's MhaGrads order
  Tensor2 dx;           // (T, d_model)
  Tensor2 dW_Q;         // (d_model, d_model)
  Tensor2 dW_K, dW_V;   // (d_model, n_kv_heads * d_head)
  Tensor2 dW_O;         // (d_model, d_model)
};

// Gradients of sum(y * d_y) for y = layer.forward(x, mask) (lab 5); d_y: (T, d_model).
// A kv head serves n_heads / n_kv_heads query heads: its gradient is the sum of theirs.
GqaGrads gqa_backward(const GroupedQueryAttention& layer, const Tensor2& x,
                      const std::optional<Tensor2>& mask, const Tensor2& d_y);

struct MlaGrads {         // fields in the order lab 6 draws the weights
  Tensor2 dx;             // (T, d_model)
  Tensor2 dW_Q;           // (d_model, d_model)
  Tensor2 dW_DKV;         // (d_model, kv_rank)
  Tensor2 dW_UK, dW_UV;   // (kv_rank, d_model)
  Tensor2 dW_O;           // (d_model, d_model)
};

// Gradients of sum(y * d_y) for y = layer.forward(x, mask) (lab 6; forward_absorbed
// computes the same function, so it has the same gradients).
MlaGrads mla_backward(const MultiHeadLatentAttention& layer, const Tensor2& x,
                      const std::optional<Tensor2>& mask, const Tensor2& d_y);

}  // namespace mha

#endif  // MHA_LABS_12_VARIANT_BACKWARD_VARIANT_BACKWARD_H_
