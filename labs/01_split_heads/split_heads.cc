// Lab 1: split and combine heads. This is the file you edit.
// Read docs/01_split_heads.md first; the header labs/01_split_heads/split_heads.h says what each function must do.
// Check your work with:  bazel test //labs/01_split_heads/...
#include "labs/01_split_heads/split_heads.h"

#include <stdexcept>

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  // TODO:
  // 1. Check n_heads > 0 (before dividing by it) and d_model % n_heads == 0;
  //    throw std::invalid_argument naming the values, e.g.
  //    "split_heads: d_model=10 is not divisible by n_heads=4".
  // 2. Reshape (T, d_model) into (T, n_heads, d_head), then move the head
  //    axis first: (n_heads, T, d_head). Head h gets columns
  //    [h*d_head, (h+1)*d_head).
  throw std::logic_error(
      "lab 1: split_heads is not implemented yet, see docs/01_split_heads.md");
}

Tensor2 combine_heads(const Tensor3& heads) {
  // TODO: the inverse of split_heads: (n_heads, T, d_head) -> (T, n_heads, d_head)
  // -> (T, n_heads*d_head). Throw std::invalid_argument naming n_heads=... or
  // d_head=... when either is 0.
  throw std::logic_error(
      "lab 1: combine_heads is not implemented yet, see docs/01_split_heads.md");
}

}  // namespace mha
