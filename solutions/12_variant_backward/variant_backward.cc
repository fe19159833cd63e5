// Lab 12 reference solution: the backward pass of grouped-query and latent
// attention.
//
// Both layers are lab 3's layer with K and V made differently, so both
// backwards are lab 10's with a different last step:
//
//   GQA: query head h reads kv head h / group (repeat_kv). The forward copies
//        a kv head into `group` places; the backward adds the gradients of
//        those copies back into the one head (the adjoint of a copy is a sum).
//   MLA: K = c W_UK and V = c W_UV with c = x W_DKV. The latent c feeds both,
//        so dc = dK W_UK^T + dV W_UV^T, and x feeds Q and c, so dx has two
//        paths: dQ W_Q^T + dc W_DKV^T.
//
// The shared middle (recompute each head's P, then walk attention backwards)
// runs on column blocks of Q, K, V in place with BLAS (common/core/matrix_ref.h),
// as lab 10's solution does: a head of a (T, n*d_head) matrix is its column
// block, so split_heads, combine_heads and repeat_kv never copy anything here.
#include "labs/12_variant_backward/variant_backward.h"

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

Tensor2 zeros(std::size_t rows, std::size_t cols) { return Tensor2(xt::zeros<float>({rows, cols})); }

// One head of lab 2's attention, keeping P: p = softmax(q k^T * scale + mask),
// o = p v. A query that sees no key gets zero rows of p and o.
void forward_one_head(const MatrixRef& q, const MatrixRef& k, const MatrixRef& v,
                      const std::optional<Tensor2>& mask, float scale, const MatrixRef& p,
                      const MatrixRef& o) {
  gemm(q, false, k, /*transpose_b=*/true, p, scale);  // scores (T, S)
  for (int i = 0; i < p.rows; ++i) {
    float* row = p.data + static_cast<std::size_t>(i) * p.stride;  // (S,)
    if (mask) add_inplace(row, mask->data() + static_cast<std::size_t>(i) * p.cols, p.cols);
    float row_max = max_of(row, p.cols);
    if (row_max <= std::numeric_limits<float>::lowest()) row_max = 0.0f;  // sees no key
    const float row_sum = exp_shifted_sum(row, row_max, row, p.cols);
    scale_inplace(row, row_sum > 0.0f ? 1.0f / row_sum : 0.0f, p.cols);
  }
  gemm(p, false, v, false, o);  // (T, d_head)
}

// One head of lab 10's attention backward, given P (T, S), o (T, d_head) and
// d_o (T, d_head). Writes dq (T, d_head), dk and dv (S, d_head) of this
// query head; `scratch` is a (T, S) buffer.
void backward_one_head(const MatrixRef& q, const MatrixRef& k, const MatrixRef& v,
                       const MatrixRef& p, const MatrixRef& o, const MatrixRef& d_o, float scale,
                       const MatrixRef& scratch, const MatrixRef& dq, const MatrixRef& dk,
                       const MatrixRef& dv) {
  gemm(p, /*transpose_a=*/true, d_o, false, dv);     // o = P v: dv = P^T do
  const MatrixRef& dS = scratch;                       // (T, S): dP, then dS
  gemm(d_o, false, v, /*transpose_b=*/true, dS);     // dP = do v^T
  // Softmax backward, row by row: dS = P * (dP - rowsum(P * dP)); the row
  // sum equals do_i . o_i, d_head products instead of S.
  for (int i = 0; i < p.rows; ++i) {
    const float* p_row = p.data + static_cast<std::size_t>(i) * p.stride;
    float* g_row = dS.data + static_cast<std::size_t>(i) * dS.stride;
    const float* a = d_o.data + static_cast<std::size_t>(i) * d_o.stride;
    const float* b = o.data + static_cast<std::size_t>(i) * o.stride;
    float row_sum = 0.0f;
    for (int c = 0; c < o.cols; ++c) row_sum += a[c] * b[c];
    for (int j = 0; j < p.cols; ++j) g_row[j] = p_row[j] * (g_row[j] - row_sum);
  }
  // S = q k^T * scale: the scale multiplies both gradients (BLAS's alpha).
  gemm(dS, false, k, false, dq, scale);
  gemm(dS, /*transpose_a=*/true, q, false, dk, scale);
}

// What the attention part of the backward returns: the gradients of Q
// (T, n_heads*d_head) and of the kv heads K, V (T, n_kv_heads*d_head),
// already summed over the query heads of each group, and dW_O.
struct AttentionPartGrads {
  Tensor2 dQ, dK, dV, dW_O;
};

// The adjoint of repeat_kv, on (T, n*d_head) column blocks: rep holds one
// gradient per query head (the repeated layout); kv head g gets the sum of
// the query heads g*group ... g*group + group - 1 that read it.
void sum_over_group(const Tensor2& rep, int n_heads, int n_kv_heads, int d_head, Tensor2& kv) {
  const int group = n_heads / n_kv_heads;
  const std::size_t T = rep.shape(0);
  for (std::size_t t = 0; t < T; ++t) {
    const float* from = rep.data() + t * rep.shape(1);  // (n_heads*d_head,)
    float* to = kv.data() + t * kv.shape(1);            // (n_kv_heads*d_head,)
    for (int h = 0; h < n_heads; ++h) {
      const int g = h / group;  // the kv head query head h reads
      add_inplace(to + g * d_head, from + h * d_head, static_cast<std::size_t>(d_head));
    }
  }
}

