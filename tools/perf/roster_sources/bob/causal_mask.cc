// masks (lab 4)
#include "labs/04_causal_mask/causal_mask.h"

#include <limits>
#include <stdexcept>
#include <string>

namespace mha {
namespace {

void must_be_positive(const char* where, const char* what, int n) {
  if (n <= 0) {
    throw std::invalid_argument(std::string(where) + ": " + what + "=" + std::to_string(n) +
                                " must be positive");
  }
}

std::string shape_of(const Tensor2& t) {
  return "(" + std::to_string(t.shape(0)) + ", " + std::to_string(t.shape(1)) + ")";
}

const float NEG_INF = -std::numeric_limits<float>::infinity();

}  // namespace

Tensor2 combine_masks(const Tensor2& a, const Tensor2& b) {
  if (a.shape() != b.shape()) {
    throw std::invalid_argument("combine_masks: a has shape " + shape_of(a) + " but b has shape " +
                                shape_of(b));
  }
  return a + b;
}

Tensor2 causal_mask(int T) {
  must_be_positive("causal_mask", "T", T);
  return causal_mask(T, T);
}

Tensor2 causal_mask(int T, int S) {
  must_be_positive("causal_mask", "T", T);
  must_be_positive("causal_mask", "S", S);
  if (S < T) {
    throw std::invalid_argument("causal_mask: S=" + std::to_string(S) + " keys is fewer than T=" +
                                std::to_string(T) + " queries");
  }
  const int shift = S - T;
  Tensor2 out = xt::zeros<float>({static_cast<std::size_t>(T), static_cast<std::size_t>(S)});
  for (int row = 0; row < T; ++row) {
    for (int col = 0; col < S; ++col) {
      if (col > shift + row) out(row, col) = NEG_INF;
    }
  }
  return out;
}

Tensor2 padding_mask(int T, const std::vector<bool>& key_valid) {
  must_be_positive("padding_mask", "T", T);
  if (key_valid.empty()) {
    throw std::invalid_argument("padding_mask: key_valid is empty (S=0)");
  }
  const int n_keys = static_cast<int>(key_valid.size());
  Tensor2 out = xt::zeros<float>({static_cast<std::size_t>(T), key_valid.size()});
  for (int row = 0; row < T; ++row) {
    for (int col = 0; col < n_keys; ++col) {
      if (!key_valid[col]) out(row, col) = NEG_INF;
    }
  }
  return out;
}

}  // namespace mha
