// Lab 11: rotary position embeddings (RoPE).
//
// Attention by itself is blind to order: permute the tokens and the outputs
// come back permuted, nothing else changes. Labs 7 and 10 add a learned
// vector per position to the input. Almost every model since 2023 (Llama,
// Qwen, Mistral, Gemma, DeepSeek's decoupled keys) instead ROTATES each
// head's query and key by an angle that grows with the position, so that the
// score of query m against key n depends on m - n only: on how far apart the
// two tokens are, not on where they sit.
//
// The rotation works on pairs of features. With d_head features per head
// there are d_head / 2 pairs, and pair i turns at its own frequency
//
//   theta_i = base^(-2i / d_head),   i in [0, d_head / 2)
//
// (pair 0 turns one radian per position, the last pair almost not at all;
// base sets the longest wavelength). At position p, pair i is turned by the
// angle p * theta_i. The pairs are HALF-SPLIT, as in GPT-NeoX and Hugging
// Face's Llama (rotate_half): feature i goes with feature i + d_head / 2,
// not with feature i + 1:
//
//   out[i]            = x[i]            cos(p theta_i) - x[i + d_head/2] sin(p theta_i)
//   out[i + d_head/2] = x[i + d_head/2] cos(p theta_i) + x[i]            sin(p theta_i)
//
// Angles are computed in double: p * theta_i in double, its cos and sin in
// double, each rounded to float once. (Near p = 10^6 an angle computed in
// float is off by up to 0.02 rad for d_head 16 and 0.06 rad for d_head 128,
// which moves every score.)
//
// Bad arguments throw std::invalid_argument naming the offending values:
//   "rope_angles: n_positions=0 must be at least 1"
//   "apply_rope: d_head=5 must be even and at least 2"
//   "apply_rope: start=-1 must be >= 0"
//   "apply_rope: base=1 must be > 1"
//   "RotaryAttention: d_model=10 is not divisible by n_heads=4"
//   "RotaryAttention: x has shape (3, 7), expected (T, d_model=8)"
//   "RotaryDecoder: capacity=4 cannot hold 3 + 2 positions"
//
// Lesson: docs/11_rotary_embeddings.md.
#ifndef MHA_LABS_11_ROTARY_EMBEDDINGS_ROTARY_EMBEDDINGS_H_
#define MHA_LABS_11_ROTARY_EMBEDDINGS_ROTARY_EMBEDDINGS_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "common/tensor.h"
#include "labs/08_kv_cache/kv_cache.h"

namespace mha {

// Frequencies theta_i = base^(-2i / d_head) for pair i in [0, d_head / 2).
// The angle of pair i at position p is p * theta_i, computed in double; its
// cos and sin are taken in double and rounded to float once.
// Pairing is half-split (GPT-NeoX, Hugging Face Llama's rotate_half): feature
// i goes with feature i + d_head / 2, not with feature i + 1:
//   out[i]            = x[i] cos(p theta_i) - x[i + d_head/2] sin(p theta_i)
//   out[i + d_head/2] = x[i + d_head/2] cos(p theta_i) + x[i] sin(p theta_i)
// (n_positions, d_head / 2): row p, column i holds p * theta_i, rounded to
// float for display and tests of small positions only: apply_rope computes its
// angles in double itself (a float angle near p = 10^6 is off by up to ~0.06 rad).
// n_positions < 1, d_head odd or < 2, base <= 1: std::invalid_argument.
Tensor2 rope_angles(int n_positions, int d_head, double base = 10000.0);

// x: (H, T, d_head); row t is the token at position start + t. Returns the
// rotated copy. d_head odd or < 2, start < 0, base <= 1: std::invalid_argument.
Tensor3 apply_rope(const Tensor3& x, int start = 0, double base = 10000.0);

// Lab 3's layer with RoPE on the queries and keys of every head (after
// split_heads, before the scores); values are not rotated. Its weights are
// the same draws as MultiHeadAttention(d_model, n_heads, seed). The
// constructor throws std::invalid_argument as lab 3's does, and also for an
// odd d_head or base <= 1; forward for x not (T, d_model), a mask not (T, T) or
// start < 0.
class RotaryAttention {
 public:
  RotaryAttention(int d_model, int n_heads, std::uint64_t seed = 0, double base = 10000.0);

  // x: (T, d_model), token t at position start + t; mask: (T, T) or none.
  //   Q, K, V = x @ W_Q, x @ W_K, x @ W_V             (T, d_model) each
  //   q, k, v = split_heads(...)                      (H, T, d_head) each
  //   q, k    = apply_rope(q, start), apply_rope(k, start)   v untouched
  //   attention(q, k, v, mask), combine heads, @ W_O  (T, d_model)
  Tensor2 forward(const Tensor2& x, const std::optional<Tensor2>& mask = std::nullopt,
                  int start = 0) const;

  std::size_t parameter_count() const;  // 4 * d_model^2: RoPE adds no parameter

  int d_model, n_heads, d_head;
  double base;
  Tensor2 W_Q, W_K, W_V, W_O;  // each (d_model, d_model), drawn in this order, fan-in d_model

 private:
  friend struct remote::Access;  // the grader copies layers between processes
  friend class TransformerBlock;  // lab 14: its blank default constructor builds a blank layer
  RotaryAttention() = default;
};

// Incremental decoding with RoPE. A new token's key is rotated once, at its
// own absolute position, and cached rotated; cached keys are never rotated
// again. step() equals rows [P, P + T_new) of
// layer.forward(x_all, causal_mask(P + T_new), 0), as lab 8's decoders.
// Over capacity or x_new not (T_new >= 1, d_model): std::invalid_argument, and
// the cache is unchanged. The layer must outlive the decoder; its weights are
// read at every step.
class RotaryDecoder {
 public:
  // The cache is KVCache(layer.n_heads, layer.d_head, capacity).
  RotaryDecoder(const RotaryAttention& layer, int capacity);

  // x_new: (T_new, d_model), the tokens at positions P .. P + T_new - 1, where
  // P = cache().length() before the call.
  Tensor2 step(const Tensor2& x_new);  // (T_new, d_model) -> (T_new, d_model)

  const KVCache& cache() const;  // lab 8's cache: n_kv_heads = n_heads, keys rotated

 private:
  friend struct remote::Access;
  RotaryDecoder() = default;

  const RotaryAttention* layer_ = nullptr;  // not owned; a pointer keeps decoders copyable
  KVCache cache_;                           // rotated keys, plain values
};

}  // namespace mha

#endif  // MHA_LABS_11_ROTARY_EMBEDDINGS_ROTARY_EMBEDDINGS_H_
