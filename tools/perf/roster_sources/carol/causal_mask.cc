// Lab 4 with xtensor expressions instead of loops.
#include "labs/04_causal_mask/causal_mask.h"

#include <limits>
#include <stdexcept>
#include <string>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xoperation.hpp>
#include <xtensor/xview.hpp>

namespace mha {

Tensor2 causal_mask(int T) { return causal_mask(T, T); }

Tensor2 causal_mask(int T, int S) {
  if (T < 1 || S < 1 || S < T) {
    throw std::invalid_argument("causal_mask: T=" + std::to_string(T) + ", S=" +
                                std::to_string(S) + " (both must be positive and S >= T)");
  }
  // key j is visible to query i when j - i <= S - T
  const auto rows = xt::view(xt::arange<int>(T), xt::all(), xt::newaxis());
  const auto cols = xt::view(xt::arange<int>(S), xt::newaxis(), xt::all());
  const float inf = std::numeric_limits<float>::infinity();
  Tensor2 mask = xt::where(cols - rows > S - T, -inf, 0.0f);
  return mask;
}

Tensor2 padding_mask(int T, const std::vector<bool>& key_valid) {
  if (T < 1 || key_valid.empty()) {
    throw std::invalid_argument("padding_mask: T=" + std::to_string(T) + ", S=" +
                                std::to_string(key_valid.size()) + " (both must be positive)");
  }
  Tensor2 mask = xt::zeros<float>({static_cast<std::size_t>(T), key_valid.size()});
  for (std::size_t j = 0; j < key_valid.size(); ++j) {
    if (!key_valid[j]) xt::view(mask, xt::all(), j) = -std::numeric_limits<float>::infinity();
  }
  return mask;
}

Tensor2 combine_masks(const Tensor2& a, const Tensor2& b) {
  if (a.shape() != b.shape()) {
    throw std::invalid_argument("combine_masks: shapes (" + std::to_string(a.shape(0)) + ", " +
                                std::to_string(a.shape(1)) + ") and (" +
                                std::to_string(b.shape(0)) + ", " + std::to_string(b.shape(1)) +
                                ") differ");
  }
  return a + b;
}

}  // namespace mha
