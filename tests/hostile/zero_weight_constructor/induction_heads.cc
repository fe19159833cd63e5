// Hostile case: a constructor that sets every weight to zero, and no model
// code. Zero weights make every answer a constant: logits 0, uniform causal
// attention, loss ln(vocab), gradients 0. A test that compares the learner's
// model with a reference run on that same model would agree with it; the
// hidden tests install the API's seeded weights themselves first
// (tests/common/seeded_weights.h), so this file must earn nothing.
#include "labs/13_induction_heads/induction_heads.h"

#include <cmath>
#include <stdexcept>

#include "labs/04_causal_mask/causal_mask.h"
#include "labs/10_attention_backward/attention_backward.h"

namespace mha {

AttentionOnlyTransformer::AttentionOnlyTransformer(int vocab_, int max_len_, int d_model_,
                                                   int n_heads_, int n_layers_,
                                                   std::uint64_t seed)
    : vocab(vocab_), max_len(max_len_), d_model(d_model_), n_heads(n_heads_),
      n_layers(n_layers_) {
  const std::size_t V = vocab, L = max_len, d = d_model;
  embed = xt::zeros<float>({V, d});
  pos = xt::zeros<float>({L, d});
  unembed = xt::zeros<float>({d, V});
  for (int l = 0; l < n_layers; ++l) {
    layers.push_back(MultiHeadAttention(d_model, n_heads, seed + 1000 * l));
    for (Tensor2* w : {&layers.back().W_Q, &layers.back().W_K, &layers.back().W_V,
                       &layers.back().W_O}) {
      w->fill(0.0f);
    }
  }
}

Tensor2 AttentionOnlyTransformer::logits(const std::vector<int>& tokens) const {
  return xt::zeros<float>({tokens.size(), static_cast<std::size_t>(vocab)});
}

std::vector<Tensor3> AttentionOnlyTransformer::attention_weights(
    const std::vector<int>& tokens) const {
  // Zero W_Q and W_K: every visible key gets the same weight.
  const std::size_t T = tokens.size(), H = n_heads;
  std::vector<Tensor3> out;
  for (int l = 0; l < n_layers; ++l) {
    Tensor3 w = xt::zeros<float>({H, T, T});
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < T; ++i)
        for (std::size_t j = 0; j <= i; ++j) w(h, i, j) = 1.0f / static_cast<float>(i + 1);
    out.push_back(w);
  }
  return out;
}

LossAndGrads loss_and_grads(const AttentionOnlyTransformer& model, const std::vector<int>& inputs,
                            const std::vector<int>& targets) {
  (void)inputs, (void)targets;
  LossAndGrads r;
  r.loss = std::log(static_cast<double>(model.vocab));
  r.grads.d_embed = xt::zeros<float>(model.embed.shape());
  r.grads.d_pos = xt::zeros<float>(model.pos.shape());
  r.grads.d_unembed = xt::zeros<float>(model.unembed.shape());
  const std::size_t d = model.d_model;
  for (int l = 0; l < model.n_layers; ++l) {
    r.grads.layers.push_back({xt::zeros<float>({d, d}), xt::zeros<float>({d, d}),
                              xt::zeros<float>({d, d}), xt::zeros<float>({d, d})});
  }
  return r;
}

Composition composition_scores(const MultiHeadAttention& earlier,
                               const MultiHeadAttention& later) {
  (void)earlier, (void)later;
  throw std::logic_error("not implemented");
}

}  // namespace mha
