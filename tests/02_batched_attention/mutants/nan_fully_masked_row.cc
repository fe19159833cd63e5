// mutant: the row max starts at -inf and an all -inf row is not special-cased: -inf - (-inf) = NaN fills the row
// Lab 2: batched attention. This is the file you edit.
// Read docs/02_batched_attention.md first; the header labs/02_batched_attention/attention.h says what each function must do.
// Check your work with:  bazel test //labs/02_batched_attention/...
#include "labs/02_batched_attention/attention.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xreducer.hpp>
#include <xtensor/xsort.hpp>
#include <xtensor/xview.hpp>

namespace mha {
namespace {

// "(2, 4, 3)": shapes in error messages are written like NumPy prints them.
template <class Shape>
std::string shape_string(const Shape& shape) {
  std::ostringstream out;
  out << "(";
  for (std::size_t d = 0; d < shape.size(); ++d) out << (d ? ", " : "") << shape[d];
  out << ")";
  return out.str();
}

// Both versions accept exactly the same arguments, so they share one check.
// q (H, T, d_head); k, v (H, S, d_head); mask (T, S).
void check_arguments(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                     const std::optional<Tensor2>& mask) {
  const std::string shapes = "q has shape " + shape_string(q.shape()) + ", k has shape " +
                             shape_string(k.shape()) + ", v has shape " + shape_string(v.shape());
  if (k.shape(0) != q.shape(0) || v.shape(0) != q.shape(0)) {
    throw std::invalid_argument("attention: " + shapes +
                                "; q, k and v must have the same number of heads H");
  }
  if (k.shape(2) != q.shape(2) || v.shape(2) != q.shape(2)) {
    throw std::invalid_argument("attention: " + shapes + "; q, k and v must have the same d_head");
  }
  if (v.shape(1) != k.shape(1)) {
    throw std::invalid_argument("attention: " + shapes +
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

}  // namespace

Tensor2 softmax_rows(const Tensor2& scores) {
  const std::size_t rows = scores.shape(0);
  // pass 1: row max. exp(s - max) <= 1 can never overflow, and the shift
  // cancels in the ratio, so the result is the same softmax.
  Tensor1 row_max = xt::zeros<float>({rows});  // (rows,)
  for (std::size_t r = 0; r < rows; ++r) {
    float m = -std::numeric_limits<float>::infinity();
    for (std::size_t c = 0; c < scores.shape(1); ++c) m = std::max(m, scores(r, c));
    row_max(r) = m;
  }
  // pass 2: shifted exponentials; masked (-inf) entries become exactly 0.
  Tensor2 e = xt::exp(scores - xt::view(row_max, xt::all(), xt::newaxis()));  // (rows, cols)
  // pass 3: normalise. The largest entry contributes exp(0) = 1, so a row
  // sum is >= 1 unless the row was all -inf; then it is 0 and the row stays 0.
  Tensor1 row_sum = xt::sum(e, {1});                                     // (rows,)
  Tensor1 divisor = xt::where(xt::equal(row_sum, 0.0f), 1.0f, row_sum);  // (rows,)
  Tensor2 weights = e / xt::view(divisor, xt::all(), xt::newaxis());     // (rows, cols)
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

  // No loop over heads: every step below is one tensor expression over all H
  // heads, like np.einsum("htd,hsd->hts", q, k) or torch's batched q @ k^T.
  // xtensor-blas 0.20 has no batched GEMM (and xt::linalg::tensordot would
  // also pair head h's queries with every other head's keys), so the batch
  // contraction is written as broadcast-multiply-then-sum: a size-1 axis
  // (xt::newaxis) lines the T queries up against the S keys, the product is
  // (H, T, S, d_head) lazily, and xt::sum over d_head contracts it without
  // ever storing that 4-d tensor. A GPU would run the same shape as one bmm.
  // On a CPU this is several times slower than the loop's BLAS calls (xtensor
  // reduces element by element); what it shows is the form, not the speed.

  // pass 1: all scores at once, scores[h, i, j] = q[h, i, :] . k[h, j, :].
  auto q_4d = xt::view(q, xt::all(), xt::all(), xt::newaxis(), xt::all());  // (H, T, 1, d_head)
  auto k_4d = xt::view(k, xt::all(), xt::newaxis(), xt::all(), xt::all());  // (H, 1, S, d_head)
  Tensor3 scores = xt::sum(q_4d * k_4d, {3}) * scale;                       // (H, T, S)
  // pass 2: the (T, S) mask broadcasts over the head axis (shapes align from
  // the right), so one mask serves every head without being copied.
  if (mask.has_value()) scores += *mask;
  // pass 3: softmax is row-wise and every (head, query) pair is one row, so
  // view the scores as H*T rows of S keys and normalise them in one call.
  const Tensor2 rows = xt::reshape_view(scores, {H * T, S});          // (H*T, S)
  Tensor3 weights = xt::reshape_view(softmax_rows(rows), {H, T, S});  // (H, T, S)
  // pass 4: output[h, i, :] = sum_j weights[h, i, j] * v[h, j, :],
  // the same broadcast trick contracting over the key axis.
  auto w_4d = xt::view(weights, xt::all(), xt::all(), xt::all(), xt::newaxis());  // (H, T, S, 1)
  auto v_4d = xt::view(v, xt::all(), xt::newaxis(), xt::all(), xt::all());  // (H, 1, S, d_head)
  Tensor3 output = xt::sum(w_4d * v_4d, {2});                               // (H, T, d_head)

  return AttentionResult{std::move(output), std::move(weights)};
}

}  // namespace mha
