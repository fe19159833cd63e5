// Lab 4, my version: fill the masks with explicit comparisons.
#include "labs/04_causal_mask/causal_mask.h"

#include <limits>
#include <stdexcept>
#include <string>

namespace mha {
namespace {

const float kMinusInf = -std::numeric_limits<float>::infinity();

std::string dims(const Tensor2& m) {
  return "(" + std::to_string(m.shape(0)) + ", " + std::to_string(m.shape(1)) + ")";
}

void positive(const char* fn, const char* name, int value) {
  if (value <= 0) {
    throw std::invalid_argument(std::string(fn) + ": " + name + "=" + std::to_string(value) +
                                " must be positive");
  }
}

}  // namespace

Tensor2 causal_mask(int T, int S) {
  positive("causal_mask", "T", T);
  positive("causal_mask", "S", S);
  if (S < T) {
    throw std::invalid_argument("causal_mask: S=" + std::to_string(S) + " keys is fewer than T=" +
                                std::to_string(T) + " queries");
  }
  const int past = S - T;
  Tensor2 m = xt::zeros<float>({static_cast<std::size_t>(T), static_cast<std::size_t>(S)});
  for (int q = 0; q < T; ++q) {
    for (int k = 0; k < S; ++k) {
      if (k > past + q) m(q, k) = kMinusInf;
    }
  }
  return m;
}

Tensor2 causal_mask(int T) {
  positive("causal_mask", "T", T);
  return causal_mask(T, T);
}

Tensor2 padding_mask(int T, const std::vector<bool>& key_valid) {
  positive("padding_mask", "T", T);
  if (key_valid.empty()) {
    throw std::invalid_argument("padding_mask: key_valid is empty (S=0)");
  }
  const int S = static_cast<int>(key_valid.size());
  Tensor2 m = xt::zeros<float>({static_cast<std::size_t>(T), key_valid.size()});
  for (int q = 0; q < T; ++q) {
    for (int k = 0; k < S; ++k) {
      if (!key_valid[k]) m(q, k) = kMinusInf;
    }
  }
  return m;
}

Tensor2 combine_masks(const Tensor2& a, const Tensor2& b) {
  if (a.shape() != b.shape()) {
    throw std::invalid_argument("combine_masks: a has shape " + dims(a) + " but b has shape " +
                                dims(b));
  }
  return a + b;
}

}  // namespace mha
