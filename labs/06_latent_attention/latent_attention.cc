// Lab 6: multi-head latent attention. This is the file you edit.
// Read docs/06_latent_attention.md first; the header labs/06_latent_attention/latent_attention.h says what each function must do.
// Check your work with:  bazel test //labs/06_latent_attention/...
#include "labs/06_latent_attention/latent_attention.h"

#include <stdexcept>

// You may call your own earlier labs, and common/rng.h for the seeded weights.

namespace mha {

// The parameters are not named like the members they set (d_model, n_heads,
// kv_rank): such a parameter would hide its member inside this body
// (-Wshadow warns), and `d_model = d_model;` would assign it to itself.
MultiHeadLatentAttention::MultiHeadLatentAttention(int embed_dim, int num_heads, int latent_rank,
                                                   std::uint64_t seed) {
  // TODO: check the sizes (positive, d_model % n_heads == 0), store them, set d_head, then
  // one NumpyRng(seed) draws W_Q, W_DKV, W_UK, W_UV, W_O in that order
  // (fan-in d_model, d_model, kv_rank, kv_rank, d_model).
  throw std::logic_error(
      "lab 6: MultiHeadLatentAttention is not implemented yet, see docs/06_latent_attention.md");
}

Tensor2 MultiHeadLatentAttention::compress(const Tensor2& x) const {
  // TODO: c = x @ W_DKV, (T, kv_rank). Check x has d_model columns.
  throw std::logic_error(
      "lab 6: MultiHeadLatentAttention::compress is not implemented yet, see "
      "docs/06_latent_attention.md");
}

Tensor2 MultiHeadLatentAttention::forward(const Tensor2& x,
                                          const std::optional<Tensor2>& mask) const {
  // TODO: Q = x @ W_Q; c = compress(x); K = c @ W_UK; V = c @ W_UV; then
  // split_heads, attention_batched, combine_heads and @ W_O, as in lab 3.
  throw std::logic_error(
      "lab 6: MultiHeadLatentAttention::forward is not implemented yet, see "
      "docs/06_latent_attention.md");
}

Tensor2 MultiHeadLatentAttention::forward_absorbed(const Tensor2& x,
                                                   const std::optional<Tensor2>& mask) const {
  // TODO: per head h, without ever building K or V:
  //   scores_h = (q_h @ W_UK_h^T) @ c^T / sqrt(d_head) (+ mask); p_h = softmax_rows
  //   output  += (p_h @ c) @ (W_UV_h @ W_O_h)
  // W_UK_h, W_UV_h: columns [h*d_head, (h+1)*d_head); W_O_h: the same rows.
  throw std::logic_error(
      "lab 6: MultiHeadLatentAttention::forward_absorbed is not implemented yet, see "
      "docs/06_latent_attention.md");
}

std::size_t MultiHeadLatentAttention::parameter_count() const {
  // TODO: 2*d_model^2 + 3*d_model*kv_rank, in std::size_t.
  throw std::logic_error(
      "lab 6: MultiHeadLatentAttention::parameter_count is not implemented yet, see "
      "docs/06_latent_attention.md");
}

std::size_t MultiHeadLatentAttention::kv_cache_floats_per_token() const {
  // TODO: only the latent c is cached.
  throw std::logic_error(
      "lab 6: MultiHeadLatentAttention::kv_cache_floats_per_token is not implemented yet, see "
      "docs/06_latent_attention.md");
}

}  // namespace mha
