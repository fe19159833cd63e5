// Lab 8: KV-cache decoding.
//
// A language model generates one token at a time. Without a cache, every new
// token runs the layer over the whole prefix again: O(S^2) work per token at
// length S, and keys and values of old tokens recomputed for nothing. The
// keys and values of a token never change once computed (causal attention:
// later tokens do not affect earlier ones), so a KV cache keeps them, and a
// step only projects the new tokens, appends their K and V, and attends from
// the new queries over everything held: O(S) work per token.
//
//   prefill  step(x) with the prompt, T_new = its length: one big step
//   decode   step(x) with T_new = 1, once per generated token
//
// Either way, step() returns rows [P, P + T_new) of the full causal forward
// on the P + T_new tokens fed so far (P = cache length before the call): any
// split of a sequence into steps gives the same rows. The T_new new queries
// are the LAST T_new of the P + T_new positions, so the mask is lab 4's
// bottom-right causal_mask(T_new, P + T_new): query i sits at position P + i
// and sees keys 0 .. P + i, its own included. Append first, attend second.
//
// GQA and MLA exist to make this cache small:
//   GqaDecoder  caches K and V of the n_kv_heads kv heads only:
//               2 * n_kv_heads * d_head floats per token (MHA: n_kv_heads == n_heads)
//   MlaDecoder  caches the latent c = x @ W_DKV only: kv_rank floats per token,
//               and attends in lab 6's absorbed form, so K and V never exist.
//
// Storage: each cache is allocated once, at construction, for `capacity`
// positions, and append() copies the new positions after those held; nothing
// is reallocated while decoding (a static cache, as inference engines keep
// one). length() counts the positions held; bytes() counts what they take,
// not the capacity reserved.
//
// Bad arguments throw std::invalid_argument naming the offending values, and
// leave the cache exactly as it was:
//   sizes <= 0                       "KVCache: capacity=0 must be positive"
//   more positions than capacity     "KVCache: capacity=4 cannot hold 3 + 2 positions"
//   k or v of the wrong shape        "KVCache: k has shape (3, 1, 4), expected (2, T_new, 4)"
//   k and v of different shapes, T_new == 0, x_new whose width is not d_model,
//   a latent whose width is not kv_rank: likewise, shapes written as above.
//
// Lesson: docs/08_kv_cache.md.
#ifndef MHA_LABS_08_KV_CACHE_KV_CACHE_H_
#define MHA_LABS_08_KV_CACHE_KV_CACHE_H_

#include <cstddef>

#include "common/tensor.h"
#include "labs/05_grouped_query_attention/grouped_query_attention.h"
#include "labs/06_latent_attention/latent_attention.h"

namespace mha {

// What one layer has seen so far, per kv head; capacity fixed at construction.
class KVCache {
 public:
  KVCache(int n_kv_heads, int d_head, int capacity);

  // k, v: (n_kv_heads, T_new, d_head), T_new >= 1, appended after what is held.
  // Over capacity or a shape mismatch: std::invalid_argument, cache unchanged.
  void append(const Tensor3& k, const Tensor3& v);

  int length() const;  // positions held
  int capacity() const;
  Tensor3 keys() const;       // (n_kv_heads, length, d_head), a copy
  Tensor3 values() const;     // (n_kv_heads, length, d_head), a copy
  std::size_t bytes() const;  // 2 * n_kv_heads * length * d_head * sizeof(float)
  void clear();               // length 0, capacity kept

 private:
  friend struct remote::Access;
  friend class GqaDecoder;  // so that its blank default constructor can build a blank cache
  friend class RotaryDecoder;  // lab 11's decoder, likewise
  KVCache() = default;

  int n_kv_heads_ = 0;
  int d_head_ = 0;
  int capacity_ = 0;
  int length_ = 0;  // positions held: slots [0, length_) of the buffers below
  Tensor3 keys_;    // (n_kv_heads, capacity, d_head), allocated once
  Tensor3 values_;  // (n_kv_heads, capacity, d_head), allocated once
};

// Incremental GroupedQueryAttention (n_kv_heads == n_heads is plain MHA).
// The layer must outlive the decoder; its weights are read at every step.
class GqaDecoder {
 public:
  // The cache is KVCache(layer.n_kv_heads, layer.d_head, capacity).
  GqaDecoder(const GroupedQueryAttention& layer, int capacity);

  // x_new: (T_new, d_model), the next T_new tokens (T_new > 1: a prefill or a
  // chunk; T_new == 1: one decode step). Returns (T_new, d_model), equal to rows
  // [P, P + T_new) of layer.forward(x_all, causal_mask(P + T_new)), where P is
  // cache().length() before the call and x_all the P + T_new tokens fed so far.
  Tensor2 step(const Tensor2& x_new);

  const KVCache& cache() const;

 private:
  friend struct remote::Access;
  GqaDecoder() = default;

  const GroupedQueryAttention* layer_ = nullptr;  // not owned; a pointer keeps decoders copyable
  KVCache cache_;                                 // the only state that grows
};

// The latent cache of MLA: only c = x @ W_DKV, kv_rank floats per token.
class LatentCache {
 public:
  LatentCache(int kv_rank, int capacity);

  void append(const Tensor2& c);  // (T_new, kv_rank); same errors as KVCache
  int length() const;
  int capacity() const;
  Tensor2 latents() const;    // (length, kv_rank), a copy
  std::size_t bytes() const;  // length * kv_rank * sizeof(float)
  void clear();

 private:
  friend struct remote::Access;
  friend class MlaDecoder;  // so that its blank default constructor can build a blank cache
  LatentCache() = default;

  int kv_rank_ = 0;
  int capacity_ = 0;
  int length_ = 0;   // positions held: rows [0, length_) of latents_
  Tensor2 latents_;  // (capacity, kv_rank), allocated once
};

// Incremental MultiHeadLatentAttention in the absorbed form: each step appends
// c of the new tokens and attends from the latents; K and V are never formed.
// step() equals rows [P, P + T_new) of layer.forward(x_all, causal_mask(P + T_new)).
// The layer must outlive the decoder; its weights are read at every step.
class MlaDecoder {
 public:
  // The cache is LatentCache(layer.kv_rank, capacity).
  MlaDecoder(const MultiHeadLatentAttention& layer, int capacity);

  Tensor2 step(const Tensor2& x_new);  // (T_new, d_model) -> (T_new, d_model)
  const LatentCache& cache() const;

 private:
  friend struct remote::Access;
  MlaDecoder() = default;

  const MultiHeadLatentAttention* layer_ = nullptr;  // not owned
  LatentCache cache_;
};

}  // namespace mha

#endif  // MHA_LABS_08_KV_CACHE_KV_CACHE_H_
