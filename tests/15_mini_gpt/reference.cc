#include "tests/15_mini_gpt/reference.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>

#include <xtensor/xbuilder.hpp>

#include "common/rng.h"
#include "tests/common/naive.h"

namespace mha {
namespace reference {
namespace {

template <class T>
D1 ToDouble1(const T& v) {
  D1 out = D1::from_shape({v.size()});
  std::copy(v.begin(), v.end(), out.begin());
  return out;
}

}  // namespace

Gpt FromModel(const MiniGpt& model) {
  Gpt r;
  r.max_len = model.max_len;
  r.embed = xt::cast<double>(model.embed);
  for (const TransformerBlock& b : model.blocks) r.blocks.push_back(FromBlock(b));
  r.lnf_gamma = ToDouble1(model.lnf_gamma);
  r.lnf_beta = ToDouble1(model.lnf_beta);
  return r;
}

D2 Logits(const Gpt& model, const std::vector<int>& tokens, std::vector<D3>* weights,
          std::vector<D3>* keys) {
  const std::size_t T = tokens.size(), d = model.embed.shape(1);
  D2 x = D2::from_shape({T, d});  // embed[tokens]
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t c = 0; c < d; ++c) x(t, c) = model.embed(tokens[t], c);
  }
  for (const Block& b : model.blocks) {
    if (keys) {
      const D2 k = naive::MatMulOf(LayerNorm(x, b.ln1_gamma, b.ln1_beta), b.W_K);
      keys->push_back(Rotate(naive::SplitHeadsOf(k, b.n_heads), 0, b.base));
    }
    D3 w;
    x = BlockForward(b, x, &w);
    if (weights) weights->push_back(w);
  }
  const D2 h = LayerNorm(x, model.lnf_gamma, model.lnf_beta);
  D2 logits = xt::zeros<double>({T, model.embed.shape(0)});  // h @ embed^T
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t v = 0; v < logits.shape(1); ++v)
      for (std::size_t c = 0; c < d; ++c) logits(t, v) += h(t, c) * model.embed(v, c);
  return logits;
}

double CrossEntropy(const D2& logits, const std::vector<int>& targets, D2* d_logits) {
  const std::size_t T = logits.shape(0), V = logits.shape(1);
  const double scored = static_cast<double>(
      std::count_if(targets.begin(), targets.end(), [](int y) { return y >= 0; }));
  if (d_logits) *d_logits = xt::zeros<double>({T, V});
  double loss = 0.0;
  for (std::size_t t = 0; t < T; ++t) {
    if (targets[t] < 0) continue;
    double max = -std::numeric_limits<double>::infinity(), sum = 0.0;
    for (std::size_t v = 0; v < V; ++v) max = std::max(max, logits(t, v));
    for (std::size_t v = 0; v < V; ++v) sum += std::exp(logits(t, v) - max);
    loss += max + std::log(sum) - logits(t, targets[t]);
    if (d_logits) {
      for (std::size_t v = 0; v < V; ++v) {
        const double p = std::exp(logits(t, v) - max) / sum;
        (*d_logits)(t, v) = (p - (int(v) == targets[t] ? 1.0 : 0.0)) / scored;
      }
    }
  }
  return loss / scored;
}

double Loss(const Gpt& model, const std::vector<int>& inputs, const std::vector<int>& targets) {
  return CrossEntropy(Logits(model, inputs), targets);
}

int SampleToken(const std::vector<double>& logits, double temperature, int top_k, double u,
                double* margin) {
  const int V = static_cast<int>(logits.size());
  std::vector<int> order(V);
  std::iota(order.begin(), order.end(), 0);
  // Larger logit first; among equal logits the lower id (a stable sort by value).
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
  if (temperature == 0.0) {
    if (margin) *margin = V > 1 ? logits[order[0]] - logits[order[1]] : 1.0;
    return order[0];
  }
  const int k = (top_k == 0 || top_k >= V) ? V : top_k;
  std::vector<int> kept(order.begin(), order.begin() + k);
  std::sort(kept.begin(), kept.end());
  double max = -std::numeric_limits<double>::infinity(), sum = 0.0;
  for (int id : kept) max = std::max(max, logits[id] / temperature);
  std::vector<double> p;
  for (int id : kept) sum += p.emplace_back(std::exp(logits[id] / temperature - max));
  double cumulative = 0.0, closest = 1.0;
  int chosen = kept.back();
  bool found = false;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    cumulative += p[i] / sum;
    closest = std::min(closest, std::abs(cumulative - u));
    if (!found && cumulative > u) chosen = kept[i], found = true;
  }
  if (margin) *margin = closest;
  return chosen;
}

std::vector<int> Generate(const Gpt& model, const std::vector<int>& prompt, int max_new_tokens,
                          double temperature, int top_k, int eos, std::uint64_t seed,
                          double* margin) {
  NumpyRng rng(seed);
  std::vector<int> tokens = prompt, out;
  double smallest = std::numeric_limits<double>::infinity();
  while (static_cast<int>(out.size()) < max_new_tokens &&
         static_cast<int>(tokens.size()) < model.max_len) {
    const D2 logits = Logits(model, tokens);
    std::vector<double> last(logits.shape(1));
    for (std::size_t v = 0; v < last.size(); ++v) last[v] = logits(tokens.size() - 1, v);
    double m = 0.0;
    const int token = SampleToken(last, temperature, top_k, rng.random(), &m);
    smallest = std::min(smallest, m);
    out.push_back(token);
    tokens.push_back(token);
    if (token == eos) break;
  }
  if (margin) *margin = smallest;
  return out;
}

std::vector<std::vector<double>> AdamWSteps(std::vector<double> theta,
                                            const std::vector<bool>& decayed,
                                            const std::vector<std::vector<double>>& grads,
                                            const std::vector<double>& lrs, double beta1,
                                            double beta2, double eps, double weight_decay) {
  std::vector<double> m(theta.size(), 0.0), v(theta.size(), 0.0);
  std::vector<std::vector<double>> after;
  for (std::size_t k = 0; k < grads.size(); ++k) {
    const double t = static_cast<double>(k + 1), lr = lrs[k];
    for (std::size_t i = 0; i < theta.size(); ++i) {
      const double g = grads[k][i];
      if (decayed[i]) theta[i] *= 1.0 - lr * weight_decay;
      m[i] = beta1 * m[i] + (1.0 - beta1) * g;
      v[i] = beta2 * v[i] + (1.0 - beta2) * g * g;
      const double m_hat = m[i] / (1.0 - std::pow(beta1, t));
      const double v_hat = v[i] / (1.0 - std::pow(beta2, t));
      theta[i] -= lr * m_hat / (std::sqrt(v_hat) + eps);
    }
    after.push_back(theta);
  }
  return after;
}

}  // namespace reference
}  // namespace mha
