#include "labs/10_attention_backward/attention_only_model.h"

#include <stdexcept>
#include <string>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "common/rng.h"

namespace mha {
namespace training {

AttentionOnlyModel::AttentionOnlyModel(int vocab, int max_len, int d_model, int n_heads,
                                       std::uint64_t seed)
    : layer(d_model, n_heads, seed) {
  if (vocab <= 0 || max_len <= 0) {
    throw std::invalid_argument("AttentionOnlyModel: vocab=" + std::to_string(vocab) +
                                " and max_len=" + std::to_string(max_len) + " must be positive");
  }
  NumpyRng rng(seed + 1);
  const std::size_t V = static_cast<std::size_t>(vocab), d = static_cast<std::size_t>(d_model);
  embed = rng.normal_matrix(V, d, 1);                                  // (V, d), N(0, 1)
  pos = rng.normal_matrix(static_cast<std::size_t>(max_len), d, 1);   // (T_max, d), N(0, 1)
  unembed = rng.normal_matrix(d, V, d);                                // (d, V), N(0, 1/d)
}

Tensor2 AttentionOnlyModel::logits(const std::vector<int>& inputs) const {
  check_sequence("AttentionOnlyModel", inputs, vocab(), max_len());
  const Tensor2 x = embed_sequence(embed, pos, inputs);            // (T, d)
  const Tensor2 y = x + layer.forward(x, causal(inputs.size()));   // (T, d)
  return xt::linalg::dot(y, unembed);                              // (T, V)
}

ModelGrads::ModelGrads(const AttentionOnlyModel& m)
    : embed(xt::zeros<float>(m.embed.shape())),
      pos(xt::zeros<float>(m.pos.shape())),
      W_Q(xt::zeros<float>(m.layer.W_Q.shape())),
      W_K(xt::zeros<float>(m.layer.W_K.shape())),
      W_V(xt::zeros<float>(m.layer.W_V.shape())),
      W_O(xt::zeros<float>(m.layer.W_O.shape())),
      unembed(xt::zeros<float>(m.unembed.shape())) {}

void ModelGrads::zero() {
  for (Tensor2* t : {&embed, &pos, &W_Q, &W_K, &W_V, &W_O, &unembed}) t->fill(0.0f);
}

double accumulate_gradients(const AttentionOnlyModel& model, const Example& example, float weight,
                            ModelGrads& grads, std::size_t* scored, std::size_t* correct) {
  const std::vector<int>& ids = example.inputs;
  check_sequence("AttentionOnlyModel", ids, model.vocab(), model.max_len());
  if (example.targets.size() != ids.size()) {
    throw std::invalid_argument("accumulate_gradients: " + std::to_string(ids.size()) +
                                " inputs but " + std::to_string(example.targets.size()) +
                                " targets");
  }
  const Tensor2 mask = causal(ids.size());  // (T, T)

  // forward, keeping what the backward needs
  const Tensor2 x = embed_sequence(model.embed, model.pos, ids);  // (T, d)
  const Tensor2 y = x + model.layer.forward(x, mask);             // (T, d)   lab 3
  Tensor2 d_logits = xt::linalg::dot(y, model.unembed);           // (T, V)   logits for now

  // cross-entropy, and its gradient softmax(logits) - onehot(target), in place
  const double loss =
      cross_entropy_backward(d_logits, example.targets, weight, scored, correct);

  // backward: logits = y @ unembed
  grads.unembed += xt::linalg::dot(xt::transpose(y), d_logits);         // (d, V)
  const Tensor2 d_y = xt::linalg::dot(d_logits, xt::transpose(model.unembed));  // (T, d)
  // y = x + layer(x): the residual passes d_y to x unchanged, the layer adds its part (lab 10)
  const MhaGrads g = mha_backward(model.layer, x, mask, d_y);
  grads.W_Q += g.dW_Q;
  grads.W_K += g.dW_K;
  grads.W_V += g.dW_V;
  grads.W_O += g.dW_O;
  // x = embed[ids] + pos: each row of dx goes to its token's and its position's row
  embedding_backward(ids, d_y, g.dx, grads.embed, grads.pos);
  return loss;
}

std::vector<Param> parameters(AttentionOnlyModel& model, const ModelGrads& grads) {
  return {param(model.embed, grads.embed),     param(model.pos, grads.pos),
          param(model.layer.W_Q, grads.W_Q),   param(model.layer.W_K, grads.W_K),
          param(model.layer.W_V, grads.W_V),   param(model.layer.W_O, grads.W_O),
          param(model.unembed, grads.unembed)};
}

Evaluation evaluate(const AttentionOnlyModel& model, const std::vector<Example>& examples) {
  std::vector<Tensor2> logits;
  logits.reserve(examples.size());
  for (const Example& ex : examples) logits.push_back(model.logits(ex.inputs));  // (T, V) each
  return evaluate_logits(logits, examples);
}

AttentionOnlyModel without_head(const AttentionOnlyModel& model, int head) {
  if (head < 0 || head >= model.layer.n_heads) {
    throw std::invalid_argument("without_head: head=" + std::to_string(head) + " outside [0, " +
                                std::to_string(model.layer.n_heads) + ")");
  }
  AttentionOnlyModel out = model;
  // concat columns [h*d_head, (h+1)*d_head) are head h's output; they meet
  // W_O in its rows of the same indices.
  const std::size_t dh = static_cast<std::size_t>(model.layer.d_head);
  xt::view(out.layer.W_O, xt::range(head * dh, (head + 1) * dh), xt::all()) = 0.0f;
  return out;
}

}  // namespace training
}  // namespace mha
