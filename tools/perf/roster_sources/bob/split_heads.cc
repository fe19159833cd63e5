// split/combine heads (lab 1)
#include "labs/01_split_heads/split_heads.h"

#include <stdexcept>
#include <string>

namespace mha {
namespace {

void check(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument(message);
}

std::size_t slice_size(std::size_t d, int h_count) {
  check(h_count > 0, "split_heads: n_heads=" + std::to_string(h_count) + " must be positive");
  const std::size_t k = static_cast<std::size_t>(h_count);
  check(d % k == 0, "split_heads: d_model=" + std::to_string(d) +
                        " is not divisible by n_heads=" + std::to_string(h_count));
  return d / k;
}

}  // namespace

// heads -> tokens
Tensor2 combine_heads(const Tensor3& heads) {
  const std::size_t H = heads.shape(0);
  const std::size_t T = heads.shape(1);
  const std::size_t D = heads.shape(2);
  check(H > 0 && D > 0, "combine_heads: n_heads=" + std::to_string(H) +
                            " and d_head=" + std::to_string(D) + " must both be positive");
  Tensor2 result = xt::zeros<float>({T, H * D});
  for (std::size_t i = 0; i < H; ++i) {
    for (std::size_t j = 0; j < T; ++j) {
      for (std::size_t k = 0; k < D; ++k) {
        result(j, i * D + k) = heads(i, j, k);
      }
    }
  }
  return result;
}

// tokens -> heads
Tensor3 split_heads(const Tensor2& x, int n_heads) {
  const std::size_t T = x.shape(0);
  const std::size_t W = x.shape(1);
  const std::size_t D = slice_size(W, n_heads);
  const std::size_t H = static_cast<std::size_t>(n_heads);
  Tensor3 result = xt::zeros<float>({H, T, D});
  for (std::size_t j = 0; j < T; ++j) {
    for (std::size_t i = 0; i < H; ++i) {
      for (std::size_t k = 0; k < D; ++k) {
        result(i, j, k) = x(j, i * D + k);
      }
    }
  }
  return result;
}

}  // namespace mha
