// Lab 10 reference solution: the backward pass of attention and of the layer.
//
// Backpropagation runs the forward's steps in reverse, and each step turns
// the gradient of its output into the gradients of its inputs:
//
//   forward                               backward
//   S = q k^T * scale (+ mask)            dq = dS k * scale,  dk = dS^T q * scale
//   P = softmax_rows(S)                   dS = P * (dP - rowsum(P * dP))
//   o = P v                               dP = do v^T,        dv = P^T do
//
// (scale = 1/sqrt(d_head); `*` between matrices of one shape is elementwise.)
// A step needs some of the forward's intermediate results: here only P. We
// recompute it, since the API keeps no state between calls.
//
// Shapes are written as in lab 2: q (H, T, d_head), k and v (H, S, d_head),
// P and its gradients (H, T, S).
#include "labs/10_attention_backward/attention_backward.h"

#include <cmath>
#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <xtensor-blas/xblas.hpp>
#include <xtensor/xview.hpp>

#include "labs/01_split_heads/split_heads.h"

namespace mha {
namespace {

// "(2, 4, 3)", as NumPy prints shapes.
template <class Shape>
std::string shape_string(const Shape& shape) {
  std::ostringstream out;
  out << "(";
  for (std::size_t d = 0; d < shape.size(); ++d) out << (d ? ", " : "") << shape[d];
  out << ")";
  return out.str();
}

// Lab 2 checks q, k, v and the mask when the forward is recomputed; the one
// new argument is d_output, the gradient of the output, so it has the
// output's shape: q's, (H, T, d_head).
void check_d_output(const Tensor3& q, const Tensor3& d_output) {
  if (d_output.shape() != q.shape()) {
    throw std::invalid_argument("attention_backward: d_output has shape " +
                                shape_string(d_output.shape()) + ", expected " +
                                shape_string(q.shape()) + " (the output's shape, q's)");
  }
}

// out[h] = alpha * op(a[h]) @ op(b[h]) for every head h, where op transposes
// when asked: one BLAS GEMM per head slice, read in place (as lab 2's
// batched_matmul; the backward needs the transposed forms too). Transposes
// are never built: BLAS reads the slice column by column instead.
// out must already have its shape.
void batched_matmul(const Tensor3& a, const Tensor3& b, Tensor3& out, bool transpose_a,
                    bool transpose_b, float alpha = 1.0f) {
  for (std::size_t h = 0; h < a.shape(0); ++h) {
    auto out_h = xt::view(out, h, xt::all(), xt::all());
    xt::blas::gemm(xt::view(a, h, xt::all(), xt::all()), xt::view(b, h, xt::all(), xt::all()),
                   out_h, transpose_a, transpose_b, alpha);
  }
}

// op(a) @ op(b) for two matrices, into a new (rows, cols) result; with
// accumulate, adds the product to `out` instead (out += op(a) @ op(b)).
void matmul_into(const Tensor2& a, const Tensor2& b, Tensor2& out, bool transpose_a,
                 bool transpose_b, bool accumulate = false) {
  xt::blas::gemm(a, b, out, transpose_a, transpose_b, 1.0f, accumulate ? 1.0f : 0.0f);
}

Tensor2 matmul(const Tensor2& a, const Tensor2& b, bool transpose_a, bool transpose_b) {
  const std::size_t rows = transpose_a ? a.shape(1) : a.shape(0);
  const std::size_t cols = transpose_b ? b.shape(0) : b.shape(1);
  Tensor2 out = Tensor2::from_shape({rows, cols});
  matmul_into(a, b, out, transpose_a, transpose_b);
  return out;
}

// The softmax backward, in place: dP becomes dS, row by row.
//
// One row p = softmax(s) has the Jacobian J = dp/ds = diag(p) - p p^T, an
// (S, S) matrix. J is symmetric, so the gradient of s is
//
//   ds = J dp = p * dp - p (p . dp) = p * (dp - (p . dp))
//
// one dot product and one elementwise pass: O(S), not the O(S^2) of J.
// The scalar p . dp is the row-sum term: every weight competes with every
// other (they sum to 1), so raising one score takes weight away from all the
// others, and that is what the subtraction accounts for.
//
// A masked key has p_j = 0, so ds_j = 0: no gradient reaches a score the mask
// removed. A query that sees no key has p = 0 everywhere: its whole row is 0.
void softmax_backward_inplace(const float* p, float* dp, std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* p_row = p + r * cols;  // (cols,)
    float* g_row = dp + r * cols;       // (cols,): dP on entry, dS on exit
    // pass 1: the row-sum term p . dp.
    float p_dot_dp = 0.0f;
    for (std::size_t j = 0; j < cols; ++j) p_dot_dp += p_row[j] * g_row[j];
    // pass 2: ds_j = p_j (dp_j - p . dp).
    for (std::size_t j = 0; j < cols; ++j) g_row[j] = p_row[j] * (g_row[j] - p_dot_dp);
  }
}

// The backward of attention given what the forward computed: the weights P
// (H, T, S). attention_backward recomputes P with lab 2; mha_backward already
// has it from its own forward and so skips a second softmax.
AttentionGrads backward_from_weights(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                     const Tensor3& weights, const Tensor3& d_output) {
  const std::size_t H = q.shape(0), T = q.shape(1), S = k.shape(1), d_head = q.shape(2);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_head));

  AttentionGrads grads;
  // step 1, o = P v: each value row j reaches output row i with weight
  // P[i, j], so dv = P^T do. Rows of P that are all zero add nothing.
  grads.dv = Tensor3::from_shape({H, S, d_head});  // (H, S, d_head)
  batched_matmul(weights, d_output, grads.dv, /*transpose_a=*/true, /*transpose_b=*/false);

  // step 2, o = P v again, now for P: dP[i, j] = do_i . v_j.
  Tensor3 dP = Tensor3::from_shape({H, T, S});  // (H, T, S)
  batched_matmul(d_output, v, dP, /*transpose_a=*/false, /*transpose_b=*/true);

  // step 3, P = softmax_rows(S): the Jacobian-vector product, H*T rows of S
  // keys each, one after another in memory. dP becomes dS (the gradient of
  // the scaled, masked scores). The mask added a constant: it passes dS
  // through unchanged and has no gradient of its own.
  Tensor3 dS = std::move(dP);  // (H, T, S)
  softmax_backward_inplace(weights.data(), dS.data(), H * T, S);

  // step 4, S = q k^T * scale: the scale multiplies both gradients, exactly
  // as it multiplied the scores, and the GEMM's alpha applies it.
  grads.dq = Tensor3::from_shape({H, T, d_head});  // (H, T, d_head)
  batched_matmul(dS, k, grads.dq, /*transpose_a=*/false, /*transpose_b=*/false, scale);
  grads.dk = Tensor3::from_shape({H, S, d_head});  // (H, S, d_head)
  batched_matmul(dS, q, grads.dk, /*transpose_a=*/true, /*transpose_b=*/false, scale);
  return grads;
}

}  // namespace

