// The control of decoder_calls_layer_forward: the same file with the
// decoders' steps left as the stub's.
#include "labs/08_kv_cache/kv_cache.h"

#include <stdexcept>

namespace mha {

// ------------------------------------------------------------------ KVCache

KVCache::KVCache(int n_kv_heads, int d_head, int capacity) {
  // TODO:
  // 1. Check the three sizes are positive ("KVCache: capacity=0 must be positive").
  // 2. Store them, set length_ = 0, and allocate keys_ and values_ once, each
  //    (n_kv_heads, capacity, d_head).
  throw std::logic_error("lab 8: KVCache is not implemented yet, see docs/08_kv_cache.md");
}

void KVCache::append(const Tensor3& k, const Tensor3& v) {
  // TODO:
  // 1. Check everything before writing anything: k and v are both
  //    (n_kv_heads, T_new, d_head) with the same T_new >= 1, and
  //    length + T_new <= capacity ("KVCache: capacity=4 cannot hold 3 + 2 positions").
  // 2. Copy k and v into slots [length, length + T_new) of keys_ and values_.
  // 3. Only then grow length_.
  throw std::logic_error(
      "lab 8: KVCache::append is not implemented yet, see docs/08_kv_cache.md");
}

int KVCache::length() const {
  // TODO: the positions held.
  throw std::logic_error(
      "lab 8: KVCache::length is not implemented yet, see docs/08_kv_cache.md");
}

int KVCache::capacity() const {
  // TODO: the positions reserved at construction.
  throw std::logic_error(
      "lab 8: KVCache::capacity is not implemented yet, see docs/08_kv_cache.md");
}

Tensor3 KVCache::keys() const {
  // TODO: a copy of slots [0, length) of keys_: (n_kv_heads, length, d_head).
  throw std::logic_error("lab 8: KVCache::keys is not implemented yet, see docs/08_kv_cache.md");
}

Tensor3 KVCache::values() const {
  // TODO: the same for values_.
  throw std::logic_error(
      "lab 8: KVCache::values is not implemented yet, see docs/08_kv_cache.md");
}

std::size_t KVCache::bytes() const {
  // TODO: what the held positions take: keys and values, in std::size_t.
  throw std::logic_error("lab 8: KVCache::bytes is not implemented yet, see docs/08_kv_cache.md");
}

void KVCache::clear() {
  // TODO: forget every position; keep the capacity.
  throw std::logic_error("lab 8: KVCache::clear is not implemented yet, see docs/08_kv_cache.md");
}

// --------------------------------------------------------------- GqaDecoder

GqaDecoder::GqaDecoder(const GroupedQueryAttention& layer, int capacity) : layer_(&layer) {}

Tensor2 GqaDecoder::step(const Tensor2& x_new) {
  // TODO:
  // 1. Check x_new is (T_new, d_model) with T_new >= 1. Let P = cache length.
  // 2. Project the NEW tokens only: Q, K, V; split Q into n_heads heads and
  //    K, V into n_kv_heads heads.
  // 3. Append K and V to the cache (before attending!).
  // 4. Repeat the cached keys and values for the query heads (lab 5), build
  //    the bottom-right mask causal_mask(T_new, P + T_new) (lab 4), attend (lab 2).
  // 5. Combine the heads and apply W_O.
  throw std::logic_error(
      "lab 8: GqaDecoder::step is not implemented yet, see docs/08_kv_cache.md");
}

const KVCache& GqaDecoder::cache() const { return cache_; }

// -------------------------------------------------------------- LatentCache

LatentCache::LatentCache(int kv_rank, int capacity) {
  // TODO: as KVCache, with one (capacity, kv_rank) buffer.
  throw std::logic_error("lab 8: LatentCache is not implemented yet, see docs/08_kv_cache.md");
}

void LatentCache::append(const Tensor2& c) {
  // TODO: check c is (T_new, kv_rank) with T_new >= 1 and that it fits, then
  // copy it into rows [length, length + T_new) and grow length_.
  throw std::logic_error(
      "lab 8: LatentCache::append is not implemented yet, see docs/08_kv_cache.md");
}

int LatentCache::length() const {
  throw std::logic_error(
      "lab 8: LatentCache::length is not implemented yet, see docs/08_kv_cache.md");
}

int LatentCache::capacity() const {
  throw std::logic_error(
      "lab 8: LatentCache::capacity is not implemented yet, see docs/08_kv_cache.md");
}

Tensor2 LatentCache::latents() const {
  // TODO: a copy of rows [0, length): (length, kv_rank).
  throw std::logic_error(
      "lab 8: LatentCache::latents is not implemented yet, see docs/08_kv_cache.md");
}

std::size_t LatentCache::bytes() const {
  // TODO: one latent per position held.
  throw std::logic_error(
      "lab 8: LatentCache::bytes is not implemented yet, see docs/08_kv_cache.md");
}

void LatentCache::clear() {
  throw std::logic_error(
      "lab 8: LatentCache::clear is not implemented yet, see docs/08_kv_cache.md");
}

// --------------------------------------------------------------- MlaDecoder

MlaDecoder::MlaDecoder(const MultiHeadLatentAttention& layer, int capacity) : layer_(&layer) {}

Tensor2 MlaDecoder::step(const Tensor2& x_new) {
  // TODO:
  // 1. Check x_new. Queries of the new tokens: split_heads(x_new @ W_Q).
  // 2. Append layer.compress(x_new) to the cache (before attending!).
  // 3. c = the cached latents, (S, kv_rank), S = P + T_new; mask = causal_mask(T_new, S).
  // 4. Per head h, never building K or V (lab 6's absorbed form):
  //      scores = (q_h @ W_UK_h^T) @ c^T / sqrt(d_head) + mask;  p = softmax_rows(scores)
  //      y     += ((p @ c) @ W_UV_h) @ W_O_h
  throw std::logic_error(
      "lab 8: MlaDecoder::step is not implemented yet, see docs/08_kv_cache.md");
}

const LatentCache& MlaDecoder::cache() const { return cache_; }

}  // namespace mha
