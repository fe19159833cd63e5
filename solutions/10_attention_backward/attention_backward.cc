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
// A step needs some of the forward's results: here P and o. We recompute
// them, since the API keeps no state between calls.
//
// Every product above is one matrix product per head, done by BLAS. Both
// functions run the same per-head kernel, backward_one_head; they differ in
// where a head's matrices live (see MatrixRef).
#include "labs/10_attention_backward/attention_backward.h"

#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/core/matrix_ref.h"
#include "common/core/shape_string.h"
#include "common/core/vector_math.h"

namespace mha {
namespace {

// A head's matrices are MatrixRefs (common/core/matrix_ref.h): one head of an
// (H, T, d_head) tensor is contiguous; one head of a (T, d_model) matrix such
// as Q = x @ W_Q is the column block [h*d_head, (h+1)*d_head) of every row.
// BLAS (gemm) reads and writes both in place, so nothing is split or
// combined by copying: that is all split_heads and combine_heads were doing.

// The softmax backward, in place: dP becomes dS, row by row.
//
// One row p = softmax(s) has the Jacobian J = dp/ds = diag(p) - p p^T, an
// (S, S) matrix. J is symmetric, so the gradient of s is
//
//   ds = J dp = p * dp - p (p . dp) = p * (dp - (p . dp))
//
// one elementwise pass once the scalar p . dp is known: O(S), not the
// O(S^2) of J. p . dp is the row-sum term: the weights sum to 1, so raising
// one score takes weight from all the others, and the subtraction accounts
// for that. It is also do . o (p . dp = sum_j p_j (do . v_j) = do . sum_j
// p_j v_j), which costs d_head multiplications instead of S: row_sums holds
// do_i . o_i for each row i.
//
// A masked key has p_j = 0, so ds_j = 0: no gradient reaches a score the
// mask removed. A query that sees no key has p = 0 (and o = 0): its row is 0.
void softmax_backward_inplace(const MatrixRef& p, const MatrixRef& dp,
                              const std::vector<float>& row_sums) {
  for (int i = 0; i < p.rows; ++i) {
    const float* p_row = p.data + static_cast<std::size_t>(i) * p.stride;  // (S,)
    float* g_row = dp.data + static_cast<std::size_t>(i) * dp.stride;       // dP in, dS out
    const float row_sum = row_sums[i];
    for (int j = 0; j < p.cols; ++j) g_row[j] = p_row[j] * (g_row[j] - row_sum);
  }
}

// do_i . o_i for each row i (see softmax_backward_inplace).
std::vector<float> row_dots(const MatrixRef& d_o, const MatrixRef& o) {
  std::vector<float> out(o.rows);
  for (int i = 0; i < o.rows; ++i) {
    const float* a = d_o.data + static_cast<std::size_t>(i) * d_o.stride;
    const float* b = o.data + static_cast<std::size_t>(i) * o.stride;
    float s = 0.0f;
    for (int c = 0; c < o.cols; ++c) s += a[c] * b[c];
    out[i] = s;
  }
  return out;
}

// The backward of one head, given its forward results P (T, S) and o
// (T, d_head) and the upstream gradient d_o (T, d_head). Writes dq (T,
// d_head), dk and dv (S, d_head). `scratch` is a (T, S) buffer.
void backward_one_head(const MatrixRef& q, const MatrixRef& k, const MatrixRef& v,
                       const MatrixRef& p, const MatrixRef& o, const MatrixRef& d_o, float scale,
                       const MatrixRef& scratch, const MatrixRef& dq, const MatrixRef& dk,
                       const MatrixRef& dv) {
  // step 1, o = P v: value row j reached output row i with weight P[i, j],
  // so dv = P^T do. Rows of P that are all zero add nothing.
  gemm(p, /*transpose_a=*/true, d_o, false, dv);
  // step 2, o = P v again, now for P: dP[i, j] = do_i . v_j.
  const MatrixRef& dS = scratch;  // (T, S): dP now, dS after step 3
  gemm(d_o, false, v, /*transpose_b=*/true, dS);
  // step 3, P = softmax_rows(S): the Jacobian-vector product, row by row.
  // The mask added a constant to S: it passes dS through unchanged and has
  // no gradient of its own (masked entries are already 0, since P is).
  softmax_backward_inplace(p, dS, row_dots(d_o, o));
  // step 4, S = q k^T * scale: the scale multiplies both gradients, exactly
  // as it multiplied the scores; BLAS's alpha applies it.
  gemm(dS, false, k, false, dq, scale);
  gemm(dS, /*transpose_a=*/true, q, false, dk, scale);
}

// Lab 2's attention for one head, keeping P: p = softmax(q k^T * scale +
// mask), o = p v. The same steps and conventions as lab 2's attention_batched
// (a query that sees no key gets zero rows), written on MatrixRefs so that
// mha_backward can run it on the column blocks of Q, K and V in place.
void forward_one_head(const MatrixRef& q, const MatrixRef& k, const MatrixRef& v,
                      const std::optional<Tensor2>& mask, float scale, const MatrixRef& p,
                      const MatrixRef& o) {
  gemm(q, false, k, /*transpose_b=*/true, p, scale);  // scores (T, S)
  for (int i = 0; i < p.rows; ++i) {
    float* row = p.data + static_cast<std::size_t>(i) * p.stride;  // (S,)
    if (mask) add_inplace(row, mask->data() + static_cast<std::size_t>(i) * p.cols, p.cols);
    float row_max = max_of(row, p.cols);
    if (row_max <= std::numeric_limits<float>::lowest()) row_max = 0.0f;  // sees no key
    const float row_sum = exp_shifted_sum(row, row_max, row, p.cols);  // exponentials and their sum
    scale_inplace(row, row_sum > 0.0f ? 1.0f / row_sum : 0.0f, p.cols);
  }
  gemm(p, false, v, false, o);  // (T, d_head)
}

}  // namespace

AttentionGrads attention_backward(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                  const std::optional<Tensor2>& mask, const Tensor3& d_output) {
  // d_output is the gradient of the output, so it has the output's shape: q's.
  if (d_output.shape() != q.shape()) {
    throw std::invalid_argument("attention_backward: d_output has shape " +
                                shape_string(d_output.shape()) + ", expected " +
                                shape_string(q.shape()) + " (the output's shape, q's)");
  }
  // Recompute the forward (lab 2): it checks q, k, v and the mask, and gives
  // P with the mask applied and o, which is all the backward needs.
  const AttentionResult forward = attention_batched(q, k, v, mask);  // P (H, T, S), o (H, T, d)
  const std::size_t H = q.shape(0), T = q.shape(1), S = k.shape(1), d_head = q.shape(2);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_head));

  AttentionGrads grads{Tensor3::from_shape({H, T, d_head}), Tensor3::from_shape({H, S, d_head}),
                       Tensor3::from_shape({H, S, d_head})};
  Tensor2 scratch = Tensor2::from_shape({T, S});  // dP, then dS, of one head
  for (std::size_t h = 0; h < H; ++h) {
    backward_one_head(head_of(q, h), head_of(k, h), head_of(v, h), head_of(forward.weights, h),
                      head_of(forward.output, h), head_of(d_output, h), scale, whole(scratch),
                      head_of(grads.dq, h), head_of(grads.dk, h), head_of(grads.dv, h));
  }
  return grads;
}

