#include "labs/10_attention_backward/order_task.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mha {
namespace training {

int order_classes(const OrderTaskConfig& c) {
  const std::string what = "order task: symbols=" + std::to_string(c.symbols) +
                           ", marks=" + std::to_string(c.marks) +
                           ", length=" + std::to_string(c.length);
  if (c.symbols < 2 || c.marks < 1 || c.marks >= c.length) {
    throw std::invalid_argument(what + "; expected symbols >= 2 and 1 <= marks < length");
  }
  long long n = 1;
  for (int i = 0; i < c.marks; ++i) {
    n *= c.symbols;
    if (n > 4096) throw std::invalid_argument(what + "; expected symbols^marks <= 4096");
  }
  return static_cast<int>(n);
}

Example order_example(const OrderTaskConfig& config, std::mt19937_64& gen) {
  const int T = config.length, K = config.symbols, M = config.marks;
  // mt19937_64 is the same on every platform; the modulo's bias is ~1e-18.
  auto draw = [&](int n) { return static_cast<int>(gen() % static_cast<std::uint64_t>(n)); };
  Example ex;
  ex.inputs.resize(T);
  for (int& t : ex.inputs) t = draw(K);
  // M distinct places among 0 .. T-2 (a partial shuffle), in order.
  std::vector<int> places(T - 1);
  for (int i = 0; i < T - 1; ++i) places[i] = i;
  for (int i = 0; i < M; ++i) std::swap(places[i], places[i + draw(T - 1 - i)]);
  places.resize(M);
  std::sort(places.begin(), places.end());
  int answer = 0;  // the marked symbols as digits in base K, first mark first
  for (int p : places) {
    answer = answer * K + ex.inputs[p];
    ex.inputs[p] += K;  // its marked form
  }
  ex.targets.assign(T, -1);
  for (int t = places.back() + 1; t < T; ++t) ex.targets[t] = answer;
  return ex;
}

std::vector<Example> order_examples(const OrderTaskConfig& config, int count,
                                    std::uint64_t seed) {
  return draw_examples(count, seed,
                       [&](std::mt19937_64& gen) { return order_example(config, gen); });
}

TrainResult train_order_model(const OrderTaskConfig& config, int n_heads) {
  const int vocab = std::max(2 * config.symbols, order_classes(config));
  return train_model(AttentionOnlyModel(vocab, config.length, config.d_model, n_heads, config.seed),
                     {config.steps, config.batch, config.learning_rate, config.seed},
                     [&](std::mt19937_64& gen) { return order_example(config, gen); },
                     order_examples(config, config.eval_examples, config.seed + 1000));
}

}  // namespace training
}  // namespace mha
