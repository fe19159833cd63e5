// Lab 13 reference solution: a stack of attention layers on a residual
// stream, its loss and gradients, and the composition scores of two layers.
//
// Everything heavy is delegated to earlier labs: each layer's forward is
// MultiHeadAttention::forward (lab 3) with causal_mask (lab 4), each layer's
// backward is mha_backward (lab 10). What is new here is the wiring: the
// residual adds, the cross-entropy, and the backward through the stack,
// where the gradient at each layer's input is the sum of the path around the
// layer and the path through it.
#include "labs/13_induction_heads/induction_heads.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "common/rng.h"
#include "labs/04_causal_mask/causal_mask.h"
#include "labs/10_attention_backward/attention_backward.h"

namespace mha {
namespace {

void check_tokens(const AttentionOnlyTransformer& model, const std::vector<int>& tokens,
                  const char* what) {
  const int T = static_cast<int>(tokens.size());
  if (T < 1 || T > model.max_len) {
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(T) +
                                " tokens, expected 1 <= T <= max_len=" +
                                std::to_string(model.max_len));
  }
  for (int t = 0; t < T; ++t) {
    if (tokens[t] < 0 || tokens[t] >= model.vocab) {
      throw std::invalid_argument(std::string(what) + ": token " + std::to_string(tokens[t]) +
                                  " at position " + std::to_string(t) + " outside [0, vocab=" +
                                  std::to_string(model.vocab) + ")");
    }
  }
}

// x_0 = embed[tokens] + pos[0:T]                                   (T, d_model)
Tensor2 embed_tokens(const AttentionOnlyTransformer& model, const std::vector<int>& tokens) {
  const std::size_t T = tokens.size(), d = static_cast<std::size_t>(model.d_model);
  Tensor2 x = Tensor2::from_shape({T, d});  // (T, d_model)
  for (std::size_t t = 0; t < T; ++t) {
    const float* e = &model.embed(static_cast<std::size_t>(tokens[t]), 0);
    const float* p = &model.pos(t, 0);
    for (std::size_t c = 0; c < d; ++c) x(t, c) = e[c] + p[c];
  }
  return x;
}

// The residual stream through every layer. Returns x_L; when `inputs` is
// given, it receives x_0 .. x_{L-1}, the input of each layer, which the
// backward needs.
Tensor2 residual_stream(const AttentionOnlyTransformer& model, const std::vector<int>& tokens,
                        const Tensor2& mask, std::vector<Tensor2>* inputs) {
  Tensor2 x = embed_tokens(model, tokens);  // (T, d_model)
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    if (inputs) inputs->push_back(x);
    // Each layer reads the whole stream and adds what it computed to it.
    x = x + model.layers[l].forward(x, mask);  // (T, d_model)
  }
  return x;
}

}  // namespace

AttentionOnlyTransformer::AttentionOnlyTransformer(int vocab_, int max_len_, int d_model_,
                                                   int n_heads_, int n_layers_,
                                                   std::uint64_t seed)
    : vocab(vocab_), max_len(max_len_), d_model(d_model_), n_heads(n_heads_),
      n_layers(n_layers_) {
  if (vocab < 1 || max_len < 1 || d_model < 1 || n_heads < 1 || n_layers < 1) {
    throw std::invalid_argument(
        "AttentionOnlyTransformer: vocab=" + std::to_string(vocab) + ", max_len=" +
        std::to_string(max_len) + ", d_model=" + std::to_string(d_model) + ", n_heads=" +
        std::to_string(n_heads) + ", n_layers=" + std::to_string(n_layers) +
        ": every size must be at least 1");
  }
  if (d_model % n_heads != 0) {
    throw std::invalid_argument("AttentionOnlyTransformer: d_model=" + std::to_string(d_model) +
                                " is not divisible by n_heads=" + std::to_string(n_heads));
  }
  NumpyRng rng(seed + 1);
  const auto V = static_cast<std::size_t>(vocab), d = static_cast<std::size_t>(d_model);
  embed = rng.normal_matrix(V, d, 1);                                // (vocab, d_model)
  pos = rng.normal_matrix(static_cast<std::size_t>(max_len), d, 1);  // (max_len, d_model)
  unembed = rng.normal_matrix(d, V, d);                              // (d_model, vocab)
  layers.reserve(static_cast<std::size_t>(n_layers));
  for (int l = 0; l < n_layers; ++l) {
    layers.emplace_back(d_model, n_heads, seed + 1000 * static_cast<std::uint64_t>(l));
  }
}

