// Lab 2 reference solution: scaled dot-product attention, one head at a time
// (attention_loop) and all heads at once (attention_batched).
#include "labs/02_batched_attention/attention.h"

#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <xtensor-blas/xblas.hpp>
#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "common/core/shape_string.h"
#include "common/core/vector_math.h"

namespace mha {
namespace {

// Both versions accept exactly the same arguments, so they share one check.
// q (H, T, d_head); k, v (H, S, d_head); mask (T, S).
void check_arguments(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                     const std::optional<Tensor2>& mask) {
  // The message names all three shapes; it is built only when a check fails (this runs on
  // every call, thousands of times a training step in lab 15).
  const auto shapes = [&] {
    return "q has shape " + shape_string(q.shape()) + ", k has shape " + shape_string(k.shape()) +
           ", v has shape " + shape_string(v.shape());
  };
  if (k.shape(0) != q.shape(0) || v.shape(0) != q.shape(0)) {
    throw std::invalid_argument("attention: " + shapes() +
                                "; q, k and v must have the same number of heads H");
  }
  if (k.shape(2) != q.shape(2) || v.shape(2) != q.shape(2)) {
    throw std::invalid_argument("attention: " + shapes() +
                                "; q, k and v must have the same d_head");
  }
  if (v.shape(1) != k.shape(1)) {
    throw std::invalid_argument("attention: " + shapes() +
                                "; k and v must have the same number of keys S");
  }
  if (mask.has_value()) {
    const std::vector<std::size_t> expected = {q.shape(1), k.shape(1)};  // (T, S)
    if (mask->shape(0) != expected[0] || mask->shape(1) != expected[1]) {
      throw std::invalid_argument("attention: mask has shape " + shape_string(mask->shape()) +
                                  ", expected " + shape_string(expected) + " (T queries x S keys)");
    }
  }
}

// Softmax of `rows` rows of `cols` floats stored one after another, in place.
// softmax_rows runs it on a copy of its argument; attention_batched runs it
// on its (H, T, S) scores, which are H*T such rows, without copying them.
// The three passes are loops over one row; max_of, exp_shifted, sum_of and
// scale_inplace (common/core/vector_math.h) run each loop several floats at a time.
void softmax_rows_inplace(float* data, std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    float* row = data + r * cols;  // (cols,)
    // pass 1: row max. exp(s - max) <= 1 can never overflow, and the shift
    // cancels in the ratio, so the result is the same softmax.
    float row_max = max_of(row, cols);
    // A row that is entirely -inf (a query that may see no key) has no finite
    // max, and shifting by -inf gives -inf - (-inf) = NaN. Shift such a row by
    // 0 instead: exp(-inf) = 0 everywhere. (max_of starts from -inf; xt::amax
    // starts from the lowest float and would report -3.4e38. The check below
    // covers both.)
    if (row_max <= std::numeric_limits<float>::lowest()) row_max = 0.0f;
    // pass 2: shifted exponentials, and their sum in the same pass; masked
    // (-inf) entries become exactly 0.
    const float row_sum = exp_shifted_sum(row, row_max, row, cols);
    // pass 3: normalise. The largest entry contributes exp(0) = 1, so a row
    // sum is >= 1 unless the row was all -inf; then it is 0 and the row stays 0.
    scale_inplace(row, row_sum > 0.0f ? 1.0f / row_sum : 0.0f, cols);
  }
}

// out[b] = alpha * a[b] @ b[b] for every b, or alpha * a[b] @ b[b]^T with
// transpose_b: a batched matrix product, what np.matmul and torch.bmm do with
// stacks of matrices. BLAS has no batched GEMM, so this is one GEMM per
// slice. Each slice of a row-major (B, rows, cols) tensor is a contiguous
// (rows, cols) matrix, so BLAS reads it in place: nothing is copied, and the
// transpose is never built (BLAS walks b[b] column by column instead).
// out must already have its shape, (B, rows of a, columns of the product).
void batched_matmul(const Tensor3& a, const Tensor3& b, Tensor3& out, bool transpose_b,
                    float alpha = 1.0f) {
  for (std::size_t i = 0; i < a.shape(0); ++i) {
    auto out_i = xt::view(out, i, xt::all(), xt::all());
    xt::blas::gemm(xt::view(a, i, xt::all(), xt::all()), xt::view(b, i, xt::all(), xt::all()),
                   out_i, /*transpose_A=*/false, transpose_b, alpha);
  }
}

}  // namespace

