// The weights the API says each layer's constructor draws, made here from
// common/rng.h and installed by the test itself.
//
// A hidden test that compares a learner's object with a reference run on the
// same object must not take its expected numbers from state the learner's
// constructor chose: a constructor that zeroes every weight would make every
// expected answer a constant (outputs 0, gradients 0), and a file with no
// layer code would pass. So such a test builds the object with the learner's
// constructor (the class is the learner's) and then overwrites every public
// field, sizes included, with what the API specifies:
//
//   MultiHeadAttention layer(d_model, n_heads, seed);
//   seeded::InstallMha(layer, d_model, n_heads, seed);   // W_Q, W_K, W_V, W_O
//   ... compare layer.forward(x) with naive::MultiHeadForward(x, layer.W_Q, ...)
//
// The API lets tests overwrite the public weights, and the next call must use
// them, so a correct implementation gives the same answers either way. Whether
// the constructor itself draws the right weights is what the golden tests of
// each lab check (SeededDraws..., DrawsWQWKWVWOInThatOrder, ...).
//
// The functions are templates over the layer type so that one header serves
// MultiHeadAttention and RotaryAttention (the same draws), GroupedQueryAttention,
// MultiHeadLatentAttention, lab 14's FeedForward and TransformerBlock and lab
// 15's MiniGpt without depending on any lab's library.
#ifndef MHA_TESTS_COMMON_SEEDED_WEIGHTS_H_
#define MHA_TESTS_COMMON_SEEDED_WEIGHTS_H_

#include <cstddef>
#include <cstdint>

#include "common/rng.h"
#include "common/tensor.h"

