// MatrixRef and gemm: matrix products by BLAS on matrices that live inside
// other tensors, with no copy.
//
// A MatrixRef is a rows x cols matrix in someone else's memory: row r starts
// at data + r * stride. One head of an (H, T, d_head) tensor is contiguous
// (stride d_head); one head of a (T, n_heads*d_head) matrix such as
// Q = x @ W_Q is the column block [h*d_head, (h+1)*d_head) of every row
// (stride n_heads*d_head). BLAS reads and writes both in place, so a head is
// never split out or combined back by copying.
//
//   Tensor2 Q = ...;                                  // (T, n_heads*d_head)
//   Tensor3 P = Tensor3::from_shape({H, T, T});       // (H, T, T)
//   gemm(columns_of(Q, h, d_head), false,             // q_h (T, d_head)
//        columns_of(K, h, d_head), /*transpose_b=*/true,
//        head_of(P, h), scale);                       // P[h] = q_h k_h^T * scale
//
// The reference solutions of labs 10 and 12 run their backward passes on it;
// your lab file may use it too: #include "common/core/matrix_ref.h" (the libraries
// of labs 10 and 12 list //common/core:matrix_ref in their deps). It is generic
// matrix-product support: nothing here is a lab's answer. It includes
// OpenBLAS's <cblas.h>, so do not include <xtensor-blas/xlinalg.hpp> in the
// same file (both declare cblas_sgemm: dozens of errors).
#ifndef MHA_COMMON_MATRIX_REF_H_
#define MHA_COMMON_MATRIX_REF_H_

#include <cblas.h>

#include <cstddef>
#include <stdexcept>
#include <string>

#include "common/tensor.h"

namespace mha {

// rows x cols floats, row r at data + r * stride (stride >= cols).
struct MatrixRef {
  float* data;
  int rows, cols, stride;
};

// Every view and product below checks its extents and throws
// std::invalid_argument rather than hand BLAS a pointer it would read or
// write past: BLAS trusts its sizes, and a product of mismatched matrices
// would otherwise touch whatever memory lies beyond them.
// The message is built only when a check fails: gemm runs thousands of times
// a training step, on matrices as small as 24 x 16, where formatting a
// string on every call cost more than the product.
namespace matrix_ref_internal {
template <class Message>
void Require(bool ok, const Message& what) {
  if (!ok) throw std::invalid_argument("gemm: " + what());
}
inline std::string Dims(int r, int c) {
  return "(" + std::to_string(r) + ", " + std::to_string(c) + ")";
}
}  // namespace matrix_ref_internal

// The whole of a (rows, cols) matrix.
inline MatrixRef whole(const Tensor2& m) {
  return {const_cast<float*>(m.data()), static_cast<int>(m.shape(0)),
          static_cast<int>(m.shape(1)), static_cast<int>(m.shape(1))};
}

// Head h of an (H, rows, cols) tensor: the contiguous (rows, cols) block h.
inline MatrixRef head_of(const Tensor3& t, std::size_t h) {
  matrix_ref_internal::Require(h < t.shape(0), [&] {
    return "head " + std::to_string(h) + " of a tensor of " + std::to_string(t.shape(0)) +
           " heads";
  });
  const int rows = static_cast<int>(t.shape(1)), cols = static_cast<int>(t.shape(2));
  return {const_cast<float*>(t.data()) + h * t.shape(1) * t.shape(2), rows, cols, cols};
}

// Head h of a (rows, n*d_head) matrix: its columns [h*d_head, (h+1)*d_head).
inline MatrixRef columns_of(const Tensor2& m, int h, int d_head) {
  matrix_ref_internal::Require(
      h >= 0 && d_head >= 0 &&
          static_cast<std::size_t>(h + 1) * static_cast<std::size_t>(d_head) <= m.shape(1),
      [&] {
        return "columns [" + std::to_string(static_cast<long long>(h) * d_head) + ", " +
               std::to_string(static_cast<long long>(h + 1) * d_head) + ") of a matrix of " +
               std::to_string(m.shape(1)) + " columns";
      });
  return {const_cast<float*>(m.data()) + h * d_head, static_cast<int>(m.shape(0)), d_head,
          static_cast<int>(m.shape(1))};
}

// c = alpha * op(a) @ op(b) + beta * c, op transposing on request (BLAS
// reads the transpose in place; it is never built). The shapes must agree:
// op(a) is (c.rows, inner), op(b) is (inner, c.cols); otherwise
// std::invalid_argument names them. beta = 1 adds the product to what c holds.
inline void gemm(const MatrixRef& a, bool transpose_a, const MatrixRef& b, bool transpose_b,
                 const MatrixRef& c, float alpha = 1.0f, float beta = 0.0f) {
  using matrix_ref_internal::Dims;
  const int a_rows = transpose_a ? a.cols : a.rows, inner = transpose_a ? a.rows : a.cols;
  const int b_rows = transpose_b ? b.cols : b.rows, b_cols = transpose_b ? b.rows : b.cols;
  for (const MatrixRef* m : {&a, &b, &c}) {
    matrix_ref_internal::Require(m->rows >= 0 && m->cols >= 0 && m->stride >= m->cols, [&] {
      return "a view of " + Dims(m->rows, m->cols) + " with row stride " +
             std::to_string(m->stride);
    });
  }
  matrix_ref_internal::Require(a_rows == c.rows && b_rows == inner && b_cols == c.cols, [&] {
    return "op(a) is " + Dims(a_rows, inner) + " and op(b) is " + Dims(b_rows, b_cols) +
           ", expected (" + std::to_string(c.rows) + ", k) and (k, " + std::to_string(c.cols) +
           ") for c " + Dims(c.rows, c.cols);
  });
  if (c.rows == 0 || c.cols == 0) return;  // nothing to compute
  if (inner == 0) {                         // an empty product: c = beta * c
    for (int r = 0; r < c.rows; ++r) {
      for (int j = 0; j < c.cols; ++j) {
        float& x = c.data[static_cast<std::size_t>(r) * c.stride + j];
        x = beta == 0.0f ? 0.0f : beta * x;
      }
    }
    return;
  }
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
              transpose_b ? CblasTrans : CblasNoTrans, c.rows, c.cols, inner, alpha, a.data,
              a.stride, b.data, b.stride, beta, c.data, c.stride);
}

}  // namespace mha

#endif  // MHA_COMMON_MATRIX_REF_H_
