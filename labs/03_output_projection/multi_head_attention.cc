// Lab 3: output projection and the full layer. This is the file you edit.
// Read docs/03_output_projection.md first; the header labs/03_output_projection/multi_head_attention.h says what each function must do.
// Check your work with:  bazel test //labs/03_output_projection/...
#include "labs/03_output_projection/multi_head_attention.h"

#include <stdexcept>

// You may call your own earlier labs, and common/rng.h for the seeded weights:
// #include "common/rng.h"
// #include "labs/01_split_heads/split_heads.h"

namespace mha {

MultiHeadAttention::MultiHeadAttention(int d_model, int n_heads, std::uint64_t seed) {
  // TODO: check the sizes, then draw W_Q, W_K, W_V, W_O (in that order) with
  // NumpyRng(seed).normal_matrix(d_model, d_model, d_model).
  throw std::logic_error(
      "lab 3: MultiHeadAttention is not implemented yet, see docs/03_output_projection.md");
}

AttentionResult MultiHeadAttention::attend(const Tensor2& x,
                                           const std::optional<Tensor2>& mask) const {
  // TODO: project x to Q, K, V, split them into heads and run attention.
  throw std::logic_error(
      "lab 3: MultiHeadAttention::attend is not implemented yet, see "
      "docs/03_output_projection.md");
}

Tensor2 MultiHeadAttention::forward(const Tensor2& x, const std::optional<Tensor2>& mask) const {
  // TODO: attend, combine the heads, then apply W_O.
  throw std::logic_error(
      "lab 3: MultiHeadAttention::forward is not implemented yet, see "
      "docs/03_output_projection.md");
}

std::size_t MultiHeadAttention::parameter_count() const {
  throw std::logic_error(
      "lab 3: MultiHeadAttention::parameter_count is not implemented yet, see "
      "docs/03_output_projection.md");
}

}  // namespace mha
