// Lab 8 reference solution: KV-cache decoding for GQA (and MHA) and MLA.
//
// One step of a decoder, for T_new new tokens after P cached ones:
//
//   x_new (T_new, d_model)
//     -> q, k_new, v_new = projections of the NEW tokens only
//     -> cache.append(k_new, v_new)                 the cache now holds S = P + T_new
//     -> k, v = everything the cache holds          (n_kv_heads, S, d_head)
//     -> attention(q, k, v, causal_mask(T_new, S))  bottom-right: query i is at P + i
//     -> combine heads, @ W_O                       (T_new, d_model)
//
// The old tokens are never projected again: their keys and values are in the
// cache, and their queries are not needed (their outputs were returned by
// earlier steps). That is the whole saving: a decode step (T_new = 1) costs
// O(S) instead of the O(S^2) of running the layer over the whole prefix.
#include "labs/08_kv_cache/kv_cache.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "common/core/shape_string.h"
#include "labs/01_split_heads/split_heads.h"
#include "labs/02_batched_attention/attention.h"
#include "labs/04_causal_mask/causal_mask.h"

namespace mha {
namespace {

void check_positive(const std::string& who, const std::string& name, int value) {
  if (value <= 0) {
    throw std::invalid_argument(who + ": " + name + "=" + std::to_string(value) +
                                " must be positive");
  }
}

// The one capacity rule of both caches, checked before anything is written.
void check_room(const std::string& who, int capacity, int length, std::size_t t_new) {
  if (length + static_cast<long long>(t_new) > capacity) {
    throw std::invalid_argument(who + ": capacity=" + std::to_string(capacity) +
                                " cannot hold " + std::to_string(length) + " + " +
                                std::to_string(t_new) + " positions");
  }
}

// x_new must be (T_new, d_model) with T_new >= 1.
void check_new_tokens(const std::string& who, const Tensor2& x_new, int d_model) {
  if (x_new.shape(1) != static_cast<std::size_t>(d_model)) {
    throw std::invalid_argument(who + ": x_new has shape " + shape_string(x_new.shape()) +
                                ", expected (T_new, " + std::to_string(d_model) + ")");
  }
  if (x_new.shape(0) == 0) {
    throw std::invalid_argument(who + ": x_new has shape " + shape_string(x_new.shape()) +
                                "; a step needs T_new >= 1 tokens");
  }
}

}  // namespace

// ------------------------------------------------------------------ KVCache

KVCache::KVCache(int n_kv_heads, int d_head, int capacity)
    : n_kv_heads_(n_kv_heads), d_head_(d_head), capacity_(capacity), length_(0) {
  check_positive("KVCache", "n_kv_heads", n_kv_heads);
  check_positive("KVCache", "d_head", d_head);
  check_positive("KVCache", "capacity", capacity);
  // Reserve every slot now: appending then never reallocates or moves what
  // is held, and the memory a long generation needs is known up front.
  const std::size_t G = n_kv_heads, C = capacity, dh = d_head;
  keys_ = xt::zeros<float>({G, C, dh});    // (n_kv_heads, capacity, d_head)
  values_ = xt::zeros<float>({G, C, dh});  // (n_kv_heads, capacity, d_head)
}

void KVCache::append(const Tensor3& k, const Tensor3& v) {
  // Every check comes before the first write, so a rejected append leaves
  // the cache exactly as it was.
  const std::string expected = "(" + std::to_string(n_kv_heads_) + ", T_new, " +
                               std::to_string(d_head_) + ")";
  for (const Tensor3* t : {&k, &v}) {
    if (t->shape(0) != static_cast<std::size_t>(n_kv_heads_) ||
        t->shape(2) != static_cast<std::size_t>(d_head_)) {
      throw std::invalid_argument(std::string("KVCache: ") + (t == &k ? "k" : "v") +
                                  " has shape " + shape_string(t->shape()) + ", expected " +
                                  expected);
    }
  }
  if (k.shape(1) != v.shape(1)) {
    throw std::invalid_argument("KVCache: k has shape " + shape_string(k.shape()) +
                                " but v has shape " + shape_string(v.shape()) +
                                "; every new position needs one key and one value");
  }
  const std::size_t t_new = k.shape(1);
  if (t_new == 0) {
    throw std::invalid_argument("KVCache: k has shape " + shape_string(k.shape()) +
                                "; T_new=0, append at least one position");
  }
  check_room("KVCache", capacity_, length_, t_new);

  // Copy into slots [length, length + T_new) of every kv head, then count them.
  const int end = length_ + static_cast<int>(t_new);
  xt::view(keys_, xt::all(), xt::range(length_, end), xt::all()) = k;    // (G, T_new, d_head)
  xt::view(values_, xt::all(), xt::range(length_, end), xt::all()) = v;  // (G, T_new, d_head)
  length_ = end;
}

int KVCache::length() const { return length_; }

int KVCache::capacity() const { return capacity_; }

Tensor3 KVCache::keys() const {
  // Only the slots that hold something; the rest of the buffer is reserved.
  return xt::view(keys_, xt::all(), xt::range(0, length_), xt::all());  // (G, length, d_head)
}

Tensor3 KVCache::values() const {
  return xt::view(values_, xt::all(), xt::range(0, length_), xt::all());  // (G, length, d_head)
}

std::size_t KVCache::bytes() const {
  // One key AND one value per kv head per position held.
  return 2 * static_cast<std::size_t>(n_kv_heads_) * static_cast<std::size_t>(length_) *
         static_cast<std::size_t>(d_head_) * sizeof(float);
}

void KVCache::clear() {
  // Forgetting is enough: the next append overwrites the old slots.
  length_ = 0;
}

// --------------------------------------------------------------- GqaDecoder

GqaDecoder::GqaDecoder(const GroupedQueryAttention& layer, int capacity)
    : layer_(&layer), cache_(layer.n_kv_heads, layer.d_head, capacity) {}

Tensor2 GqaDecoder::step(const Tensor2& x_new) {
  const GroupedQueryAttention& layer = *layer_;
  check_new_tokens("GqaDecoder", x_new, layer.d_model);
  const std::size_t T_new = x_new.shape(0);
  const int P = cache_.length();  // positions already cached

  // pass 1: project the new tokens only. Their queries ask; their keys and
  // values join the cache. The P old tokens are not touched.
  Tensor2 Q = xt::linalg::dot(x_new, layer.W_Q);  // (T_new, d_model)
  Tensor2 K = xt::linalg::dot(x_new, layer.W_K);  // (T_new, n_kv_heads*d_head)
  Tensor2 V = xt::linalg::dot(x_new, layer.W_V);  // (T_new, n_kv_heads*d_head)
  Tensor3 q = split_heads(Q, layer.n_heads);          // (H, T_new, d_head)
  Tensor3 k_new = split_heads(K, layer.n_kv_heads);   // (G, T_new, d_head)
  Tensor3 v_new = split_heads(V, layer.n_kv_heads);   // (G, T_new, d_head)

  // pass 2: append BEFORE attending. A new token is one of the keys it may
  // see (the diagonal of the causal mask), and inside a chunk token i also
  // sees tokens 0..i-1 of the same chunk. If the cache is full this throws,
  // and nothing has changed yet.
  cache_.append(k_new, v_new);
  const int S = P + static_cast<int>(T_new);  // positions held now

  // pass 3: every key and value so far, the cache stays at n_kv_heads heads;
  // each kv head is repeated for its group of query heads only now, as in lab 5.
  Tensor3 k = repeat_kv(cache_.keys(), layer.n_heads);    // (H, S, d_head)
  Tensor3 v = repeat_kv(cache_.values(), layer.n_heads);  // (H, S, d_head)

  // pass 4: the new queries are the LAST T_new of S positions: query i sits at
  // P + i and sees keys 0..P+i. That is lab 4's bottom-right causal_mask(T_new, S);
  // for a single token it is all zeros (the newest token sees everything).
  Tensor2 mask = causal_mask(static_cast<int>(T_new), S);  // (T_new, S)
  AttentionResult heads = attention_batched(q, k, v, mask);  // output (H, T_new, d_head)

  // pass 5: as in the full layer, concatenate the heads and mix them with W_O.
  Tensor2 concat = combine_heads(heads.output);        // (T_new, d_model)
  Tensor2 y = xt::linalg::dot(concat, layer.W_O);      // (T_new, d_model)
  return y;
}

const KVCache& GqaDecoder::cache() const { return cache_; }

// -------------------------------------------------------------- LatentCache

LatentCache::LatentCache(int kv_rank, int capacity)
    : kv_rank_(kv_rank), capacity_(capacity), length_(0) {
  check_positive("LatentCache", "kv_rank", kv_rank);
  check_positive("LatentCache", "capacity", capacity);
  latents_ = xt::zeros<float>({static_cast<std::size_t>(capacity),
                               static_cast<std::size_t>(kv_rank)});  // (capacity, kv_rank)
}

void LatentCache::append(const Tensor2& c) {
  if (c.shape(1) != static_cast<std::size_t>(kv_rank_)) {
    throw std::invalid_argument("LatentCache: c has shape " + shape_string(c.shape()) +
                                ", expected (T_new, " + std::to_string(kv_rank_) + ")");
  }
  const std::size_t t_new = c.shape(0);
  if (t_new == 0) {
    throw std::invalid_argument("LatentCache: c has shape " + shape_string(c.shape()) +
                                "; T_new=0, append at least one position");
  }
  check_room("LatentCache", capacity_, length_, t_new);
  xt::view(latents_, xt::range(length_, length_ + static_cast<int>(t_new)), xt::all()) = c;
  length_ += static_cast<int>(t_new);
}

int LatentCache::length() const { return length_; }

int LatentCache::capacity() const { return capacity_; }

Tensor2 LatentCache::latents() const {
  return xt::view(latents_, xt::range(0, length_), xt::all());  // (length, kv_rank)
}

std::size_t LatentCache::bytes() const {
  // One latent per position: it stands for the key AND the value of every head.
  return static_cast<std::size_t>(length_) * static_cast<std::size_t>(kv_rank_) * sizeof(float);
}

void LatentCache::clear() { length_ = 0; }

// --------------------------------------------------------------- MlaDecoder

MlaDecoder::MlaDecoder(const MultiHeadLatentAttention& layer, int capacity)
    : layer_(&layer), cache_(layer.kv_rank, capacity) {}

Tensor2 MlaDecoder::step(const Tensor2& x_new) {
  const MultiHeadLatentAttention& layer = *layer_;
  check_new_tokens("MlaDecoder", x_new, layer.d_model);
  const std::size_t T_new = x_new.shape(0);
  const std::size_t dh = static_cast<std::size_t>(layer.d_head);
  // The scores are still q_h . k_h, only computed in another order: the scale
  // is 1/sqrt(d_head), not 1/sqrt(kv_rank) (lab 6).
  const float scale = 1.0f / std::sqrt(static_cast<float>(layer.d_head));

  // pass 1: queries of the new tokens, and their latents, which are all the
  // cache keeps. Append before attending, exactly as for GQA.
  Tensor2 Q = xt::linalg::dot(x_new, layer.W_Q);  // (T_new, d_model)
  Tensor3 q = split_heads(Q, layer.n_heads);      // (H, T_new, d_head)
  cache_.append(layer.compress(x_new));           // c_new: (T_new, kv_rank)
  const int S = cache_.length();                  // P + T_new

  // pass 2: the latents of every token so far: they stand in for the keys
  // AND the values of every head. Transposed once, shared by all heads.
  Tensor2 c = cache_.latents();                             // (S, kv_rank)
  Tensor2 c_t = xt::transpose(c);                           // (kv_rank, S)
  Tensor2 mask = causal_mask(static_cast<int>(T_new), S);  // (T_new, S), bottom-right

  Tensor2 y = xt::zeros<float>({T_new, static_cast<std::size_t>(layer.d_model)});
  for (std::size_t h = 0; h < static_cast<std::size_t>(layer.n_heads); ++h) {
    // Head h owns columns [lo, hi) of W_UK and W_UV, and rows [lo, hi) of W_O.
    const std::size_t lo = h * dh, hi = lo + dh;
    // (Copies: BLAS wants contiguous matrices, and a column block is not.)
    Tensor2 W_UK_h = xt::view(layer.W_UK, xt::all(), xt::range(lo, hi));  // (kv_rank, d_head)
    Tensor2 W_UV_h = xt::view(layer.W_UV, xt::all(), xt::range(lo, hi));  // (kv_rank, d_head)
    auto W_O_h = xt::view(layer.W_O, xt::range(lo, hi), xt::all());       // (d_head, d_model)
    Tensor2 q_h = xt::view(q, h, xt::all(), xt::all());                // (T_new, d_head)

    // pass 3: W_UK absorbed into the query: q_h @ k_j = (q_h @ W_UK_h^T) @ c_j,
    // so the query moves into latent space and is scored against c directly.
    Tensor2 q_latent = xt::linalg::dot(q_h, xt::transpose(W_UK_h));  // (T_new, kv_rank)
    Tensor2 scores = xt::linalg::dot(q_latent, c_t) * scale + mask;  // (T_new, S)
    Tensor2 p = softmax_rows(scores);                                // (T_new, S)

    // pass 4: W_UV absorbed on the way out: p @ V_h = (p @ c) @ W_UV_h. Mixing
    // latents first gives this head's output directly; V_h is never built.
    // (Lab 6 folded W_UV_h @ W_O_h into one (kv_rank, d_model) matrix; for a
    // single token that fold costs more than the step itself, so here the two
    // small products run one after the other. A deployed model, whose weights
    // never change, would fold once at load time.)
    Tensor2 mixed = xt::linalg::dot(p, c);           // (T_new, kv_rank)
    Tensor2 o_h = xt::linalg::dot(mixed, W_UV_h);    // (T_new, d_head)
    y += xt::linalg::dot(o_h, W_O_h);                // (T_new, d_model)
  }
  return y;
}

const LatentCache& MlaDecoder::cache() const { return cache_; }

}  // namespace mha
