// Every check of a call back's arguments, in one place, before any reference
// code runs on them.
//
// In isolated grading the learner's process may call back the earlier labs of
// its call surface (labs/labs.json "calls"); the job's reference process
// (common/lab.bzl's :reference_server, which alone links this file) answers
// with the reference solutions. Those trust their objects: a layer's weights
// are assumed (d_model, d_model), a cache's buffers (n_kv_heads, capacity,
// d_head). An object the learner's process sends can break any of that (a
// W_O of one row, n_heads * d_head != d_model, empty weights), and a BLAS
// product on it would read or write past a buffer. So every object that
// travels is checked here as it is decoded (common/grading/remote_codec.h,
// RegisterObjectCheck), and a broken one fails the call with
// std::invalid_argument naming the value and what was expected. Tensors and
// sizes passed by value are the reference functions' own checks (the labs'
// "bad arguments" tests, and tests/common/call_back_fuzz_test.cc under
// AddressSanitizer, show they hold).
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/core/shape_string.h"
#include "common/grading/remote.h"
#include "common/tensor.h"
#include "labs/03_output_projection/multi_head_attention.h"
#include "labs/05_grouped_query_attention/grouped_query_attention.h"
#include "labs/06_latent_attention/latent_attention.h"
#include "labs/08_kv_cache/kv_cache.h"
#include "labs/11_rotary_embeddings/rotary_embeddings.h"
#include "labs/14_transformer_block/transformer_block.h"
#include "tests/08_kv_cache/remote.h"
#include "tests/11_rotary_embeddings/remote.h"