namespace mha {
namespace seeded {

// What every attention layer's constructor sets besides its weights:
// d_model, n_heads and d_head = d_model / n_heads.
template <class Layer>
void SetHeads(Layer& layer, int d_model, int n_heads) {
  layer.d_model = d_model;
  layer.n_heads = n_heads;
  layer.d_head = d_model / n_heads;
}

// MultiHeadAttention(d_model, n_heads, seed) (lab 3; lab 11's RotaryAttention
// draws the same): W_Q, W_K, W_V, W_O, each (d_model, d_model), fan-in d_model.
template <class Layer>
void InstallMha(Layer& layer, int d_model, int n_heads, std::uint64_t seed) {
  const std::size_t d = static_cast<std::size_t>(d_model);
  NumpyRng rng(seed);
  SetHeads(layer, d_model, n_heads);
  layer.W_Q = rng.normal_matrix(d, d, d);  // (d_model, d_model)
  layer.W_K = rng.normal_matrix(d, d, d);  // (d_model, d_model)
  layer.W_V = rng.normal_matrix(d, d, d);  // (d_model, d_model)
  layer.W_O = rng.normal_matrix(d, d, d);  // (d_model, d_model)
}

// GroupedQueryAttention(d_model, n_heads, n_kv_heads, seed) (lab 5): W_Q,
// W_K, W_V, W_O in that order, fan-in d_model; W_K and W_V have the kv heads'
// columns only.
template <class Layer>
void InstallGqa(Layer& layer, int d_model, int n_heads, int n_kv_heads, std::uint64_t seed) {
  const std::size_t d = static_cast<std::size_t>(d_model);
  const std::size_t kv = static_cast<std::size_t>(n_kv_heads * (d_model / n_heads));
  NumpyRng rng(seed);
  SetHeads(layer, d_model, n_heads);
  layer.n_kv_heads = n_kv_heads;
  layer.W_Q = rng.normal_matrix(d, d, d);   // (d_model, d_model)
  layer.W_K = rng.normal_matrix(d, kv, d);  // (d_model, n_kv_heads * d_head)
  layer.W_V = rng.normal_matrix(d, kv, d);  // (d_model, n_kv_heads * d_head)
  layer.W_O = rng.normal_matrix(d, d, d);   // (d_model, d_model)
}

// MultiHeadLatentAttention(d_model, n_heads, kv_rank, seed) (lab 6): W_Q,
// W_DKV (fan-in d_model), W_UK, W_UV (fan-in kv_rank), W_O (fan-in d_model).
template <class Layer>
void InstallMla(Layer& layer, int d_model, int n_heads, int kv_rank, std::uint64_t seed) {
  const std::size_t d = static_cast<std::size_t>(d_model);
  const std::size_t r = static_cast<std::size_t>(kv_rank);
  NumpyRng rng(seed);
  SetHeads(layer, d_model, n_heads);
  layer.kv_rank = kv_rank;
  layer.W_Q = rng.normal_matrix(d, d, d);    // (d_model, d_model)
  layer.W_DKV = rng.normal_matrix(d, r, d);  // (d_model, kv_rank)
  layer.W_UK = rng.normal_matrix(r, d, r);   // (kv_rank, d_model)
  layer.W_UV = rng.normal_matrix(r, d, r);   // (kv_rank, d_model)
  layer.W_O = rng.normal_matrix(d, d, d);    // (d_model, d_model)
}

// FeedForward(d_model, d_ff, seed) (lab 14): W_1 (d_model, d_ff), fan-in
// d_model, then W_2 (d_ff, d_model), fan-in d_ff; b_1 and b_2 zero.
template <class Ffn>
void InstallFeedForward(Ffn& ffn, int d_model, int d_ff, std::uint64_t seed) {
  const std::size_t d = static_cast<std::size_t>(d_model), f = static_cast<std::size_t>(d_ff);
  NumpyRng rng(seed);
  ffn.d_model = d_model;
  ffn.d_ff = d_ff;
  ffn.W_1 = rng.normal_matrix(d, f, d);  // (d_model, d_ff)
  ffn.W_2 = rng.normal_matrix(f, d, f);  // (d_ff, d_model)
  ffn.b_1 = Tensor1::from_shape({f});
  ffn.b_1.fill(0.0f);
  ffn.b_2 = Tensor1::from_shape({d});
  ffn.b_2.fill(0.0f);
}

// TransformerBlock(d_model, n_heads, d_ff, seed, base) (lab 14): attn as
// RotaryAttention(d_model, n_heads, seed, base), ffn as FeedForward(d_model,
// d_ff, seed + 1), gammas 1 and betas 0.
template <class Block>
void InstallBlock(Block& block, int d_model, int n_heads, int d_ff, std::uint64_t seed,
                  double base) {
  const std::size_t d = static_cast<std::size_t>(d_model);
  block.d_model = d_model;
  block.n_heads = n_heads;
  block.d_ff = d_ff;
  InstallMha(block.attn, d_model, n_heads, seed);
  block.attn.base = base;
  InstallFeedForward(block.ffn, d_model, d_ff, seed + 1);
  for (Tensor1* v : {&block.ln1_gamma, &block.ln1_beta, &block.ln2_gamma, &block.ln2_beta}) {
    *v = Tensor1::from_shape({d});
  }
  block.ln1_gamma.fill(1.0f);
  block.ln2_gamma.fill(1.0f);
  block.ln1_beta.fill(0.0f);
  block.ln2_beta.fill(0.0f);
}

// MiniGpt(vocab, max_len, d_model, n_heads, d_ff, n_layers, seed, base)
// (lab 15): embed (vocab, d_model) from NumpyRng(seed), fan-in d_model; block
// l as TransformerBlock(d_model, n_heads, d_ff, seed + 1000 (l + 1), base)
// (the blocks made anew by lab 14's constructor, then installed); lnf_gamma
// 1, lnf_beta 0.
template <class Model>
void InstallMiniGpt(Model& model, int vocab, int max_len, int d_model, int n_heads, int d_ff,
                    int n_layers, std::uint64_t seed, double base) {
  using Block = typename decltype(model.blocks)::value_type;
  const std::size_t d = static_cast<std::size_t>(d_model);
  model.vocab = vocab;
  model.max_len = max_len;
  model.d_model = d_model;
  model.n_heads = n_heads;
  model.d_ff = d_ff;
  model.n_layers = n_layers;
  model.base = base;
  model.embed = NumpyRng(seed).normal_matrix(static_cast<std::size_t>(vocab), d, d);
  model.blocks.assign(static_cast<std::size_t>(n_layers), Block(d_model, n_heads, d_ff, seed, base));
  for (int l = 0; l < n_layers; ++l) {
    InstallBlock(model.blocks[l], d_model, n_heads, d_ff,
                 seed + 1000 * static_cast<std::uint64_t>(l + 1), base);
  }
  model.lnf_gamma = Tensor1::from_shape({d});
  model.lnf_gamma.fill(1.0f);
  model.lnf_beta = Tensor1::from_shape({d});
  model.lnf_beta.fill(0.0f);
}

}  // namespace seeded
}  // namespace mha

#endif  // MHA_TESTS_COMMON_SEEDED_WEIGHTS_H_