Tensor2 AttentionOnlyTransformer::logits(const std::vector<int>& tokens) const {
  check_tokens(*this, tokens, "AttentionOnlyTransformer::logits");
  const Tensor2 mask = causal_mask(static_cast<int>(tokens.size()));  // (T, T)
  return xt::linalg::dot(residual_stream(*this, tokens, mask, nullptr), unembed);  // (T, vocab)
}

std::vector<Tensor3> AttentionOnlyTransformer::attention_weights(
    const std::vector<int>& tokens) const {
  check_tokens(*this, tokens, "AttentionOnlyTransformer::attention_weights");
  const Tensor2 mask = causal_mask(static_cast<int>(tokens.size()));  // (T, T)
  std::vector<Tensor2> inputs;
  residual_stream(*this, tokens, mask, &inputs);
  std::vector<Tensor3> weights;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    weights.push_back(layers[l].attend(inputs[l], mask).weights);  // (n_heads, T, T)
  }
  return weights;
}

LossAndGrads loss_and_grads(const AttentionOnlyTransformer& model, const std::vector<int>& inputs,
                            const std::vector<int>& targets) {
  check_tokens(model, inputs, "loss_and_grads");
  if (targets.size() != inputs.size()) {
    throw std::invalid_argument("loss_and_grads: " + std::to_string(inputs.size()) +
                                " inputs but " + std::to_string(targets.size()) +
                                " targets, expected equal lengths");
  }
  std::size_t scored = 0;
  for (std::size_t t = 0; t < targets.size(); ++t) {
    if (targets[t] < -1 || targets[t] >= model.vocab) {
      throw std::invalid_argument("loss_and_grads: target " + std::to_string(targets[t]) +
                                  " at position " + std::to_string(t) +
                                  " outside [-1, vocab=" + std::to_string(model.vocab) + ")");
    }
    if (targets[t] >= 0) ++scored;
  }
  if (scored == 0) {
    throw std::invalid_argument(
        "loss_and_grads: every target is -1, expected at least one scored position");
  }
  const std::size_t T = inputs.size(), V = static_cast<std::size_t>(model.vocab);
  const Tensor2 mask = causal_mask(static_cast<int>(T));  // (T, T)

  // 1. Forward, keeping each layer's input x_l.
  std::vector<Tensor2> xs;
  const Tensor2 x_L = residual_stream(model, inputs, mask, &xs);  // (T, d_model)
  Tensor2 d_logits = xt::linalg::dot(x_L, model.unembed);         // (T, vocab), logits for now

  // 2. Cross-entropy at the scored positions, and its gradient
  //    (softmax - onehot) / scored, in place. Unscored rows pass nothing.
  LossAndGrads out;
  double loss = 0.0;
  const double inv_scored = 1.0 / static_cast<double>(scored);
  for (std::size_t t = 0; t < T; ++t) {
    float* row = &d_logits(t, 0);
    if (targets[t] < 0) {
      std::fill(row, row + V, 0.0f);
      continue;
    }
    const float max = *std::max_element(row, row + V);  // keeps exp from overflowing
    double sum = 0.0;
    for (std::size_t c = 0; c < V; ++c) sum += std::exp(double(row[c]) - max);
    loss += std::log(sum) - (double(row[targets[t]]) - max);
    for (std::size_t c = 0; c < V; ++c) {
      row[c] = static_cast<float>(std::exp(double(row[c]) - max) / sum * inv_scored);
    }
    row[targets[t]] -= static_cast<float>(inv_scored);
  }
  out.loss = loss * inv_scored;

  // 3. logits = x_L @ unembed.
  TransformerGrads& g = out.grads;
  g.d_unembed = xt::linalg::dot(xt::transpose(x_L), d_logits);       // (d_model, vocab)
  Tensor2 d_x = xt::linalg::dot(d_logits, xt::transpose(model.unembed));  // (T, d_model)

  // 4. Down the stack: x_{l+1} = x_l + layer(x_l). The gradient reaches x_l
  //    twice, around the layer (d_x itself) and through it (lab 10's dx).
  g.layers.resize(model.layers.size());
  for (std::size_t l = model.layers.size(); l-- > 0;) {
    const MhaGrads lg = mha_backward(model.layers[l], xs[l], mask, d_x);
    g.layers[l] = LayerGrads{lg.dW_Q, lg.dW_K, lg.dW_V, lg.dW_O};
    d_x = d_x + lg.dx;  // (T, d_model)
  }

  // 5. x_0 = embed[inputs] + pos[0:T]: row t of d_x goes to its token's row
  //    of embed (summed over repeats) and to row t of pos.
  g.d_embed = xt::zeros<float>(model.embed.shape());
  g.d_pos = xt::zeros<float>(model.pos.shape());
  const std::size_t d = static_cast<std::size_t>(model.d_model);
  for (std::size_t t = 0; t < T; ++t) {
    float* de = &g.d_embed(static_cast<std::size_t>(inputs[t]), 0);
    float* dp = &g.d_pos(t, 0);
    for (std::size_t c = 0; c < d; ++c) {
      de[c] += d_x(t, c);
      dp[c] += d_x(t, c);
    }
  }
  return out;
}

