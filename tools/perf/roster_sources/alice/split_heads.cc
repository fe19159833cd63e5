// Lab 1, my version: I copy the numbers one by one with index arithmetic.
#include "labs/01_split_heads/split_heads.h"

#include <stdexcept>
#include <string>

namespace mha {
namespace {

void require(bool ok, const std::string& why) {
  if (!ok) throw std::invalid_argument(why);
}

std::size_t head_width(std::size_t width, int n_heads) {
  require(n_heads > 0, "split_heads: n_heads=" + std::to_string(n_heads) + " must be positive");
  const std::size_t n = static_cast<std::size_t>(n_heads);
  require(width % n == 0, "split_heads: d_model=" + std::to_string(width) +
                              " is not divisible by n_heads=" + std::to_string(n_heads));
  return width / n;
}

}  // namespace

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  const std::size_t tokens = x.shape(0);
  const std::size_t width = x.shape(1);
  const std::size_t dh = head_width(width, n_heads);
  const std::size_t nh = static_cast<std::size_t>(n_heads);
  Tensor3 out = xt::zeros<float>({nh, tokens, dh});
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t h = 0; h < nh; ++h) {
      for (std::size_t c = 0; c < dh; ++c) {
        out(h, t, c) = x(t, h * dh + c);
      }
    }
  }
  return out;
}

Tensor2 combine_heads(const Tensor3& heads) {
  const std::size_t nh = heads.shape(0);
  const std::size_t tokens = heads.shape(1);
  const std::size_t dh = heads.shape(2);
  require(nh > 0 && dh > 0, "combine_heads: n_heads=" + std::to_string(nh) +
                                " and d_head=" + std::to_string(dh) + " must both be positive");
  Tensor2 out = xt::zeros<float>({tokens, nh * dh});
  for (std::size_t h = 0; h < nh; ++h) {
    for (std::size_t t = 0; t < tokens; ++t) {
      for (std::size_t c = 0; c < dh; ++c) {
        out(t, h * dh + c) = heads(h, t, c);
      }
    }
  }
  return out;
}

}  // namespace mha
