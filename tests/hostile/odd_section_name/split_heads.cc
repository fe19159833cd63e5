// hostile to the grader itself: a correct lab whose object has a section and
// a symbol whose names are not valid UTF-8 and hold terminal escapes. An
// older object check crashed decoding them and zeroed every lab as "grader
// error". It must earn exactly what the code earns.
#include "labs/01_split_heads/split_heads.h"

#include <stdexcept>
#include <string>

#include <xtensor/xmanipulation.hpp>

__attribute__((section(".data.\xff\x1b[31m"), used)) static int odd_section = 1;
extern "C" __attribute__((used)) int odd_symbol_name_\u00e9(void) { return odd_section; }

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  if (n_heads <= 0 || x.shape(1) % static_cast<std::size_t>(n_heads) != 0) {
    throw std::invalid_argument("split_heads: d_model=" + std::to_string(x.shape(1)) +
                                " is not divisible by n_heads=" + std::to_string(n_heads));
  }
  const std::size_t T = x.shape(0), H = static_cast<std::size_t>(n_heads);
  Tensor3 heads = xt::transpose(xt::reshape_view(x, {T, H, x.shape(1) / H}), {1, 0, 2});
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
