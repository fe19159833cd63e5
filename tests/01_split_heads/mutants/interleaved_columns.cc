// mutant: heads take interleaved columns h, h+H, ... (reshape to (T, d_head, H)); combine_heads is its consistent inverse
// Lab 1: split and combine heads. This is the file you edit.
// Read docs/01_split_heads.md first; the header labs/01_split_heads/split_heads.h says what each function must do.
// Check your work with:  bazel test //labs/01_split_heads/...
#include "labs/01_split_heads/split_heads.h"

#include <stdexcept>
#include <string>

#include <xtensor/xmanipulation.hpp>

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  const std::size_t T = x.shape(0);
  const std::size_t d_model = x.shape(1);
  // Check n_heads before dividing by it: n_heads=0 would crash the modulo.
  if (n_heads <= 0) {
    throw std::invalid_argument("split_heads: n_heads=" + std::to_string(n_heads) +
                                " must be positive");
  }
  const std::size_t H = static_cast<std::size_t>(n_heads);
  if (d_model % H != 0) {
    throw std::invalid_argument("split_heads: d_model=" + std::to_string(d_model) +
                                " is not divisible by n_heads=" + std::to_string(n_heads));
  }
  const std::size_t d_head = d_model / H;

  // Head h takes every H-th column, starting at column h.
  auto per_token = xt::reshape_view(x, {T, d_head, H});  // (T, d_head, H)
  Tensor3 heads = xt::transpose(per_token, {2, 0, 1});   // (H, T, d_head)
  return heads;
}

Tensor2 combine_heads(const Tensor3& heads) {
  const std::size_t H = heads.shape(0);
  const std::size_t T = heads.shape(1);
  const std::size_t d_head = heads.shape(2);
  if (H == 0 || d_head == 0) {
    throw std::invalid_argument("combine_heads: heads has shape (" + std::to_string(H) + ", " +
                                std::to_string(T) + ", " + std::to_string(d_head) +
                                "); n_heads=" + std::to_string(H) +
                                " and d_head=" + std::to_string(d_head) + " must both be positive");
  }
  // Undo split_heads' two passes in reverse order.
  // pass 1: tokens first again; evaluated into a container so that its memory
  // really is (T, H, d_head) in row-major order.
  Tensor3 per_token = xt::transpose(heads, {1, 2, 0});  // (T, d_head, H)
  // pass 2: glue each token's H slices side by side: [head 0 | head 1 | ...].
  Tensor2 x = xt::reshape_view(per_token, {T, H * d_head});  // (T, d_model)
  return x;
}

}  // namespace mha
