// hostile: lab 8's decoders hand every step to the layer they decode,
// GroupedQueryAttention::forward and MultiHeadLatentAttention::forward_absorbed
// (right for a first prefill, P = 0), instead of projecting and attending
// themselves; everything else is the stub. Lab 8's call surface has lab 5's
// repeat_kv and lab 6's compress, so those labs' clients are linked: without
// the object check, it is the trusted process that refuses the two calls.
#include "labs/08_kv_cache/kv_cache.h"

#include <limits>
#include <stdexcept>

namespace mha {
namespace {

// (T, T): 0 on and below the diagonal, -inf above (built here, not lab 4's).
Tensor2 Causal(int T) {
  Tensor2 m = xt::zeros<float>({static_cast<std::size_t>(T), static_cast<std::size_t>(T)});
  for (int i = 0; i < T; ++i)
    for (int j = i + 1; j < T; ++j) m(i, j) = -std::numeric_limits<float>::infinity();
  return m;
}

}  // namespace

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
  return layer_->forward(x_new, Causal(static_cast<int>(x_new.shape(0))));
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
  return layer_->forward_absorbed(x_new, Causal(static_cast<int>(x_new.shape(0))));
}

const LatentCache& MlaDecoder::cache() const { return cache_; }

}  // namespace mha