namespace {

// Head h's W_OV = W_V[:, h] W_O[h, :] and W_QK = W_Q[:, h] W_K[:, h]^T.
struct Circuits {
  Tensor2 ov, qk;  // (d_model, d_model) each
};

Circuits circuits_of(const MultiHeadAttention& layer, int h) {
  const auto lo = static_cast<std::size_t>(h * layer.d_head);
  const auto hi = lo + static_cast<std::size_t>(layer.d_head);
  const Tensor2 w_q = xt::view(layer.W_Q, xt::all(), xt::range(lo, hi));  // (d_model, d_head)
  const Tensor2 w_k = xt::view(layer.W_K, xt::all(), xt::range(lo, hi));  // (d_model, d_head)
  const Tensor2 w_v = xt::view(layer.W_V, xt::all(), xt::range(lo, hi));  // (d_model, d_head)
  const Tensor2 w_o = xt::view(layer.W_O, xt::range(lo, hi), xt::all());  // (d_head, d_model)
  return {xt::linalg::dot(w_v, w_o), xt::linalg::dot(w_q, xt::transpose(w_k))};
}

double frobenius(const Tensor2& m) {
  double s = 0.0;
  for (float v : m) s += double(v) * v;
  return std::sqrt(s);
}

// ||product||_F / (||a||_F ||b||_F), 0 when either factor is all zero.
float normalized(const Tensor2& product, double norm_a, double norm_b) {
  if (norm_a == 0.0 || norm_b == 0.0) return 0.0f;
  return static_cast<float>(frobenius(product) / (norm_a * norm_b));
}

}  // namespace

Composition composition_scores(const MultiHeadAttention& earlier,
                               const MultiHeadAttention& later) {
  if (earlier.d_model != later.d_model) {
    throw std::invalid_argument("composition_scores: earlier.d_model=" +
                                std::to_string(earlier.d_model) + " but later.d_model=" +
                                std::to_string(later.d_model) + ", expected equal widths");
  }
  const auto A = static_cast<std::size_t>(earlier.n_heads);
  const auto B = static_cast<std::size_t>(later.n_heads);
  std::vector<Circuits> a_heads, b_heads;
  for (std::size_t a = 0; a < A; ++a) a_heads.push_back(circuits_of(earlier, int(a)));
  for (std::size_t b = 0; b < B; ++b) b_heads.push_back(circuits_of(later, int(b)));

  Composition c{xt::zeros<float>({B, A}), xt::zeros<float>({B, A}), xt::zeros<float>({B, A})};
  for (std::size_t b = 0; b < B; ++b) {
    const Circuits& hb = b_heads[b];
    const double qk_b = frobenius(hb.qk), ov_b = frobenius(hb.ov);
    for (std::size_t a = 0; a < A; ++a) {
      const Circuits& ha = a_heads[a];
      const double ov_a = frobenius(ha.ov);
      // a writes x @ W_OV^a; b's queries read it through W_QK^b from the left...
      c.q(b, a) = normalized(xt::linalg::dot(ha.ov, hb.qk), ov_a, qk_b);
      // ...its keys from the right, x_i W_QK^b (z W_OV^a)^T...
      c.k(b, a) = normalized(xt::linalg::dot(hb.qk, xt::transpose(ha.ov)), qk_b, ov_a);
      // ...and its values through W_OV^b.
      c.v(b, a) = normalized(xt::linalg::dot(ha.ov, hb.ov), ov_a, ov_b);
    }
  }
  return c;
}

}  // namespace mha