Tensor2 softmax_rows(const Tensor2& scores) {
  Tensor2 weights = scores;  // (rows, cols)
  softmax_rows_inplace(weights.data(), weights.shape(0), weights.shape(1));
  return weights;
}

AttentionResult attention_loop(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                               const std::optional<Tensor2>& mask) {
  check_arguments(q, k, v, mask);
  const std::size_t H = q.shape(0), T = q.shape(1), S = k.shape(1), d_head = q.shape(2);
  // 1/sqrt(d_head) keeps the scores' spread near 1 whatever the head width;
  // d_head, not d_model: each head only ever sees its own d_head columns.
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_head));

  AttentionResult result;
  result.output = xt::zeros<float>({H, T, d_head});  // (H, T, d_head)
  result.weights = xt::zeros<float>({H, T, S});      // (H, T, S)
  for (std::size_t h = 0; h < H; ++h) {
    // Copies of head h's slices: contiguous (rows, d_head) matrices for BLAS.
    const Tensor2 q_h = xt::view(q, h, xt::all(), xt::all());  // (T, d_head)
    const Tensor2 k_h = xt::view(k, h, xt::all(), xt::all());  // (S, d_head)
    const Tensor2 v_h = xt::view(v, h, xt::all(), xt::all());  // (S, d_head)

    // pass 1: scores[i, j] = q_i . k_j / sqrt(d_head); query i is row i.
    Tensor2 scores = xt::linalg::dot(q_h, xt::transpose(k_h)) * scale;  // (T, S)
    // pass 2: additive mask, the same (T, S) mask for every head.
    if (mask.has_value()) scores += *mask;
    // pass 3: each query's row becomes a distribution over the S keys.
    const Tensor2 weights_h = softmax_rows(scores);  // (T, S)
    // pass 4: each query's output is its weighted average of the values.
    xt::view(result.weights, h, xt::all(), xt::all()) = weights_h;
    xt::view(result.output, h, xt::all(), xt::all()) =
        xt::linalg::dot(weights_h, v_h);  // (T, d_head)
  }
  return result;
}

AttentionResult attention_batched(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                  const std::optional<Tensor2>& mask) {
  check_arguments(q, k, v, mask);
  const std::size_t H = q.shape(0), T = q.shape(1), S = k.shape(1), d_head = q.shape(2);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_head));

  // No per-head code: each pass below is one operation on whole (H, ...)
  // stacks, like np.einsum("htd,hsd->hts", q, k) or torch's q @ k.transpose(-1, -2).
  // The contraction is scores[h, i, j] = sum_c q[h, i, c] * k[h, j, c]: a
  // matrix product per head, so batched_matmul hands each head's slice to
  // BLAS. (Broadcasting q to (H, T, 1, d_head) and k to (H, 1, S, d_head) and
  // summing their product over the last axis computes the same numbers in
  // one xtensor expression, element by element: at T = 256 it is about 70
  // times slower than BLAS. docs/PERFORMANCE.md has the numbers.)

  // pass 1: all scores at once, scaled by 1/sqrt(d_head) inside the GEMM.
  Tensor3 scores = Tensor3::from_shape({H, T, S});  // (H, T, S)
  batched_matmul(q, k, scores, /*transpose_b=*/true, scale);
  // pass 2: the same (T, S) mask is added to every head's scores. NumPy
  // writes this `scores += mask`: the mask broadcasts over the head axis
  // (shapes align from the right), and xtensor accepts the same line. But
  // xtensor's broadcast walks the (H, T, S) indices one element at a time:
  // at d_model = 64 that was two thirds of the layer's forward. Each head's
  // scores are one contiguous (T, S) block, laid out like the mask, so the
  // same sum is H flat, vectorised adds (common/core/vector_math.h), and the mask
  // is still never copied.
  if (mask.has_value()) {
    for (std::size_t h = 0; h < H; ++h) {
      add_inplace(scores.data() + h * T * S, mask->data(), T * S);  // head h's (T, S) block
    }
  }
  // pass 3: softmax is row-wise and every (head, query) pair is one row: the
  // (H, T, S) scores are H*T rows of S keys, one after another in memory,
  // normalised in one call and in place. They are the weights from here on.
  Tensor3 weights = std::move(scores);  // (H, T, S)
  softmax_rows_inplace(weights.data(), H * T, S);
  // pass 4: output[h, i, :] = sum_j weights[h, i, j] * v[h, j, :].
  Tensor3 output = Tensor3::from_shape({H, T, d_head});  // (H, T, d_head)
  batched_matmul(weights, v, output, /*transpose_b=*/false);

  return AttentionResult{std::move(output), std::move(weights)};
}

}  // namespace mha
