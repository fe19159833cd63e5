// Lab 1: one strided view per head.
#include "labs/01_split_heads/split_heads.h"

#include <stdexcept>
#include <string>

#include <xtensor/xview.hpp>

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  if (n_heads < 1) {
    throw std::invalid_argument("split_heads: n_heads=" + std::to_string(n_heads) +
                                " must be positive");
  }
  const auto H = static_cast<std::size_t>(n_heads);
  if (x.shape(1) % H) {
    throw std::invalid_argument("split_heads: d_model=" + std::to_string(x.shape(1)) +
                                " is not divisible by n_heads=" + std::to_string(n_heads));
  }
  const auto d = x.shape(1) / H;
  Tensor3 y({H, x.shape(0), d});
  for (std::size_t h = 0; h < H; ++h) {
    // head h is the column block [h*d, (h+1)*d) of every row
    xt::view(y, h, xt::all(), xt::all()) = xt::view(x, xt::all(), xt::range(h * d, (h + 1) * d));
  }
  return y;
}

Tensor2 combine_heads(const Tensor3& heads) {
  const auto H = heads.shape(0);
  const auto d = heads.shape(2);
  if (!H || !d) {
    throw std::invalid_argument("combine_heads: got n_heads=" + std::to_string(H) +
                                ", d_head=" + std::to_string(d) + "; both must be positive");
  }
  Tensor2 y({heads.shape(1), H * d});
  for (std::size_t h = 0; h < H; ++h) {
    xt::view(y, xt::all(), xt::range(h * d, (h + 1) * d)) = xt::view(heads, h, xt::all(), xt::all());
  }
  return y;
}

}  // namespace mha