AttentionGrads attention_backward(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                  const std::optional<Tensor2>& mask, const Tensor3& d_output) {
  check_d_output(q, d_output);
  // Recompute the forward (lab 2): it checks q, k, v and the mask, and gives
  // P with the mask applied, which is all the backward needs from it.
  const AttentionResult forward = attention_batched(q, k, v, mask);  // weights (H, T, S)
  return backward_from_weights(q, k, v, forward.weights, d_output);
}

MhaGrads mha_backward(const MultiHeadAttention& layer, const Tensor2& x,
                      const std::optional<Tensor2>& mask, const Tensor2& d_y) {
  const std::size_t T = x.shape(0), d_model = static_cast<std::size_t>(layer.d_model);
  if (x.shape(1) != d_model) {
    throw std::invalid_argument("mha_backward: x has shape " + shape_string(x.shape()) +
                                ", expected (T, d_model=" + std::to_string(d_model) + ")");
  }
  if (d_y.shape() != x.shape()) {
    throw std::invalid_argument("mha_backward: d_y has shape " + shape_string(d_y.shape()) +
                                ", expected " + shape_string(x.shape()) +
                                " (the output's shape, x's)");
  }
  if (mask && (mask->shape(0) != T || mask->shape(1) != T)) {
    throw std::invalid_argument("mha_backward: mask has shape " + shape_string(mask->shape()) +
                                ", expected (" + std::to_string(T) + ", " + std::to_string(T) +
                                ")");
  }

  // The forward again (lab 3's steps), keeping what the backward needs:
  // x, the per-head q, k, v, the weights P and the concatenated heads.
  const Tensor2 Q = matmul(x, layer.W_Q, false, false);  // (T, d_model)
  const Tensor2 K = matmul(x, layer.W_K, false, false);  // (T, d_model)
  const Tensor2 V = matmul(x, layer.W_V, false, false);  // (T, d_model)
  const Tensor3 q = split_heads(Q, layer.n_heads);       // (H, T, d_head)
  const Tensor3 k = split_heads(K, layer.n_heads);       // (H, T, d_head)
  const Tensor3 v = split_heads(V, layer.n_heads);       // (H, T, d_head)
  const AttentionResult heads = attention_batched(q, k, v, mask);  // P (H, T, T)
  const Tensor2 concat = combine_heads(heads.output);              // (T, d_model)

  MhaGrads grads;
  // y = concat @ W_O. Output column c of y is concat @ W_O[:, c], so
  // dW_O[r, c] = sum_t concat[t, r] d_y[t, c]: dW_O = concat^T d_y, shaped
  // like W_O (in, out). And d_concat = d_y W_O^T.
  grads.dW_O = matmul(concat, d_y, /*transpose_a=*/true, false);  // (d_model, d_model)
  const Tensor2 d_concat = matmul(d_y, layer.W_O, false, /*transpose_b=*/true);  // (T, d_model)

  // combine_heads only moves numbers, so its backward moves the gradient
  // back: split_heads. Then attention's own backward, per head.
  const Tensor3 d_heads = split_heads(d_concat, layer.n_heads);  // (H, T, d_head)
  const AttentionGrads g = backward_from_weights(q, k, v, heads.weights, d_heads);

  // split_heads only moves numbers too: combine_heads moves the gradients back.
  const Tensor2 dQ = combine_heads(g.dq);  // (T, d_model)
  const Tensor2 dK = combine_heads(g.dk);  // (T, d_model)
  const Tensor2 dV = combine_heads(g.dv);  // (T, d_model)

  // Q = x @ W_Q: dW_Q = x^T dQ, and likewise for K and V.
  grads.dW_Q = matmul(x, dQ, /*transpose_a=*/true, false);  // (d_model, d_model)
  grads.dW_K = matmul(x, dK, /*transpose_a=*/true, false);  // (d_model, d_model)
  grads.dW_V = matmul(x, dV, /*transpose_a=*/true, false);  // (d_model, d_model)

  // x feeds three projections, so its gradient is the sum of three paths:
  // dx = dQ W_Q^T + dK W_K^T + dV W_V^T.
  grads.dx = matmul(dQ, layer.W_Q, false, /*transpose_b=*/true);  // (T, d_model)
  matmul_into(dK, layer.W_K, grads.dx, false, /*transpose_b=*/true, /*accumulate=*/true);
  matmul_into(dV, layer.W_V, grads.dx, false, /*transpose_b=*/true, /*accumulate=*/true);
  return grads;
}

}  // namespace mha
