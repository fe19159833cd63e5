// train_mini_gpt's training loop and measurements: see training.h.
#include "labs/15_mini_gpt/training.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "common/core/vector_math.h"

namespace mha::gpt {
namespace {

using grammar::Category;
using grammar::Sentence;

// Every parameter gradient of g, as (first float, count): the dx fields are
// not parameters.
std::vector<std::pair<float*, std::size_t>> parameter_gradients(GptGrads& g) {
  std::vector<std::pair<float*, std::size_t>> out;
  auto add = [&out](auto& t) { out.emplace_back(t.data(), t.size()); };
  add(g.d_embed);
  for (BlockGrads& b : g.blocks) {
    for (Tensor1* v : {&b.dln1_gamma, &b.dln1_beta, &b.dln2_gamma, &b.dln2_beta, &b.db_1, &b.db_2})
      add(*v);
    for (Tensor2* m : {&b.dW_Q, &b.dW_K, &b.dW_V, &b.dW_O, &b.dW_1, &b.dW_2}) add(*m);
  }
  add(g.d_lnf_gamma);
  add(g.d_lnf_beta);
  return out;
}

std::vector<int> inputs_of(const Sentence& s) { return {s.ids.begin(), s.ids.end() - 1}; }

// The argmax of row t (the lowest id on ties).
int argmax_row(const Tensor2& logits, std::size_t t) {
  const float* row = &logits(t, 0);
  return static_cast<int>(std::max_element(row, row + logits.shape(1)) - row);
}

}  // namespace

std::vector<Example> examples(const std::vector<Sentence>& sentences, Score score) {
  std::vector<Example> out;
  for (const Sentence& s : sentences) {
    Example e{inputs_of(s), {s.ids.begin() + 1, s.ids.end()}};
    if (score == Score::kDecided) {
      std::vector<int> kept(e.targets.size(), -1);
      for (const grammar::Decision& d : grammar::decisions(s)) {
        kept[static_cast<std::size_t>(d.position)] = d.target;
      }
      e.targets = kept;
    }
    out.push_back(std::move(e));
  }
  return out;
}

GptGrads mean_gradients(const MiniGpt& model, const std::vector<const Example*>& batch,
                        double* loss) {
  GptGrads mean;
  *loss = 0.0;
  for (std::size_t b = 0; b < batch.size(); ++b) {
    const Example& e = *batch[b];
    GptLossAndGrads r = gpt_loss_and_grads(model, e.inputs, e.targets);  // your lab 15
    *loss += r.loss / static_cast<double>(batch.size());
    if (b == 0) {
      mean = std::move(r.grads);
      continue;
    }
    // mean += r.grads, tensor by tensor, several floats at a time (vector_math.h).
    const auto sum = parameter_gradients(mean), add = parameter_gradients(r.grads);
    for (std::size_t i = 0; i < std::max(sum.size(), add.size()); ++i) {
      if (i >= sum.size() || i >= add.size() || add[i].second != sum[i].second) {
        throw std::invalid_argument(
            "mean_gradients: gpt_loss_and_grads gave sentence " + std::to_string(b) +
            " gradients unlike sentence 0's (tensor " + std::to_string(i) + " of " +
            std::to_string(std::max(sum.size(), add.size())) + "): expected the model's shapes");
      }
      add_inplace(sum[i].first, add[i].first, sum[i].second);
    }
  }
  // Then divided by the batch's size (exactly what adding each one divided gives for a power of 2).
  for (const auto& [data, n] : parameter_gradients(mean)) {
    scale_inplace(data, 1.0f / static_cast<float>(batch.size()), n);
  }
  return mean;
}

void remove_attention(MiniGpt& model) {
  for (TransformerBlock& b : model.blocks) b.attn.W_O = xt::zeros<float>(b.attn.W_O.shape());
}

Trainer::Trainer(MiniGpt& model, const std::vector<Example>& train, const Settings& settings)
    : model_(&model), train_(&train), settings_(settings), optimizer_(model),
      draws_(settings.seed + 1) {
  if (train.empty()) throw std::invalid_argument("Trainer: no training examples");
  if (!settings.attention) remove_attention(model);
}

StepReport Trainer::step() {
  ++done_;
  const std::size_t n = train_->size();
  while (queue_.size() < static_cast<std::size_t>(settings_.batch)) {
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    for (std::size_t i = n - 1; i > 0; --i) {
      std::swap(order[i], order[static_cast<std::size_t>(draws_.random() * double(i + 1))]);
    }
    queue_.insert(queue_.end(), order.begin(), order.end());
  }
  std::vector<const Example*> batch;
  for (int b = 0; b < settings_.batch; ++b) batch.push_back(&(*train_)[queue_[std::size_t(b)]]);
  double loss = 0.0;
  GptGrads mean = mean_gradients(*model_, batch, &loss);
  queue_.erase(queue_.begin(), queue_.begin() + settings_.batch);
  if (!settings_.attention) {
    // W_O stays 0: with no gradient, AdamW leaves it (its decay of 0 is 0).
    for (BlockGrads& b : mean.blocks) b.dW_O.fill(0.0f);
  }
  const double norm = clip_grad_norm(mean, settings_.clip);
  const double lr = learning_rate_at(done_, settings_.max_lr, settings_.min_lr,
                                     settings_.warmup, settings_.steps);
  optimizer_.step(*model_, mean, static_cast<float>(lr));
  return {done_, loss, lr, norm};
}

double mean_loss(const MiniGpt& model, const std::vector<Example>& data) {
  double sum = 0.0;
  for (const Example& e : data) sum += cross_entropy(model.logits(e.inputs), e.targets);
  return sum / static_cast<double>(data.size());
}

double Accuracy::fraction(Category c) const {
  const auto i = static_cast<std::size_t>(c);
  return total[i] ? double(right[i]) / double(total[i]) : std::numeric_limits<double>::quiet_NaN();
}

Accuracy accuracy(const MiniGpt& model, const std::vector<Sentence>& sentences) {
  Accuracy a;
  for (const Sentence& s : sentences) {
    const Tensor2 logits = model.logits(inputs_of(s));  // (T, vocab)
    for (const grammar::Decision& d : grammar::decisions(s)) {
      const auto c = static_cast<std::size_t>(d.category);
      a.right[c] += argmax_row(logits, static_cast<std::size_t>(d.position)) == d.target;
      ++a.total[c];
    }
  }
  return a;
}

std::array<long, 2> s_slot_accuracy(const MiniGpt& model, const std::vector<Sentence>& sentences) {
  std::array<long, 2> counts{0, 0};
  const int s_id = grammar::id("s");
  for (const Sentence& s : sentences) {
    const std::vector<grammar::Decision> ds = grammar::decisions(s);
    if (std::none_of(ds.begin(), ds.end(), [&](const auto& d) { return d.target == s_id; })) {
      continue;
    }
    const Tensor2 logits = model.logits(inputs_of(s));
    for (const grammar::Decision& d : ds) {
      if (d.target != s_id) continue;
      counts[0] += argmax_row(logits, static_cast<std::size_t>(d.position)) == s_id;
      ++counts[1];
    }
  }
  return counts;
}

Accuracy ngram_accuracy(int n, const std::vector<Sentence>& train,
                        const std::vector<Sentence>& sentences) {
  if (n < 1) throw std::invalid_argument("ngram_accuracy: n=" + std::to_string(n) + " < 1");
  // context (up to n - 1 tokens) -> next token -> count
  std::map<std::vector<int>, std::map<int, long>> counts;
  for (const Sentence& s : train) {
    for (std::size_t t = 0; t + 1 < s.ids.size(); ++t) {
      for (std::size_t k = 0; k < static_cast<std::size_t>(n) && k <= t + 1; ++k) {
        ++counts[std::vector<int>(s.ids.begin() + (t + 1 - k), s.ids.begin() + t + 1)]
                [s.ids[t + 1]];
      }
    }
  }
  Accuracy a;
  for (const Sentence& s : sentences) {
    for (const grammar::Decision& d : grammar::decisions(s)) {
      const auto t = static_cast<std::size_t>(d.position);
      int guess = -1;
      // The longest context seen in training wins; the empty one always was.
      for (std::size_t k = std::min<std::size_t>(n - 1, t + 1);; --k) {
        const auto it = counts.find(std::vector<int>(s.ids.begin() + (t + 1 - k),
                                                     s.ids.begin() + t + 1));
        if (it != counts.end()) {
          long best = -1;
          for (const auto& [token, c] : it->second) {  // in increasing id: ties to the lowest
            if (c > best) best = c, guess = token;
          }
          break;
        }
        if (k == 0) break;
      }
      const auto c = static_cast<std::size_t>(d.category);
      a.right[c] += guess == d.target;
      ++a.total[c];
    }
  }
  return a;
}

std::vector<Translation> translations(const MiniGpt& model, const std::vector<Sentence>& sentences) {
  std::vector<Translation> out;
  const int slash = grammar::id("/"), eos = grammar::id("<eos>");
  for (const Sentence& s : sentences) {
    const auto at = std::find(s.ids.begin(), s.ids.end(), slash) + 1;
    Translation t{{s.ids.begin(), at}, {at, s.ids.end()}, {}, false};
    const int room = model.max_len - static_cast<int>(t.prompt.size());
    t.got = generate(model, t.prompt, room, Sampling{0.0f, 0}, eos, 0);  // your lab 15
    t.exact = t.got == t.expected;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace mha::gpt
