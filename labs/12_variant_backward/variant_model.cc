#include "labs/12_variant_backward/variant_model.h"

#include <algorithm>
#include <ctime>
#include <numeric>
#include <stdexcept>
#include <string>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xmanipulation.hpp>

#include "common/rng.h"

namespace mha {
namespace variants {
namespace {

using training::causal;
using training::embed_sequence;

void check_sequence(const VariantModel& model, const std::vector<int>& inputs) {
  training::check_sequence("VariantModel", inputs, model.vocab(), model.max_len());
}

Tensor2 layer_forward(const VariantModel& m, const Tensor2& x, const Tensor2& mask) {
  return m.gqa ? m.gqa->forward(x, mask) : m.mla->forward(x, mask);  // labs 5, 6
}

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

}  // namespace

VariantModel::VariantModel(const Variant& variant, int vocab, int max_len, int d_model,
                           int n_heads, std::uint64_t seed) {
  if (vocab <= 0 || max_len <= 0) {
    throw std::invalid_argument("VariantModel: vocab=" + std::to_string(vocab) +
                                " and max_len=" + std::to_string(max_len) + " must be positive");
  }
  if (variant.kv_rank > 0) {
    mla.emplace(d_model, n_heads, variant.kv_rank, seed);
  } else {
    gqa.emplace(d_model, n_heads, variant.n_kv_heads, seed);
  }
  NumpyRng rng(seed + 1);
  const std::size_t V = static_cast<std::size_t>(vocab), d = static_cast<std::size_t>(d_model);
  embed = rng.normal_matrix(V, d, 1);
  pos = rng.normal_matrix(static_cast<std::size_t>(max_len), d, 1);
  unembed = rng.normal_matrix(d, V, d);
}

std::size_t VariantModel::parameter_count() const {
  return embed.size() + pos.size() + unembed.size() +
         (gqa ? gqa->parameter_count() : mla->parameter_count());
}

std::size_t VariantModel::kv_cache_floats_per_token() const {
  return gqa ? gqa->kv_cache_floats_per_token() : mla->kv_cache_floats_per_token();
}

Tensor2 VariantModel::logits(const std::vector<int>& inputs) const {
  check_sequence(*this, inputs);
  const Tensor2 x = embed_sequence(embed, pos, inputs);                   // (T, d)
  const Tensor2 y = x + layer_forward(*this, x, causal(inputs.size()));   // (T, d)
  return xt::linalg::dot(y, unembed);                                     // (T, V)
}

// The layer's weights in the order of its gradient struct.
static std::vector<Tensor2*> layer_weights(VariantModel& m) {
  if (m.gqa) return {&m.gqa->W_Q, &m.gqa->W_K, &m.gqa->W_V, &m.gqa->W_O};
  return {&m.mla->W_Q, &m.mla->W_DKV, &m.mla->W_UK, &m.mla->W_UV, &m.mla->W_O};
}

VariantGrads::VariantGrads(const VariantModel& model) {
  VariantModel& m = const_cast<VariantModel&>(model);
  tensors.push_back(xt::zeros<float>(m.embed.shape()));
  tensors.push_back(xt::zeros<float>(m.pos.shape()));
  for (Tensor2* w : layer_weights(m)) tensors.push_back(xt::zeros<float>(w->shape()));
  tensors.push_back(xt::zeros<float>(m.unembed.shape()));
}

void VariantGrads::zero() {
  for (Tensor2& t : tensors) t.fill(0.0f);
}

std::vector<Param> parameters(VariantModel& model, const VariantGrads& grads) {
  std::vector<Tensor2*> all = {&model.embed, &model.pos};
  for (Tensor2* w : layer_weights(model)) all.push_back(w);
  all.push_back(&model.unembed);
  std::vector<Param> out;
  for (std::size_t i = 0; i < all.size(); ++i) out.push_back(param(*all[i], grads.tensors[i]));
  return out;
}

double accumulate_gradients(const VariantModel& model, const Example& example, float weight,
                            VariantGrads& grads, std::size_t* scored) {
  const std::vector<int>& ids = example.inputs;
  check_sequence(model, ids);
  const Tensor2 mask = causal(ids.size());  // (T, T)

  // forward, keeping what the backward needs
  const Tensor2 x = embed_sequence(model.embed, model.pos, ids);  // (T, d)
  const Tensor2 y = x + layer_forward(model, x, mask);         // (T, d)
  Tensor2 d_logits = xt::linalg::dot(y, model.unembed);        // (T, V): logits for now

  // cross-entropy and its gradient softmax(logits) - onehot(target), in place
  const double loss =
      training::cross_entropy_backward(d_logits, example.targets, weight, scored, nullptr);

  // logits = y @ unembed
  grads.tensors.back() += xt::linalg::dot(xt::transpose(y), d_logits);            // (d, V)
  const Tensor2 d_y = xt::linalg::dot(d_logits, xt::transpose(model.unembed));  // (T, d)
  // y = x + layer(x): the residual passes d_y through, the layer adds its part (lab 12)
  Tensor2 dx;
  if (model.gqa) {
    GqaGrads g = gqa_backward(*model.gqa, x, mask, d_y);
    grads.tensors[2] += g.dW_Q;
    grads.tensors[3] += g.dW_K;
    grads.tensors[4] += g.dW_V;
    grads.tensors[5] += g.dW_O;
    dx = std::move(g.dx);
  } else {
    MlaGrads g = mla_backward(*model.mla, x, mask, d_y);
    grads.tensors[2] += g.dW_Q;
    grads.tensors[3] += g.dW_DKV;
    grads.tensors[4] += g.dW_UK;
    grads.tensors[5] += g.dW_UV;
    grads.tensors[6] += g.dW_O;
    dx = std::move(g.dx);
  }
  // x = embed[ids] + pos: each row of the total dx goes to its token and position
  training::embedding_backward(ids, d_y, dx, grads.tensors[0], grads.tensors[1]);
  return loss;
}

Evaluation evaluate(const VariantModel& model, const std::vector<Example>& examples) {
  std::vector<Tensor2> logits;
  logits.reserve(examples.size());
  for (const Example& ex : examples) logits.push_back(model.logits(ex.inputs));  // (T, V) each
  return training::evaluate_logits(logits, examples);
}

// ---------------------------------------------------------------- the task

int recall_vocab(const RecallConfig& c) { return c.n_keys * c.n_values + c.n_keys; }
int recall_length(const RecallConfig& c) { return c.n_pairs + c.n_queries; }

Example recall_example(const RecallConfig& c, std::mt19937_64& gen) {
  // n_pairs distinct keys: the first n_pairs of a shuffle (Fisher-Yates, by hand,
  // so that every standard library draws the same sequences).
  std::vector<int> keys(c.n_keys);
  std::iota(keys.begin(), keys.end(), 0);
  for (int i = 0; i < c.n_pairs; ++i) {
    const int j = i + static_cast<int>(gen() % static_cast<std::uint64_t>(c.n_keys - i));
    std::swap(keys[i], keys[j]);
  }
  Example ex;
  std::vector<int> value_of(c.n_keys, -1);
  for (int i = 0; i < c.n_pairs; ++i) {
    const int v = static_cast<int>(gen() % static_cast<std::uint64_t>(c.n_values));
    value_of[keys[i]] = v;
    ex.inputs.push_back(keys[i] * c.n_values + v);
    ex.targets.push_back(-1);
  }
  for (int q = 0; q < c.n_queries; ++q) {
    const int k = keys[gen() % static_cast<std::uint64_t>(c.n_pairs)];
    ex.inputs.push_back(c.n_keys * c.n_values + k);
    ex.targets.push_back(value_of[k]);
  }
  return ex;
}

std::vector<Example> recall_examples(const RecallConfig& c, int count, std::uint64_t seed) {
  return training::draw_examples(count, seed,
                                 [&](std::mt19937_64& gen) { return recall_example(c, gen); });
}

TrainResult train_recall_model(const RecallConfig& c, const Variant& variant, int every,
                               void (*progress)(int step, double loss)) {
  VariantModel model(variant, recall_vocab(c), recall_length(c), c.d_model, c.n_heads, c.seed);
  TrainResult r;
  r.parameters = model.parameter_count();
  r.cache_floats = model.kv_cache_floats_per_token();
  VariantGrads grads(model);
  Adam adam(c.learning_rate);
  std::mt19937_64 data(c.seed);  // the same batches for every variant
  const float weight = 1.0f / static_cast<float>(c.batch * c.n_queries);
  const double start = cpu_seconds();
  for (int step = 0; step < c.steps; ++step) {
    grads.zero();
    double loss = 0.0;
    std::size_t scored = 0;
    for (int b = 0; b < c.batch; ++b) {
      loss += accumulate_gradients(model, recall_example(c, data), weight, grads, &scored);
    }
    r.loss_curve.push_back(loss / static_cast<double>(scored));
    adam.set_learning_rate(training::cosine_learning_rate(c.learning_rate, step, c.steps));
    adam.step(parameters(model, grads));
    if (progress && every > 0 && (step + 1) % every == 0) progress(step + 1, r.loss_curve.back());
  }
  r.seconds = cpu_seconds() - start;
  r.eval = evaluate(model, recall_examples(c, c.eval_examples, c.seed + 1000));
  return r;
}

}  // namespace variants
}  // namespace mha
