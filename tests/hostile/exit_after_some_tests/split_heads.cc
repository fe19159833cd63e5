// hostile: split_heads is right; combine_heads ends the process with status
// 0 in the middle of a test (Bazel 4.2 reports such a test as PASSED).
#include "labs/01_split_heads/split_heads.h"

#include <cstdlib>
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

Tensor2 combine_heads(const Tensor3& heads) { std::exit(0); }

}  // namespace mha
