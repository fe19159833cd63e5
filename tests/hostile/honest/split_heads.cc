// Honest lab 1 definitions that hostile cases take by name ("honest" in their
// expect.json): what a learner who did the lab would have written. Not the
// reference solution, whose distinctive lines must never reach a report.
#include "labs/01_split_heads/split_heads.h"

#include <stdexcept>
#include <string>

#include <xtensor/xmanipulation.hpp>

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  const std::size_t T = x.shape(0), d_model = x.shape(1);
  if (n_heads <= 0) {
    throw std::invalid_argument("split_heads: n_heads=" + std::to_string(n_heads) + " must be positive");
  }
  const std::size_t H = static_cast<std::size_t>(n_heads);
  if (d_model % H != 0) {
    throw std::invalid_argument("split_heads: d_model=" + std::to_string(d_model) +
                                " is not divisible by n_heads=" + std::to_string(n_heads));
  }
  Tensor3 heads = xt::transpose(xt::reshape_view(x, {T, H, d_model / H}), {1, 0, 2});
  return heads;
}

Tensor2 combine_heads(const Tensor3& heads) {
  if (heads.shape(0) == 0 || heads.shape(2) == 0) {
    throw std::invalid_argument("combine_heads: n_heads=" + std::to_string(heads.shape(0)) +
                                ", d_head=" + std::to_string(heads.shape(2)));
  }
  const std::size_t H = heads.shape(0), T = heads.shape(1), d = heads.shape(2);
  Tensor3 per_token = xt::transpose(heads, {1, 0, 2});
  Tensor2 x = xt::reshape_view(per_token, {T, H * d});
  return x;
}

}  // namespace mha
