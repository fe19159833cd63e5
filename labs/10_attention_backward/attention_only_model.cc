#include "labs/10_attention_backward/attention_only_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "common/core/rng.h"

namespace mha {
namespace training {

namespace {

// (T, T) additive causal mask: 0 where key j <= query i, -inf above.
Tensor2 causal(std::size_t T) {
  Tensor2 mask = xt::zeros<float>({T, T});
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = i + 1; j < T; ++j) mask(i, j) = -std::numeric_limits<float>::infinity();
  return mask;
}

// Cross-entropy of one row of logits against its target, computed around the
// row's largest logit so that exp never overflows:
//   loss = log sum_c exp(row[c] - max) - (row[target] - max)
struct RowLoss {
  double loss;
  double sum;          // sum_c exp(row[c] - max), softmax's denominator
  float max;           // row[argmax]
  std::size_t argmax;  // the predicted token
};

RowLoss cross_entropy(const float* row, std::size_t V, int target) {
  RowLoss r;
  r.argmax = std::max_element(row, row + V) - row;
  r.max = row[r.argmax];
  r.sum = 0.0;
  for (std::size_t c = 0; c < V; ++c) r.sum += std::exp(double(row[c]) - r.max);
  r.loss = std::log(r.sum) - (double(row[target]) - r.max);
  return r;
}

void check_sequence(const AttentionOnlyModel& model, const std::vector<int>& inputs) {
  if (inputs.empty() || static_cast<int>(inputs.size()) > model.max_len()) {
    throw std::invalid_argument("AttentionOnlyModel: a sequence of " +
                                std::to_string(inputs.size()) + " tokens, expected 1 to " +
                                std::to_string(model.max_len()));
  }
  for (int id : inputs) {
    if (id < 0 || id >= model.vocab()) {
      throw std::invalid_argument("AttentionOnlyModel: token id " + std::to_string(id) +
                                  " outside [0, " + std::to_string(model.vocab()) + ")");
    }
  }
}

// x = embed[ids] + pos[0:T]: (T, d_model).
Tensor2 embed_sequence(const AttentionOnlyModel& model, const std::vector<int>& ids) {
  const std::size_t T = ids.size(), d = model.embed.shape(1);
  Tensor2 x = Tensor2::from_shape({T, d});
  for (std::size_t t = 0; t < T; ++t) {
    const float* e = &model.embed(static_cast<std::size_t>(ids[t]), 0);
    const float* p = &model.pos(t, 0);
    for (std::size_t c = 0; c < d; ++c) x(t, c) = e[c] + p[c];
  }
  return x;
}

}  // namespace

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
  check_sequence(*this, inputs);
  const Tensor2 x = embed_sequence(*this, inputs);                          // (T, d)
  const Tensor2 y = x + layer.forward(x, causal(inputs.size()));            // (T, d)
  return xt::linalg::dot(y, unembed);                                       // (T, V)
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
  check_sequence(model, ids);
  if (example.targets.size() != ids.size()) {
    throw std::invalid_argument("accumulate_gradients: " + std::to_string(ids.size()) +
                                " inputs but " + std::to_string(example.targets.size()) +
                                " targets");
  }
  const std::size_t T = ids.size(), V = model.embed.shape(0);
  const Tensor2 mask = causal(T);

  // forward, keeping what the backward needs
  const Tensor2 x = embed_sequence(model, ids);               // (T, d)
  const Tensor2 y = x + model.layer.forward(x, mask);         // (T, d)   lab 3
  Tensor2 d_logits = xt::linalg::dot(y, model.unembed);       // (T, V)   logits for now

  // cross-entropy, and its gradient softmax(logits) - onehot(target), in place
  double loss = 0.0;
  for (std::size_t t = 0; t < T; ++t) {
    float* row = &d_logits(t, 0);
    const int target = example.targets[t];
    if (target < 0) {
      std::fill(row, row + V, 0.0f);  // not scored: no gradient
      continue;
    }
    const RowLoss r = cross_entropy(row, V, target);
    loss += r.loss;
    if (scored) ++*scored;
    if (correct && r.argmax == static_cast<std::size_t>(target)) ++*correct;
    for (std::size_t c = 0; c < V; ++c) {
      row[c] = weight * static_cast<float>(std::exp(double(row[c]) - r.max) / r.sum);
    }
    row[target] -= weight;
  }

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
  const std::size_t d = x.shape(1);
  for (std::size_t t = 0; t < T; ++t) {
    float* de = &grads.embed(static_cast<std::size_t>(ids[t]), 0);
    float* dp = &grads.pos(t, 0);
    for (std::size_t c = 0; c < d; ++c) {
      const float dx = d_y(t, c) + g.dx(t, c);
      de[c] += dx;
      dp[c] += dx;
    }
  }
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

Evaluation evaluate_logits(const std::vector<Tensor2>& all_logits,
                           const std::vector<Example>& examples) {
  if (all_logits.size() != examples.size()) {
    throw std::invalid_argument("evaluate_logits: " + std::to_string(all_logits.size()) +
                                " logits for " + std::to_string(examples.size()) + " examples");
  }
  Evaluation e;
  std::size_t correct = 0;
  double loss = 0.0;
  for (std::size_t i = 0; i < examples.size(); ++i) {
    const Example& ex = examples[i];
    const Tensor2& logits = all_logits[i];  // (T, V)
    const std::size_t V = logits.shape(1);
    for (std::size_t t = 0; t < ex.inputs.size(); ++t) {
      const int target = ex.targets[t];
      if (target < 0) continue;
      const RowLoss r = cross_entropy(&logits(t, 0), V, target);
      loss += r.loss;
      ++e.scored;
      if (r.argmax == static_cast<std::size_t>(target)) ++correct;
    }
  }
  if (e.scored > 0) {
    e.loss = loss / e.scored;
    e.accuracy = double(correct) / e.scored;
  }
  return e;
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
