// Lab 11: rotary position embeddings (RoPE). This is the file you edit.
// Read docs/11_rotary_embeddings.md first; the header labs/11_rotary_embeddings/rotary_embeddings.h says what each function must do.
// Check your work with:  bazel test //labs/11_rotary_embeddings/...
#include "labs/11_rotary_embeddings/rotary_embeddings.h"

#include <stdexcept>

// What you may call from earlier labs (and nothing else of theirs):
// #include <cmath>                                            // std::pow, std::cos, std::sin (double)
// #include <xtensor-blas/xlinalg.hpp>                         // xt::linalg::dot
// #include "labs/01_split_heads/split_heads.h"                // split_heads, combine_heads
// #include "labs/02_batched_attention/attention.h"            // attention_batched, softmax_rows
// #include "labs/03_output_projection/multi_head_attention.h" // the MultiHeadAttention constructor only
// #include "labs/04_causal_mask/causal_mask.h"                // causal_mask(T, S)
// (lab 8's KVCache comes with the header above.)

namespace mha {

Tensor2 rope_angles(int n_positions, int d_head, double base) {
  // TODO:
  // 1. Check n_positions >= 1, d_head even and >= 2, base > 1 (std::invalid_argument
  //    naming the value, e.g. "rope_angles: n_positions=0 must be at least 1").
  // 2. theta_i = base^(-2i / d_head) in double, for i in [0, d_head / 2).
  // 3. Row p, column i: p * theta_i in double, rounded to float. Shape (n_positions, d_head / 2).
  (void)n_positions, (void)d_head, (void)base;
  throw std::logic_error("lab 11: rope_angles is not implemented yet, see docs/11_rotary_embeddings.md");
}

Tensor3 apply_rope(const Tensor3& x, int start, double base) {
  // TODO:
  // 1. Check d_head = x.shape(2) even and >= 2, start >= 0, base > 1.
  // 2. For each position p = start + t: cos and sin of p * theta_i, in double,
  //    rounded to float once (compute them once and share them across heads).
  // 3. Half-split pairs: feature i goes with feature i + d_head / 2:
  //      out[i]            = x[i] cos - x[i + d_head/2] sin
  //      out[i + d_head/2] = x[i + d_head/2] cos + x[i] sin
  (void)x, (void)start, (void)base;
  throw std::logic_error("lab 11: apply_rope is not implemented yet, see docs/11_rotary_embeddings.md");
}

RotaryAttention::RotaryAttention(int embed_dim, int num_heads, std::uint64_t seed,
                                 double rope_base) {
  // TODO:
  // 1. Check the sizes as lab 3 does, then that d_head is even and rope_base > 1.
  // 2. Store d_model = embed_dim, n_heads = num_heads, d_head and base = rope_base;
  //    take the four weights from MultiHeadAttention(d_model, n_heads, seed):
  //    the same draws.
  (void)embed_dim, (void)num_heads, (void)seed, (void)rope_base;
  throw std::logic_error("lab 11: RotaryAttention is not implemented yet, see docs/11_rotary_embeddings.md");
}

Tensor2 RotaryAttention::forward(const Tensor2& x, const std::optional<Tensor2>& mask,
                                 int start) const {
  // TODO:
  // 1. Check x is (T, d_model), the mask (T, T) when given, start >= 0.
  // 2. Q, K, V = x @ W; split_heads; rotate q and k (NOT v) at positions start + t.
  // 3. attention_batched(q, k, v, mask), combine_heads, @ W_O.
  (void)x, (void)mask, (void)start;
  throw std::logic_error("lab 11: RotaryAttention::forward is not implemented yet, see docs/11_rotary_embeddings.md");
}

std::size_t RotaryAttention::parameter_count() const {
  // TODO: four (d_model, d_model) matrices; RoPE adds none.
  throw std::logic_error("lab 11: RotaryAttention::parameter_count is not implemented yet, see docs/11_rotary_embeddings.md");
}

RotaryDecoder::RotaryDecoder(const RotaryAttention& layer, int capacity) {
  // TODO: keep a pointer to the layer; the cache is KVCache(layer.n_heads, layer.d_head, capacity)
  // (build it in the member initializer list).
  (void)layer, (void)capacity;
  throw std::logic_error("lab 11: RotaryDecoder is not implemented yet, see docs/11_rotary_embeddings.md");
}

Tensor2 RotaryDecoder::step(const Tensor2& x_new) {
  // TODO:
  // 1. Check x_new is (T_new >= 1, d_model) and that the cache has room, before any change.
  // 2. P = cache length: project the new tokens, rotate q and k at positions P + t.
  // 3. Append the ROTATED keys (and plain values); never rotate a cached key again.
  // 4. attention_batched over the whole cache with causal_mask(T_new, P + T_new),
  //    combine_heads, @ W_O.
  (void)x_new;
  throw std::logic_error("lab 11: RotaryDecoder::step is not implemented yet, see docs/11_rotary_embeddings.md");
}

const KVCache& RotaryDecoder::cache() const {
  // TODO: return the cache.
  throw std::logic_error("lab 11: RotaryDecoder::cache is not implemented yet, see docs/11_rotary_embeddings.md");
}

}  // namespace mha