// Passes 1-3 of both backwards. Q (T, n_heads*d_head); K, V (T,
// n_kv_heads*d_head); W_O (n_heads*d_head, d_model); d_y (T, d_model).
AttentionPartGrads attention_part_backward(const Tensor2& Q, const Tensor2& K, const Tensor2& V,
                                           const Tensor2& W_O, int n_heads, int n_kv_heads,
                                           int d_head, const std::optional<Tensor2>& mask,
                                           const Tensor2& d_y) {
  const std::size_t T = Q.shape(0), d = Q.shape(1), d_kv = K.shape(1);
  const int group = n_heads / n_kv_heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_head));

  // pass 1: the forward again, keeping each head's P and concat. Query head
  // h reads kv head h / group: repeat_kv, without copying.
  Tensor3 P = Tensor3::from_shape({static_cast<std::size_t>(n_heads), T, T});  // (H, T, T)
  Tensor2 concat = Tensor2::from_shape({T, d});                                // (T, d_model)
  for (int h = 0; h < n_heads; ++h) {
    forward_one_head(columns_of(Q, h, d_head), columns_of(K, h / group, d_head),
                     columns_of(V, h / group, d_head), mask, scale, head_of(P, h),
                     columns_of(concat, h, d_head));
  }

  AttentionPartGrads g{Tensor2::from_shape({T, d}), zeros(T, d_kv), zeros(T, d_kv),
                       Tensor2::from_shape({d, W_O.shape(1)})};
  // pass 2, y = concat W_O: dW_O = concat^T d_y, d_concat = d_y W_O^T.
  gemm(whole(concat), /*transpose_a=*/true, whole(d_y), false, whole(g.dW_O));
  Tensor2 d_concat = Tensor2::from_shape({T, d});  // (T, d_model)
  gemm(whole(d_y), false, whole(W_O), /*transpose_b=*/true, whole(d_concat));

  // pass 3: lab 10's backward per query head. Its dk, dv are the gradients
  // of that head's copy of its kv head: one column block per query head of
  // dK_rep, dV_rep (T, n_heads*d_head), the layout repeat_kv produced.
  const bool shared = group > 1;
  Tensor2 dK_rep = shared ? Tensor2::from_shape({T, d}) : Tensor2();
  Tensor2 dV_rep = shared ? Tensor2::from_shape({T, d}) : Tensor2();
  Tensor2& dk_to = shared ? dK_rep : g.dK;  // without sharing, straight into dK
  Tensor2& dv_to = shared ? dV_rep : g.dV;
  Tensor2 scratch = Tensor2::from_shape({T, T});
  for (int h = 0; h < n_heads; ++h) {
    backward_one_head(columns_of(Q, h, d_head), columns_of(K, h / group, d_head),
                      columns_of(V, h / group, d_head), head_of(P, h),
                      columns_of(concat, h, d_head), columns_of(d_concat, h, d_head), scale,
                      whole(scratch), columns_of(g.dQ, h, d_head), columns_of(dk_to, h, d_head),
                      columns_of(dv_to, h, d_head));
  }
  // pass 4: repeat_kv's adjoint. Each kv head was copied to `group` query
  // heads; the gradients of the copies add up in the one head.
  if (shared) {
    sum_over_group(dK_rep, n_heads, n_kv_heads, d_head, g.dK);
    sum_over_group(dV_rep, n_heads, n_kv_heads, d_head, g.dV);
  }
  return g;
}

// The checks both functions share: x (T, d_model), d_y shaped like x, mask (T, T).
void check_arguments(const char* fn, int d_model, const Tensor2& x,
                     const std::optional<Tensor2>& mask, const Tensor2& d_y) {
  const std::size_t T = x.shape(0), d = static_cast<std::size_t>(d_model);
  if (x.shape(1) != d) {
    throw std::invalid_argument(std::string(fn) + ": x has shape " + shape_string(x.shape()) +
                                ", expected (T, d_model=" + std::to_string(d) + ")");
  }
  if (d_y.shape() != x.shape()) {
    throw std::invalid_argument(std::string(fn) + ": d_y has shape " + shape_string(d_y.shape()) +
                                ", expected " + shape_string(x.shape()) +
                                " (the output's shape, x's)");
  }
  if (mask && (mask->shape(0) != T || mask->shape(1) != T)) {
    throw std::invalid_argument(std::string(fn) + ": mask has shape " +
                                shape_string(mask->shape()) + ", expected (" + std::to_string(T) +
                                ", " + std::to_string(T) + ")");
  }
}

}  // namespace

