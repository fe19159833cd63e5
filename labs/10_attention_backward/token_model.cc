#include "labs/10_attention_backward/token_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace mha {
namespace training {
namespace {

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

}  // namespace

float cosine_learning_rate(float base, int step, int steps) {
  const double progress = static_cast<double>(step) / steps;
  return static_cast<float>(base * 0.5 * (1.0 + std::cos(M_PI * progress)));
}

std::vector<Example> draw_examples(int count, std::uint64_t seed,
                                   const std::function<Example(std::mt19937_64&)>& draw) {
  std::mt19937_64 gen(seed);
  std::vector<Example> out;
  for (int i = 0; i < count; ++i) out.push_back(draw(gen));
  return out;
}

Tensor2 causal(std::size_t T) {
  Tensor2 mask = xt::zeros<float>({T, T});
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = i + 1; j < T; ++j) mask(i, j) = -std::numeric_limits<float>::infinity();
  return mask;
}

void check_sequence(const char* model, const std::vector<int>& inputs, int vocab, int max_len) {
  if (inputs.empty() || static_cast<int>(inputs.size()) > max_len) {
    throw std::invalid_argument(std::string(model) + ": a sequence of " +
                                std::to_string(inputs.size()) + " tokens, expected 1 to " +
                                std::to_string(max_len));
  }
  for (int id : inputs) {
    if (id < 0 || id >= vocab) {
      throw std::invalid_argument(std::string(model) + ": token id " + std::to_string(id) +
                                  " outside [0, " + std::to_string(vocab) + ")");
    }
  }
}

Tensor2 embed_sequence(const Tensor2& embed, const Tensor2& pos, const std::vector<int>& ids) {
  const std::size_t T = ids.size(), d = embed.shape(1);
  Tensor2 x = Tensor2::from_shape({T, d});
  for (std::size_t t = 0; t < T; ++t) {
    const float* e = &embed(static_cast<std::size_t>(ids[t]), 0);
    const float* p = &pos(t, 0);
    for (std::size_t c = 0; c < d; ++c) x(t, c) = e[c] + p[c];
  }
  return x;
}

double cross_entropy_backward(Tensor2& logits, const std::vector<int>& targets, float weight,
                              std::size_t* scored, std::size_t* correct) {
  const std::size_t T = logits.shape(0), V = logits.shape(1);
  double loss = 0.0;
  for (std::size_t t = 0; t < T; ++t) {
    float* row = &logits(t, 0);
    const int target = targets[t];
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
  return loss;
}

void embedding_backward(const std::vector<int>& ids, const Tensor2& d_residual,
                        const Tensor2& d_layer, Tensor2& d_embed, Tensor2& d_pos) {
  const std::size_t T = ids.size(), d = d_residual.shape(1);
  for (std::size_t t = 0; t < T; ++t) {
    float* de = &d_embed(static_cast<std::size_t>(ids[t]), 0);
    float* dp = &d_pos(t, 0);
    for (std::size_t c = 0; c < d; ++c) {
      const float dx = d_residual(t, c) + d_layer(t, c);
      de[c] += dx;
      dp[c] += dx;
    }
  }
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

}  // namespace training
}  // namespace mha
