#include "labs/10_attention_backward/copy_task.h"

#include <chrono>

#include "common/programs/optimizer.h"

namespace mha {
namespace training {

Example copy_example(const CopyTaskConfig& config, std::mt19937_64& gen) {
  const int L = config.length;
  // mt19937_64 is the same on every platform; the modulo's bias is ~1e-18.
  std::vector<int> s(L);
  for (int& t : s) t = static_cast<int>(gen() % static_cast<std::uint64_t>(config.alphabet));
  Example ex;
  ex.inputs = s;
  ex.inputs.push_back(config.alphabet);  // the separator
  ex.inputs.insert(ex.inputs.end(), s.begin(), s.end() - 1);
  ex.targets.assign(L, -1);
  ex.targets.insert(ex.targets.end(), s.begin(), s.end());
  return ex;
}

std::vector<Example> copy_examples(const CopyTaskConfig& config, int count, std::uint64_t seed) {
  return draw_examples(count, seed, [&](std::mt19937_64& gen) { return copy_example(config, gen); });
}

TrainResult train_model(AttentionOnlyModel model, const Schedule& schedule,
                        const std::function<Example(std::mt19937_64&)>& draw,
                        std::vector<Example> held_out) {
  TrainResult r{std::move(model), {}, std::move(held_out), {}, 0.0};
  ModelGrads grads(r.model);
  Adam adam(schedule.learning_rate);
  std::mt19937_64 data(schedule.seed);  // the same batches whatever n_heads is
  std::vector<Example> batch(static_cast<std::size_t>(schedule.batch));
  const auto start = std::chrono::steady_clock::now();
  for (int step = 0; step < schedule.steps; ++step) {
    std::size_t to_score = 0;
    for (Example& ex : batch) {
      ex = draw(data);
      for (int t : ex.targets) to_score += t >= 0;
    }
    grads.zero();
    double loss = 0.0;
    std::size_t scored = 0;
    const float weight = 1.0f / static_cast<float>(to_score);
    for (const Example& ex : batch) {
      loss += accumulate_gradients(r.model, ex, weight, grads, &scored, nullptr);
    }
    r.loss_curve.push_back(loss / static_cast<double>(scored));
    adam.set_learning_rate(cosine_learning_rate(schedule.learning_rate, step, schedule.steps));
    adam.step(parameters(r.model, grads));
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.eval = evaluate(r.model, r.held_out);
  return r;
}

TrainResult train_copy_model(const CopyTaskConfig& config, int n_heads) {
  return train_model(
      AttentionOnlyModel(config.alphabet + 1, 2 * config.length, config.d_model, n_heads,
                         config.seed),
      {config.steps, config.batch, config.learning_rate, config.seed},
      [&](std::mt19937_64& gen) { return copy_example(config, gen); },
      copy_examples(config, config.eval_examples, config.seed + 1000));
}

}  // namespace training
}  // namespace mha