GqaGrads gqa_backward(const GroupedQueryAttention& layer, const Tensor2& x,
                      const std::optional<Tensor2>& mask, const Tensor2& d_y) {
  check_arguments("gqa_backward", layer.d_model, x, mask, d_y);
  const std::size_t T = x.shape(0), d = static_cast<std::size_t>(layer.d_model);
  const std::size_t d_kv = static_cast<std::size_t>(layer.n_kv_heads * layer.d_head);

  // Q = x W_Q (T, d_model); K = x W_K, V = x W_V (T, n_kv_heads*d_head).
  Tensor2 Q = Tensor2::from_shape({T, d}), K = Tensor2::from_shape({T, d_kv}),
          V = Tensor2::from_shape({T, d_kv});
  gemm(whole(x), false, whole(layer.W_Q), false, whole(Q));
  gemm(whole(x), false, whole(layer.W_K), false, whole(K));
  gemm(whole(x), false, whole(layer.W_V), false, whole(V));

  AttentionPartGrads a = attention_part_backward(Q, K, V, layer.W_O, layer.n_heads,
                                                 layer.n_kv_heads, layer.d_head, mask, d_y);

  GqaGrads grads{Tensor2::from_shape({T, d}), Tensor2::from_shape({d, d}),
                 Tensor2::from_shape({d, d_kv}), Tensor2::from_shape({d, d_kv}),
                 std::move(a.dW_O)};
  // pass 5, the projections: dW = x^T dProjection, and x feeds all three.
  gemm(whole(x), /*transpose_a=*/true, whole(a.dQ), false, whole(grads.dW_Q));
  gemm(whole(x), /*transpose_a=*/true, whole(a.dK), false, whole(grads.dW_K));
  gemm(whole(x), /*transpose_a=*/true, whole(a.dV), false, whole(grads.dW_V));
  gemm(whole(a.dQ), false, whole(layer.W_Q), /*transpose_b=*/true, whole(grads.dx));
  gemm(whole(a.dK), false, whole(layer.W_K), /*transpose_b=*/true, whole(grads.dx), 1.0f, 1.0f);
  gemm(whole(a.dV), false, whole(layer.W_V), /*transpose_b=*/true, whole(grads.dx), 1.0f, 1.0f);
  return grads;
}

MlaGrads mla_backward(const MultiHeadLatentAttention& layer, const Tensor2& x,
                      const std::optional<Tensor2>& mask, const Tensor2& d_y) {
  check_arguments("mla_backward", layer.d_model, x, mask, d_y);
  const std::size_t T = x.shape(0), d = static_cast<std::size_t>(layer.d_model);
  const std::size_t r = static_cast<std::size_t>(layer.kv_rank);

  // c = x W_DKV (T, kv_rank); K = c W_UK, V = c W_UV (T, d_model); Q = x W_Q.
  // The naive form: K and V are materialised (the backward needs dK and dV).
  Tensor2 c = Tensor2::from_shape({T, r});
  gemm(whole(x), false, whole(layer.W_DKV), false, whole(c));
  Tensor2 Q = Tensor2::from_shape({T, d}), K = Tensor2::from_shape({T, d}),
          V = Tensor2::from_shape({T, d});
  gemm(whole(x), false, whole(layer.W_Q), false, whole(Q));
  gemm(whole(c), false, whole(layer.W_UK), false, whole(K));
  gemm(whole(c), false, whole(layer.W_UV), false, whole(V));

  // Every query head has its own K and V head: n_kv_heads = n_heads.
  AttentionPartGrads a = attention_part_backward(Q, K, V, layer.W_O, layer.n_heads,
                                                 layer.n_heads, layer.d_head, mask, d_y);

  MlaGrads grads{Tensor2::from_shape({T, d}), Tensor2::from_shape({d, d}),
                 Tensor2::from_shape({d, r}), Tensor2::from_shape({r, d}),
                 Tensor2::from_shape({r, d}), std::move(a.dW_O)};
  // pass 5, the up-projections: dW_UK = c^T dK, dW_UV = c^T dV.
  gemm(whole(c), /*transpose_a=*/true, whole(a.dK), false, whole(grads.dW_UK));
  gemm(whole(c), /*transpose_a=*/true, whole(a.dV), false, whole(grads.dW_UV));
  // pass 6, the latent: c feeds K and V, so its gradient has both paths.
  Tensor2 dc = Tensor2::from_shape({T, r});  // (T, kv_rank)
  gemm(whole(a.dK), false, whole(layer.W_UK), /*transpose_b=*/true, whole(dc));
  gemm(whole(a.dV), false, whole(layer.W_UV), /*transpose_b=*/true, whole(dc), 1.0f, 1.0f);
  // pass 7, the input side: dW_Q = x^T dQ, dW_DKV = x^T dc, and x feeds the
  // queries and the latent: dx = dQ W_Q^T + dc W_DKV^T.
  gemm(whole(x), /*transpose_a=*/true, whole(a.dQ), false, whole(grads.dW_Q));
  gemm(whole(x), /*transpose_a=*/true, whole(dc), false, whole(grads.dW_DKV));
  gemm(whole(a.dQ), false, whole(layer.W_Q), /*transpose_b=*/true, whole(grads.dx));
  gemm(whole(dc), false, whole(layer.W_DKV), /*transpose_b=*/true, whole(grads.dx), 1.0f, 1.0f);
  return grads;
}

}  // namespace mha
