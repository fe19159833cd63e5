// Lab 3: output projection and the full layer. This is the file you edit.
// Read docs/03_output_projection.md first; the header labs/03_output_projection/multi_head_attention.h says what each function must do.
// Check your work with:  bazel test //labs/03_output_projection/...
#include "labs/03_output_projection/multi_head_attention.h"

#include <stdexcept>

// You may call your own earlier labs, and common/rng.h for the seeded weights:
// #include <xtensor-blas/xlinalg.hpp>         // xt::linalg::dot, the matrix product
// #include "common/rng.h"                     // NumpyRng
// #include "labs/01_split_heads/split_heads.h"  // split_heads, combine_heads
// (lab 2's attention_batched comes with the header above.)

namespace mha {

// The parameters are named as torch.nn.MultiheadAttention names them, not like
// the members they set: a parameter called d_model would hide the member
// d_model inside this body (-Wshadow warns), and `d_model = d_model;` would
// then assign the parameter to itself and leave the member unset.
MultiHeadAttention::MultiHeadAttention(int embed_dim, int num_heads, std::uint64_t seed) {
  // TODO: check the sizes, store d_model = embed_dim, n_heads = num_heads and
  // d_head, then draw W_Q, W_K, W_V, W_O (in that order) with
  // NumpyRng(seed).normal_matrix(d_model, d_model, d_model).
  throw std::logic_error(
      "lab 3: MultiHeadAttention is not implemented yet, see docs/03_output_projection.md");
}

AttentionResult MultiHeadAttention::attend(const Tensor2& x,
                                           const std::optional<Tensor2>& mask) const {
  // TODO: check x is (T, d_model) and mask (T, T); project x to Q, K, V
  // (each (T, d_model)), split them into heads (H, T, d_head) and run
  // attention_batched. Read the weights here, on every call: never cache them.
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
  // TODO: how many numbers do W_Q, W_K, W_V and W_O hold together?
  throw std::logic_error(
      "lab 3: MultiHeadAttention::parameter_count is not implemented yet, see "
      "docs/03_output_projection.md");
}

}  // namespace mha
