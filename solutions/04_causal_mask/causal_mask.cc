// Lab 4 reference solution: causal and padding masks.
//
// Every mask here is additive and (T, S): queries down the rows, keys across
// the columns. 0 keeps a score; -inf removes it, because exp(-inf - max) is
// exactly 0, so a removed key gets exactly zero weight whatever its score.
#include "labs/04_causal_mask/causal_mask.h"

#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>

#include "common/core/shape_string.h"

namespace mha {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

}  // namespace

Tensor2 causal_mask(int T) {
  if (T <= 0) {
    throw std::invalid_argument("causal_mask: T=" + std::to_string(T) + " must be positive");
  }
  // Without a cache the queries and the keys are the same T positions.
  return causal_mask(T, T);
}

Tensor2 causal_mask(int T, int S) {
  if (T <= 0 || S <= 0) {
    throw std::invalid_argument("causal_mask: T=" + std::to_string(T) + " and S=" +
                                std::to_string(S) + " must both be positive");
  }
  if (S < T) {
    throw std::invalid_argument("causal_mask: S=" + std::to_string(S) +
                                " keys is fewer than T=" + std::to_string(T) +
                                " queries; the queries must be the last T of S positions");
  }
  const std::size_t rows = static_cast<std::size_t>(T);
  const std::size_t cols = static_cast<std::size_t>(S);
  // The S - T cached positions come first, so the new queries sit in the
  // bottom-right corner: query i is absolute position S - T + i. Aligning to
  // the top-left (j <= i) would hide most of the cache from the new tokens.
  const std::size_t offset = cols - rows;
  Tensor2 mask = xt::zeros<float>({rows, cols});  // (T, S)
  for (std::size_t i = 0; i < rows; ++i) {
    // Keys j <= offset + i are the past and the present (the diagonal is
    // kept: a token may attend to itself); keys after that are the future.
    for (std::size_t j = offset + i + 1; j < cols; ++j) mask(i, j) = kNegInf;
  }
  return mask;
}

Tensor2 padding_mask(int T, const std::vector<bool>& key_valid) {
  if (T <= 0) {
    throw std::invalid_argument("padding_mask: T=" + std::to_string(T) + " must be positive");
  }
  if (key_valid.empty()) {
    throw std::invalid_argument(
        "padding_mask: key_valid is empty (S=0); it needs one entry per key");
  }
  const std::size_t rows = static_cast<std::size_t>(T);
  const std::size_t cols = key_valid.size();
  Tensor2 mask = xt::zeros<float>({rows, cols});  // (T, S)
  // Padding is a property of a KEY: a padded position has no content for
  // anybody to read, so its whole column is removed, for every query.
  for (std::size_t j = 0; j < cols; ++j) {
    if (key_valid[j]) continue;
    for (std::size_t i = 0; i < rows; ++i) mask(i, j) = kNegInf;
  }
  return mask;
}

Tensor2 combine_masks(const Tensor2& a, const Tensor2& b) {
  if (a.shape() != b.shape()) {
    throw std::invalid_argument("combine_masks: a has shape " + shape_string(a) +
                                " but b has shape " + shape_string(b) +
                                "; masks must have the same shape");
  }
  // Additive masks compose by addition: -inf + anything finite is -inf, so a
  // key removed by either mask stays removed; 0 + 0 keeps it.
  Tensor2 sum = a + b;  // (T, S)
  return sum;
}

}  // namespace mha