namespace mha {
namespace {

// The largest size a call back may name (d_model, heads, capacity): far above
// any lab's, far below what could overflow an int product of two of them.
constexpr long long kMaxSize = 1 << 14;

void Fail(const std::string& who, const std::string& what) {
  throw std::invalid_argument("call back refused before the reference ran: " + who + " " + what);
}

void Positive(const std::string& who, const char* name, long long value) {
  if (value <= 0 || value > kMaxSize) {
    Fail(who, std::string("has ") + name + "=" + std::to_string(value) +
                  ", expected a size in [1, " + std::to_string(kMaxSize) + "]");
  }
}

void Product(const std::string& who, const char* a, long long x, const char* b, long long y,
             const char* c, long long z) {
  if (x * y != z) {
    Fail(who, std::string("has ") + a + " * " + b + " = " + std::to_string(x) + " * " +
                  std::to_string(y) + " = " + std::to_string(x * y) + ", expected " + c + " = " +
                  std::to_string(z));
  }
}

template <class T>
void Shape(const std::string& who, const char* name, const T& t,
           const typename T::shape_type& want) {
  if (t.shape() != want) {
    Fail(who, std::string("has ") + name + " of shape " + shape_string(t.shape()) +
                  ", expected " + shape_string(want));
  }
}

using Sizes2 = Tensor2::shape_type;
using Sizes3 = Tensor3::shape_type;

std::size_t U(int v) { return static_cast<std::size_t>(v); }

// Every attention layer's geometry: n_heads heads of d_head making d_model.
template <class Layer>
void CheckHeads(const std::string& who, const Layer& l) {
  Positive(who, "d_model", l.d_model);
  Positive(who, "n_heads", l.n_heads);
  Positive(who, "d_head", l.d_head);
  Product(who, "n_heads", l.n_heads, "d_head", l.d_head, "d_model", l.d_model);
}

// Lab 3's layer and lab 11's: its heads, and four (d_model, d_model) weights.
template <class Layer>
void CheckHeadsAndSquareWeights(const std::string& who, const Layer& l) {
  CheckHeads(who, l);
  const Sizes2 square = {U(l.d_model), U(l.d_model)};
  Shape(who, "W_Q", l.W_Q, square);
  Shape(who, "W_K", l.W_K, square);
  Shape(who, "W_V", l.W_V, square);
  Shape(who, "W_O", l.W_O, square);
}

void CheckMha(const MultiHeadAttention& l) {
  CheckHeadsAndSquareWeights("the MultiHeadAttention layer", l);
}

// Lab 11's layer (lab 14 calls its forward back): lab 3's sizes and weights,
// pairs to rotate and a base above 1.
void CheckRotary(const RotaryAttention& l) {
  const std::string who = "the RotaryAttention layer";
  CheckHeadsAndSquareWeights(who, l);
  if (l.d_head % 2 != 0) {
    Fail(who, "has d_head=" + std::to_string(l.d_head) + ", expected an even d_head (pairs)");
  }
  if (!(l.base > 1.0) || !std::isfinite(l.base)) {
    Fail(who, "has base=" + std::to_string(l.base) + ", expected a finite base > 1");
  }
}

// Lab 14's FFN and block (lab 15 calls them back). A block's attn and ffn
// are checked as they are decoded, before the block itself.
void CheckFeedForward(const FeedForward& f) {
  const std::string who = "the FeedForward layer";
  Positive(who, "d_model", f.d_model);
  Positive(who, "d_ff", f.d_ff);
  Shape(who, "W_1", f.W_1, {U(f.d_model), U(f.d_ff)});
  Shape(who, "b_1", f.b_1, {U(f.d_ff)});
  Shape(who, "W_2", f.W_2, {U(f.d_ff), U(f.d_model)});
  Shape(who, "b_2", f.b_2, {U(f.d_model)});
}

void CheckBlock(const TransformerBlock& b) {
  const std::string who = "the TransformerBlock";
  Positive(who, "d_model", b.d_model);
  Positive(who, "n_heads", b.n_heads);
  Positive(who, "d_ff", b.d_ff);
  if (b.attn.d_model != b.d_model || b.attn.n_heads != b.n_heads || b.ffn.d_model != b.d_model ||
      b.ffn.d_ff != b.d_ff) {
    Fail(who, "has d_model=" + std::to_string(b.d_model) + ", n_heads=" +
                  std::to_string(b.n_heads) + ", d_ff=" + std::to_string(b.d_ff) +
                  ", expected its attn and ffn of the same sizes");
  }
  const Tensor1::shape_type row = {U(b.d_model)};
  Shape(who, "ln1_gamma", b.ln1_gamma, row);
  Shape(who, "ln1_beta", b.ln1_beta, row);
  Shape(who, "ln2_gamma", b.ln2_gamma, row);
  Shape(who, "ln2_beta", b.ln2_beta, row);
}

void CheckGqa(const GroupedQueryAttention& l) {
  const std::string who = "the GroupedQueryAttention layer";
  CheckHeads(who, l);
  Positive(who, "n_kv_heads", l.n_kv_heads);
  if (l.n_heads % l.n_kv_heads != 0) {
    Fail(who, "has n_heads=" + std::to_string(l.n_heads) + " and n_kv_heads=" +
                  std::to_string(l.n_kv_heads) + ", expected n_kv_heads to divide n_heads");
  }
  const Sizes2 square = {U(l.d_model), U(l.d_model)};
  const Sizes2 kv = {U(l.d_model), U(l.n_kv_heads * l.d_head)};
  Shape(who, "W_Q", l.W_Q, square);
  Shape(who, "W_K", l.W_K, kv);
  Shape(who, "W_V", l.W_V, kv);
  Shape(who, "W_O", l.W_O, square);
}

void CheckMla(const MultiHeadLatentAttention& l) {
  const std::string who = "the MultiHeadLatentAttention layer";
  CheckHeads(who, l);
  Positive(who, "kv_rank", l.kv_rank);
  const Sizes2 square = {U(l.d_model), U(l.d_model)};
  Shape(who, "W_Q", l.W_Q, square);
  Shape(who, "W_DKV", l.W_DKV, {U(l.d_model), U(l.kv_rank)});
  Shape(who, "W_UK", l.W_UK, {U(l.kv_rank), U(l.d_model)});
  Shape(who, "W_UV", l.W_UV, {U(l.kv_rank), U(l.d_model)});
  Shape(who, "W_O", l.W_O, square);
}

void CheckKvCache(const KVCache& c) {
  const std::string who = "the KVCache";
  auto& m = const_cast<KVCache&>(c);
  auto [n_kv_heads, d_head, capacity, length, keys, values] = remote::Access::Fields(m);
  Positive(who, "n_kv_heads", n_kv_heads);
  Positive(who, "d_head", d_head);
  Positive(who, "capacity", capacity);
  if (length < 0 || length > capacity) {
    Fail(who, "has length=" + std::to_string(length) + ", expected 0 <= length <= capacity=" +
                  std::to_string(capacity));
  }
  const Sizes3 buffer = {U(n_kv_heads), U(capacity), U(d_head)};
  Shape(who, "keys buffer", keys, buffer);
  Shape(who, "values buffer", values, buffer);
}

void CheckLatentCache(const LatentCache& c) {
  const std::string who = "the LatentCache";
  auto& m = const_cast<LatentCache&>(c);
  auto [kv_rank, capacity, length, latents] = remote::Access::Fields(m);
  Positive(who, "kv_rank", kv_rank);
  Positive(who, "capacity", capacity);
  if (length < 0 || length > capacity) {
    Fail(who, "has length=" + std::to_string(length) + ", expected 0 <= length <= capacity=" +
                  std::to_string(capacity));
  }
  Shape(who, "latents buffer", latents, {U(capacity), U(kv_rank)});
}

// Lab 11's decoder (lab 15 calls it back; its GptDecoder holds one per
// block): a layer, and a cache of that layer's heads (the layer and the cache
// are checked as they are decoded, before the decoder itself).
void CheckRotaryDecoder(const RotaryDecoder& d) {
  const std::string who = "the RotaryDecoder";
  auto [layer, cache] = remote::Access::Fields(const_cast<RotaryDecoder&>(d));
  if (layer == nullptr) Fail(who, "has no layer");
  auto [n_kv_heads, d_head, capacity, length, keys, values] =
      remote::Access::Fields(const_cast<KVCache&>(cache));
  (void)capacity, (void)length, (void)keys, (void)values;
  if (n_kv_heads != layer->n_heads || d_head != layer->d_head) {
    Fail(who, "has a cache of " + std::to_string(n_kv_heads) + " heads of " +
                  std::to_string(d_head) + ", expected its layer's " +
                  std::to_string(layer->n_heads) + " heads of " + std::to_string(layer->d_head));
  }
}

const bool registered = remote::RegisterObjectCheck(&CheckMha) &&
                        remote::RegisterObjectCheck(&CheckRotary) &&
                        remote::RegisterObjectCheck(&CheckFeedForward) &&
                        remote::RegisterObjectCheck(&CheckBlock) &&
                        remote::RegisterObjectCheck(&CheckRotaryDecoder) &&
                        remote::RegisterObjectCheck(&CheckGqa) &&
                        remote::RegisterObjectCheck(&CheckMla) &&
                        remote::RegisterObjectCheck(&CheckKvCache) &&
                        remote::RegisterObjectCheck(&CheckLatentCache);

}  // namespace
}  // namespace mha
