#include "tests/15_mini_gpt/short_run.h"

#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/rng.h"
#include "labs/15_mini_gpt/mini_gpt.h"
#include "labs/15_mini_gpt/mini_gpt_test_util.h"
#include "labs/15_mini_gpt/verb_grammar.h"
#include "tests/15_mini_gpt/reference.h"
#include "tests/common/seeded_weights.h"

namespace mha {
namespace short_run {
namespace {

constexpr int kVocab = 64, kMaxLen = 32;

struct Example {
  std::vector<int> inputs, targets;  // ids[:-1], ids[1:]: every position scored
};

std::vector<Example> Examples(const std::vector<grammar::Sentence>& sentences) {
  std::vector<Example> out;
  for (const grammar::Sentence& s : sentences) {
    out.push_back({std::vector<int>(s.ids.begin(), s.ids.end() - 1),
                   std::vector<int>(s.ids.begin() + 1, s.ids.end())});
  }
  return out;
}

// into += scale * g, tensor by tensor, in declaration order.
void AddScaled(GptGrads& into, const GptGrads& g, float scale) {
  std::vector<std::pair<float*, std::size_t>> out;
  testing::ForEachGradient(into, [&](const std::string&, auto& t) {
    out.emplace_back(t.data(), t.size());
  });
  std::size_t i = 0;
  testing::ForEachGradient(g, [&](const std::string& key, const auto& t) {
    if (i >= out.size() || out[i].second != t.size()) {
      throw std::runtime_error("gpt_loss_and_grads returned a gradient of " + key +
                               " shaped unlike the model's parameter");
    }
    for (std::size_t k = 0; k < t.size(); ++k) out[i].first[k] += scale * t.data()[k];
    ++i;
  });
}

// Over every predicted position of `data`: {the mean per position, the mean
// of each sentence's mean}, by the double reference.
std::pair<double, double> ReferenceLosses(const reference::Gpt& model,
                                          const std::vector<Example>& data) {
  double total = 0.0, sentence_means = 0.0;
  std::size_t positions = 0;
  for (const Example& e : data) {
    const double mean = reference::Loss(model, e.inputs, e.targets);
    total += mean * e.targets.size();
    positions += e.targets.size();
    sentence_means += mean;
  }
  return {total / positions, sentence_means / data.size()};
}

}  // namespace

Result Train(std::uint64_t seed, const Settings& s,
             const std::function<void(int, double)>& progress) {
  const grammar::Split split = grammar::split();
  const std::vector<Example> train = Examples(split.train), held_out = Examples(split.held_out);
  MiniGpt model(kVocab, kMaxLen, s.d_model, s.n_heads, s.d_ff, s.n_layers, seed);
  seeded::InstallMiniGpt(model, kVocab, kMaxLen, s.d_model, s.n_heads, s.d_ff, s.n_layers, seed,
                         10000.0);
  AdamW optimiser(model, AdamWConfig{0.9f, 0.95f, 1e-8f, 0.1f});
  NumpyRng draws(seed + 1);
  Result r;
  const auto start = std::chrono::steady_clock::now();
  for (int step = 1; step <= s.steps; ++step) {
    std::vector<std::size_t> picks;
    for (int b = 0; b < s.batch; ++b) picks.push_back(std::size_t(draws.random() * train.size()));
    GptGrads grads;
    double loss = 0.0;
    for (std::size_t i = 0; i < picks.size(); ++i) {
      const Example& e = train[picks[i]];
      GptLossAndGrads one = gpt_loss_and_grads(model, e.inputs, e.targets);
      loss += one.loss / s.batch;
      if (i == 0) {
        grads = std::move(one.grads);
        testing::ForEachGradient(grads, [&](const std::string&, auto& t) { t *= 1.0f / s.batch; });
      } else {
        AddScaled(grads, one.grads, 1.0f / s.batch);
      }
    }
    if (step == 1) {
      r.first_loss = loss;
      const reference::Gpt initial = reference::FromModel(model);
      for (std::size_t i : picks) {
        r.first_loss_reference += reference::Loss(initial, train[i].inputs, train[i].targets) / s.batch;
      }
    }
    clip_grad_norm(grads, s.max_norm);
    const double lr = learning_rate_at(step, s.max_lr, s.min_lr, s.warmup, s.steps);
    optimiser.step(model, grads, static_cast<float>(lr));
    if (progress) progress(step, loss);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const reference::Gpt trained = reference::FromModel(model);
  std::tie(r.train_loss, r.sentence_mean_loss) = ReferenceLosses(trained, train);
  r.held_out_loss = ReferenceLosses(trained, held_out).first;
  return r;
}

}  // namespace short_run
}  // namespace mha