MhaGrads mha_backward(const MultiHeadAttention& layer, const Tensor2& x,
                      const std::optional<Tensor2>& mask, const Tensor2& d_y) {
  const std::size_t T = x.shape(0), d = static_cast<std::size_t>(layer.d_model);
  if (x.shape(1) != d) {
    throw std::invalid_argument("mha_backward: x has shape " + shape_string(x.shape()) +
                                ", expected (T, d_model=" + std::to_string(d) + ")");
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
  const int H = layer.n_heads, d_head = layer.d_head;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_head));

  // pass 1: the forward again (lab 3's steps), keeping what the backward
  // needs: Q, K, V, every head's P, and concat (the heads side by side).
  // Head h of Q is its column block: no split_heads copy.
  Tensor2 Q = Tensor2::from_shape({T, d}), K = Tensor2::from_shape({T, d}),
          V = Tensor2::from_shape({T, d});
  gemm(whole(x), false, whole(layer.W_Q), false, whole(Q));  // (T, d_model)
  gemm(whole(x), false, whole(layer.W_K), false, whole(K));  // (T, d_model)
  gemm(whole(x), false, whole(layer.W_V), false, whole(V));  // (T, d_model)
  Tensor3 P = Tensor3::from_shape({static_cast<std::size_t>(H), T, T});  // (H, T, T)
  Tensor2 concat = Tensor2::from_shape({T, d});                           // (T, d_model)
  for (int h = 0; h < H; ++h) {
    forward_one_head(columns_of(Q, h, d_head), columns_of(K, h, d_head),
                     columns_of(V, h, d_head), mask, scale, head_of(P, h),
                     columns_of(concat, h, d_head));
  }

  MhaGrads grads{Tensor2::from_shape({T, d}), Tensor2::from_shape({d, d}),
                 Tensor2::from_shape({d, d}), Tensor2::from_shape({d, d}),
                 Tensor2::from_shape({d, d})};
  // pass 2, y = concat @ W_O. Output column c of y is concat @ W_O[:, c], so
  // dW_O[r, c] = sum_t concat[t, r] d_y[t, c]: dW_O = concat^T d_y, shaped
  // like W_O (in, out). And d_concat = d_y W_O^T.
  gemm(whole(concat), /*transpose_a=*/true, whole(d_y), false, whole(grads.dW_O));
  Tensor2 d_concat = Tensor2::from_shape({T, d});  // (T, d_model)
  gemm(whole(d_y), false, whole(layer.W_O), /*transpose_b=*/true, whole(d_concat));

  // pass 3: attention's backward, head by head. combine_heads and
  // split_heads only move numbers, so their backwards only move gradients
  // back: head h's d_o is its column block of d_concat, and its dq, dk, dv
  // land in the same column blocks of dQ, dK, dV.
  Tensor2 dQ = Tensor2::from_shape({T, d}), dK = Tensor2::from_shape({T, d}),
          dV = Tensor2::from_shape({T, d});
  Tensor2 scratch = Tensor2::from_shape({T, T});
  for (int h = 0; h < H; ++h) {
    backward_one_head(columns_of(Q, h, d_head), columns_of(K, h, d_head),
                      columns_of(V, h, d_head), head_of(P, h), columns_of(concat, h, d_head),
                      columns_of(d_concat, h, d_head), scale, whole(scratch),
                      columns_of(dQ, h, d_head), columns_of(dK, h, d_head),
                      columns_of(dV, h, d_head));
  }

  // pass 4, Q = x @ W_Q: dW_Q = x^T dQ, and likewise for K and V.
  gemm(whole(x), /*transpose_a=*/true, whole(dQ), false, whole(grads.dW_Q));
  gemm(whole(x), /*transpose_a=*/true, whole(dK), false, whole(grads.dW_K));
  gemm(whole(x), /*transpose_a=*/true, whole(dV), false, whole(grads.dW_V));
  // x feeds three projections, so its gradient is the sum of three paths:
  // dx = dQ W_Q^T + dK W_K^T + dV W_V^T (beta = 1 adds to what is there).
  gemm(whole(dQ), false, whole(layer.W_Q), /*transpose_b=*/true, whole(grads.dx));
  gemm(whole(dK), false, whole(layer.W_K), /*transpose_b=*/true, whole(grads.dx), 1.0f, 1.0f);
  gemm(whole(dV), false, whole(layer.W_V), /*transpose_b=*/true, whole(grads.dx), 1.0f, 1.0f);
  return grads;
}

}  // namespace mha
