// Lab 1 reference solution: split and combine heads.
//
// Both functions are pure data movement: a reshape (free, it only reinterprets
// the same row-major memory) and a transpose (which really moves the numbers).
// The transpose is written as a loop over (token, head) pieces: each piece is
// d_head floats side by side in both layouts, so it is copied whole.
// (xt::transpose(xt::reshape_view(x, {T, H, d_head}), {1, 0, 2}), the lesson's
// form, gives the same tensor, but xtensor moves it one float at a time
// through a generic index stepper: the later labs split and combine heads
// thousands of times a training step, and that took a sixth of it.)
#include "labs/01_split_heads/split_heads.h"

#include <algorithm>
#include <stdexcept>
#include <string>

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

  // pass 1: row t of x is [head 0 | head 1 | ... | head H-1], so viewing it as
  // (H, d_head) puts head h's columns [h*d_head, (h+1)*d_head) in row h: as
  // (T, H, d_head), piece (t, h) starts at float (t*H + h) * d_head.
  // pass 2: bring the head axis to the front so that each head is one
  // contiguous (T, d_head) matrix: piece (t, h) goes to row t of head h, at
  // float (h*T + t) * d_head. This is the step people forget: reshaping
  // straight to (H, T, d_head) mixes tokens into heads.
  Tensor3 heads = Tensor3::from_shape({H, T, d_head});  // (H, T, d_head)
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t h = 0; h < H; ++h) {
      const float* piece = x.data() + (t * H + h) * d_head;  // (d_head,): x(t, h*d_head ...)
      std::copy(piece, piece + d_head, heads.data() + (h * T + t) * d_head);
    }
  }
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
  // pass 1: tokens first again: row t of head h becomes piece (t, h) of a
  // (T, H, d_head) layout.
  // pass 2: that layout already is (T, H*d_head) in row-major memory: each
  // token's H slices side by side, [head 0 | head 1 | ...].
  Tensor2 x = Tensor2::from_shape({T, H * d_head});  // (T, d_model)
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t h = 0; h < H; ++h) {
      const float* row = heads.data() + (h * T + t) * d_head;  // (d_head,): heads(h, t, :)
      std::copy(row, row + d_head, x.data() + (t * H + h) * d_head);
    }
  }
  return x;
}

}  // namespace mha
