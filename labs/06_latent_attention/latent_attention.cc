// Lab 6: multi-head latent attention. This is the file you edit.
// Read docs/06_latent_attention.md first; the header labs/06_latent_attention/latent_attention.h says what each function must do.
// Check your work with:  bazel test //labs/06_latent_attention/...
#include "labs/06_latent_attention/latent_attention.h"

#include <stdexcept>

// You may call your own earlier labs, and common/rng.h for the seeded weights.

namespace mha {

MultiHeadLatentAttention::MultiHeadLatentAttention(int d_model, int n_heads, int kv_rank,
                                                   std::uint64_t seed) {
  throw std::logic_error(
      "lab 6: MultiHeadLatentAttention is not implemented yet, see docs/06_latent_attention.md");
}

Tensor2 MultiHeadLatentAttention::compress(const Tensor2& x) const {
  throw std::logic_error(
      "lab 6: MultiHeadLatentAttention::compress is not implemented yet, see "
      "docs/06_latent_attention.md");
}

Tensor2 MultiHeadLatentAttention::forward(const Tensor2& x,
                                          const std::optional<Tensor2>& mask) const {
  throw std::logic_error(
      "lab 6: MultiHeadLatentAttention::forward is not implemented yet, see "
      "docs/06_latent_attention.md");
}

Tensor2 MultiHeadLatentAttention::forward_absorbed(const Tensor2& x,
                                                   const std::optional<Tensor2>& mask) const {
  throw std::logic_error(
      "lab 6: MultiHeadLatentAttention::forward_absorbed is not implemented yet, see "
      "docs/06_latent_attention.md");
}

std::size_t MultiHeadLatentAttention::parameter_count() const {
  throw std::logic_error(
      "lab 6: MultiHeadLatentAttention::parameter_count is not implemented yet, see "
      "docs/06_latent_attention.md");
}

std::size_t MultiHeadLatentAttention::kv_cache_floats_per_token() const {
  throw std::logic_error(
      "lab 6: MultiHeadLatentAttention::kv_cache_floats_per_token is not implemented yet, see "
      "docs/06_latent_attention.md");
}

}  // namespace mha
