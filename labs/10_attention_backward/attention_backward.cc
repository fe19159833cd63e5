// Lab 10: the backward pass. This is the file you edit.
// Read docs/10_attention_backward.md first; the header labs/10_attention_backward/attention_backward.h says what each function must do.
// Check your work with:  bazel test //labs/10_attention_backward/...
#include "labs/10_attention_backward/attention_backward.h"

#include <stdexcept>

// You may call your own earlier labs:
// #include <xtensor-blas/xlinalg.hpp>           // xt::linalg::dot, the matrix product
// #include <xtensor/xmanipulation.hpp>          // xt::transpose
// #include "labs/01_split_heads/split_heads.h"  // split_heads, combine_heads
// (lab 2's attention_batched and lab 3's MultiHeadAttention come with the header above.)

namespace mha {

AttentionGrads attention_backward(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                  const std::optional<Tensor2>& mask, const Tensor3& d_output) {
  // TODO, per head h (or all heads at once):
  // 1. check d_output has q's shape; recompute P = attention_batched(q, k, v, mask).weights
  //    (with the mask: masked keys must get P = 0);
  // 2. dv = P^T @ d_output                                  (S, d_head)
  // 3. dP = d_output @ v^T                                  (T, S)
  // 4. dS = P * (dP - rowsum(P * dP)), row by row           (T, S)
  // 5. dq = dS @ k / sqrt(d_head), dk = dS^T @ q / sqrt(d_head).
  throw std::logic_error(
      "lab 10: attention_backward is not implemented yet, see docs/10_attention_backward.md");
}

MhaGrads mha_backward(const MultiHeadAttention& layer, const Tensor2& x,
                      const std::optional<Tensor2>& mask, const Tensor2& d_y) {
  // TODO:
  // 1. check x is (T, d_model), d_y is x's shape and the mask (T, T);
  // 2. redo the forward: Q, K, V = x @ W_Q|W_K|W_V, split them into heads,
  //    attend, concat = combine_heads(output);
  // 3. dW_O = concat^T @ d_y, d_concat = d_y @ W_O^T;
  // 4. dq, dk, dv = attention_backward(q, k, v, mask, split_heads(d_concat)),
  //    then combine_heads each back to (T, d_model);
  // 5. dW_Q = x^T @ dQ (likewise K, V); dx = dQ @ W_Q^T + dK @ W_K^T + dV @ W_V^T.
  throw std::logic_error(
      "lab 10: mha_backward is not implemented yet, see docs/10_attention_backward.md");
}

}  // namespace mha
