// Lab 1 reference solution: split and combine heads.
#include "labs/01_split_heads/split_heads.h"

#include <stdexcept>
#include <string>

#include <xtensor/xmanipulation.hpp>

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  const std::size_t T = x.shape(0);
  const std::size_t d_model = x.shape(1);
  if (n_heads <= 0) {
    throw std::invalid_argument("split_heads: n_heads=" + std::to_string(n_heads) +
                                " must be positive");
  }
  if (d_model % n_heads != 0) {
    throw std::invalid_argument("split_heads: d_model=" + std::to_string(d_model) +
                                " is not divisible by n_heads=" + std::to_string(n_heads));
  }
  const std::size_t H = static_cast<std::size_t>(n_heads);
  const std::size_t d_head = d_model / H;

  // Row t of x is [head 0 | head 1 | ... ]: viewing it as (H, d_head) puts
  // head h's columns in row h. reshape is free (same row-major memory).
  auto per_token = xt::reshape_view(x, {T, H, d_head});  // (T, H, d_head)
  // The head axis must come first so each head is one contiguous (T, d_head)
  // matrix; transposing (T, H, d) -> (H, T, d) is the step people forget.
  Tensor3 heads = xt::transpose(per_token, {1, 0, 2});   // (H, T, d_head)
  return heads;
}

Tensor2 combine_heads(const Tensor3& heads) {
  const std::size_t H = heads.shape(0);
  const std::size_t T = heads.shape(1);
  const std::size_t d_head = heads.shape(2);
  if (H == 0 || d_head == 0) {
    throw std::invalid_argument("combine_heads: heads has shape (" + std::to_string(H) +
                                ", " + std::to_string(T) + ", " + std::to_string(d_head) +
                                "); expected at least one head with d_head > 0");
  }
  // Undo the two steps of split_heads in reverse order.
  Tensor3 per_token = xt::transpose(heads, {1, 0, 2});     // (T, H, d_head)
  Tensor2 x = xt::reshape_view(per_token, {T, H * d_head});  // (T, d_model)
  return x;
}

}  // namespace mha
