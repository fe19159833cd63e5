// Lab 15 reference solution. Each block is lab 14's (forward, block_backward); what is
// new surrounds the blocks, each forward beside its backward (the output layer is TIED
// to the embedding: one matrix used twice, so its gradient has two parts):
//   embedding      x_0 = embed[tokens]     <->  scatter-add dx_0 into embed's rows
//   output layer   logits = h @ embed^T    <->  d_embed += d_logits^T h,  dh = d_logits @ embed
//   loss           mean cross-entropy      <->  (softmax - onehot) / n_scored
// then the optimiser (global-norm clipping, warm-up then cosine, AdamW with decay on
// matrices only), sampling, and generation through lab 11's RotaryDecoder per block.
#include "labs/15_mini_gpt/mini_gpt.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "common/core/matrix_ref.h"
#include "common/core/shape_string.h"
#include "common/rng.h"

namespace mha {
namespace {

constexpr float kLayerNormEps = 1e-5f;  // layer_norm's default, as in lab 14's block

// Bad arguments: std::invalid_argument naming the values.
void throw_if(bool bad, const std::string& message) {
  if (bad) throw std::invalid_argument(message);
}

void check_tokens(const MiniGpt& model, const std::vector<int>& tokens, const std::string& who) {
  const std::size_t T = tokens.size();
  throw_if(T < 1 || T > static_cast<std::size_t>(model.max_len),
           who + ": " + std::to_string(T) +
               " tokens, expected 1 <= T <= max_len=" + std::to_string(model.max_len));
  for (std::size_t t = 0; t < T; ++t) {
    if (tokens[t] < 0 || tokens[t] >= model.vocab) {
      throw std::invalid_argument(who + ": token " + std::to_string(tokens[t]) + " at position " +
                                  std::to_string(t) + " outside [0, vocab=" +
                                  std::to_string(model.vocab) + ")");
    }
  }
}

// ------------------------------------------------- embedding: forward, backward

// x_0 = embed[tokens]: row t is the row of token tokens[t].       (T, d_model)
Tensor2 embed_forward(const Tensor2& embed, const std::vector<int>& tokens) {
  Tensor2 x = Tensor2::from_shape({tokens.size(), embed.shape(1)});  // (T, d_model)
  for (std::size_t t = 0; t < tokens.size(); ++t) xt::row(x, t) = xt::row(embed, tokens[t]);
  return x;
}

// The backward of a gather is a scatter-ADD: a token that occurs twice
// receives both positions' gradients (assigning would keep only the last).
void embed_backward(const std::vector<int>& tokens, const Tensor2& dx, Tensor2& d_embed) {
  const std::size_t d = dx.shape(1);
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    float* row = &d_embed(static_cast<std::size_t>(tokens[t]), 0);
    const float* g = &dx(t, 0);
    for (std::size_t c = 0; c < d; ++c) row[c] += g[c];
  }
}

// ---------------------------------------------- tied output layer: forward, backward

// logits = h @ embed^T: the score of token v is the dot product of h with
// token v's own embedding row.                                     (T, vocab)
Tensor2 output_forward(const Tensor2& embed, const Tensor2& h) {
  Tensor2 logits = Tensor2::from_shape({h.shape(0), embed.shape(0)});  // (T, vocab)
  gemm(whole(h), false, whole(embed), /*transpose_b=*/true, whole(logits));
  return logits;
}

// d_embed  = d_logits^T @ h    (vocab, d_model): the output layer's part of the tied gradient
// returns dh = d_logits @ embed (T, d_model)
Tensor2 output_backward(const Tensor2& embed, const Tensor2& h, const Tensor2& d_logits,
                        Tensor2& d_embed) {
  gemm(whole(d_logits), /*transpose_a=*/true, whole(h), false, whole(d_embed));
  Tensor2 dh = Tensor2::from_shape({h.shape(0), h.shape(1)});  // (T, d_model)
  gemm(whole(d_logits), false, whole(embed), false, whole(dh));
  return dh;
}

// --------------------------------------------------------------- the stack

struct Forward {  // what the forward pass keeps for the backward
  std::vector<Tensor2> block_inputs;  // x_0 .. x_{L-1}, (T, d_model) each
  Tensor2 x_last, h;                  // x_L and layer_norm(x_L), (T, d_model) each
};

Forward forward(const MiniGpt& model, const std::vector<int>& tokens) {
  Forward f;
  Tensor2 x = embed_forward(model.embed, tokens);  // (T, d_model), no position vector: RoPE
  for (const TransformerBlock& block : model.blocks) {
    f.block_inputs.push_back(x);
    x = block.forward(x);  // (T, d_model)
  }
  f.h = layer_norm(x, model.lnf_gamma, model.lnf_beta);  // (T, d_model)
  f.x_last = std::move(x);
  return f;
}

// ------------------------------------------------------ parameters, by name

// One tensor seen flat: each weight, gradient and AdamW moment, in the header's order.
struct Flat {
  std::string name;  // "embed", "blocks.0.attn.W_Q", ...
  float* data;       // written by clipping and AdamW only, on tensors they own
  std::vector<std::size_t> shape;
  bool decayed;  // a matrix: AdamW decays it; gammas, betas and biases it never does
};

template <class T>
Flat flat(const std::string& name, const T& tensor, bool decayed) {
  return {name, const_cast<float*>(tensor.data()), {tensor.shape().begin(), tensor.shape().end()},
          decayed};
}

std::size_t elements(const Flat& f) {
  return std::accumulate(f.shape.begin(), f.shape.end(), std::size_t{1}, std::multiplies<>());
}

// One block's twelve tensors, weights or their gradients alike, in order.
void add_block(std::vector<Flat>& p, std::size_t l, const Tensor1& ln1_gamma,
               const Tensor1& ln1_beta, const Tensor2& W_Q, const Tensor2& W_K, const Tensor2& W_V,
               const Tensor2& W_O, const Tensor1& ln2_gamma, const Tensor1& ln2_beta,
               const Tensor2& W_1, const Tensor1& b_1, const Tensor2& W_2, const Tensor1& b_2) {
  const std::string at = "blocks." + std::to_string(l) + ".";
  p.insert(p.end(), {flat(at + "ln1_gamma", ln1_gamma, false),
                     flat(at + "ln1_beta", ln1_beta, false), flat(at + "attn.W_Q", W_Q, true),
                     flat(at + "attn.W_K", W_K, true), flat(at + "attn.W_V", W_V, true),
                     flat(at + "attn.W_O", W_O, true), flat(at + "ln2_gamma", ln2_gamma, false),
                     flat(at + "ln2_beta", ln2_beta, false), flat(at + "ffn.W_1", W_1, true),
                     flat(at + "ffn.b_1", b_1, false), flat(at + "ffn.W_2", W_2, true),
                     flat(at + "ffn.b_2", b_2, false)});
}

std::vector<Flat> parameters(const MiniGpt& m) {
  std::vector<Flat> p = {flat("embed", m.embed, true)};
  for (std::size_t l = 0; l < m.blocks.size(); ++l) {
    const TransformerBlock& b = m.blocks[l];
    add_block(p, l, b.ln1_gamma, b.ln1_beta, b.attn.W_Q, b.attn.W_K, b.attn.W_V, b.attn.W_O,
              b.ln2_gamma, b.ln2_beta, b.ffn.W_1, b.ffn.b_1, b.ffn.W_2, b.ffn.b_2);
  }
  p.insert(p.end(), {flat("lnf_gamma", m.lnf_gamma, false), flat("lnf_beta", m.lnf_beta, false)});
  return p;
}

// The parameter gradients of `g`, in the same order (the dx fields, not parameters, left out).
std::vector<Flat> gradients(const GptGrads& g) {
  std::vector<Flat> p = {flat("embed", g.d_embed, true)};
  for (std::size_t l = 0; l < g.blocks.size(); ++l) {
    const BlockGrads& b = g.blocks[l];
    add_block(p, l, b.dln1_gamma, b.dln1_beta, b.dW_Q, b.dW_K, b.dW_V, b.dW_O, b.dln2_gamma,
              b.dln2_beta, b.dW_1, b.db_1, b.dW_2, b.db_2);
  }
  p.insert(p.end(),
           {flat("lnf_gamma", g.d_lnf_gamma, false), flat("lnf_beta", g.d_lnf_beta, false)});
  return p;
}

// Zeros shaped like every parameter (dx left empty): AdamW's moments at the start.
GptGrads zeros_like(const MiniGpt& m) {
  GptGrads z{m.embed, {}, m.lnf_gamma, m.lnf_beta};  // copies, for their shapes
  for (const TransformerBlock& b : m.blocks) {
    z.blocks.push_back({b.ln1_gamma, b.ln1_beta, b.attn.W_Q, b.attn.W_K, b.attn.W_V, b.attn.W_O,
                        b.ln2_gamma, b.ln2_beta, b.ffn.W_1, b.ffn.b_1, b.ffn.W_2, b.ffn.b_2, {}});
  }
  for (const Flat& f : gradients(z)) std::fill(f.data, f.data + elements(f), 0.0f);
  return z;
}

// Throws, naming the first tensor of `got` whose name or shape differs from `want`'s.
void check_same_shapes(const std::vector<Flat>& want, const std::vector<Flat>& got,
                       const std::string& what) {
  throw_if(got.size() != want.size(), "AdamW::step: " + what + " has " +
                                          std::to_string(got.size()) + " tensors, the model " +
                                          std::to_string(want.size()));
  for (std::size_t i = 0; i < want.size(); ++i) {
    throw_if(got[i].shape != want[i].shape, "AdamW::step: " + what + "'s " + got[i].name +
                                                " is " + shape_string(got[i].shape) +
                                                ", the model's " + shape_string(want[i].shape));
  }
}

}  // namespace

// ===================================================================== MiniGpt

MiniGpt::MiniGpt(int vocab_, int max_len_, int d_model_, int n_heads_, int d_ff_, int n_layers_,
                 std::uint64_t seed, double base_)
    : vocab(vocab_), max_len(max_len_), d_model(d_model_), n_heads(n_heads_), d_ff(d_ff_),
      n_layers(n_layers_), base(base_) {
  throw_if(vocab < 1 || max_len < 1 || d_model < 1 || n_heads < 1 || d_ff < 1 || n_layers < 1,
           "MiniGpt: vocab=" + std::to_string(vocab) + ", max_len=" + std::to_string(max_len) +
               ", d_model=" + std::to_string(d_model) + ", n_heads=" + std::to_string(n_heads) +
               ", d_ff=" + std::to_string(d_ff) + ", n_layers=" + std::to_string(n_layers) +
               ": every size must be at least 1");
  throw_if(d_model % n_heads != 0, "MiniGpt: d_model=" + std::to_string(d_model) +
                                       " is not divisible by n_heads=" + std::to_string(n_heads));
  throw_if((d_model / n_heads) % 2 != 0,
           "MiniGpt: d_head=" + std::to_string(d_model / n_heads) +
               " (d_model / n_heads) must be even: RoPE rotates pairs");
  if (!(base > 1.0)) {  // a NaN fails this too
    throw std::invalid_argument("MiniGpt: base=" + std::to_string(base) + " must be > 1");
  }
  const auto V = static_cast<std::size_t>(vocab), d = static_cast<std::size_t>(d_model);
  // Fan-in d_model: h has unit variance after the final LayerNorm, so logits start near 1.
  embed = NumpyRng(seed).normal_matrix(V, d, d);  // (vocab, d_model)
  for (int l = 0; l < n_layers; ++l) {
    blocks.emplace_back(d_model, n_heads, d_ff, seed + 1000 * static_cast<std::uint64_t>(l + 1),
                        base);
  }
  lnf_gamma = xt::ones<float>({d});  // (d_model)
  lnf_beta = xt::zeros<float>({d});  // (d_model)
}

Tensor2 MiniGpt::logits(const std::vector<int>& tokens) const {
  check_tokens(*this, tokens, "MiniGpt::logits");
  return output_forward(embed, forward(*this, tokens).h);  // (T, vocab)
}

std::vector<Tensor3> MiniGpt::attention_weights(const std::vector<int>& tokens) const {
  check_tokens(*this, tokens, "MiniGpt::attention_weights");
  std::vector<Tensor3> weights;
  Tensor2 x = embed_forward(embed, tokens);  // (T, d_model)
  for (const TransformerBlock& block : blocks) {
    weights.push_back(block.attention_weights(x));  // (n_heads, T, T), on block l's input x_l
    x = block.forward(x);
  }
  return weights;
}

std::size_t MiniGpt::parameter_count() const {
  // embed, counted once (it is tied), the blocks, lnf_gamma and lnf_beta
  std::size_t n = std::size_t(vocab) * std::size_t(d_model) + 2 * std::size_t(d_model);
  for (const TransformerBlock& block : blocks) n += block.parameter_count();
  return n;
}

// ================================================================ the loss

double cross_entropy(const Tensor2& logits, const std::vector<int>& targets, Tensor2* d_logits) {
  const std::size_t T = logits.shape(0), V = logits.shape(1);
  throw_if(targets.size() != T, "cross_entropy: logits have shape " + shape_string(logits) +
                                    " but there are " + std::to_string(targets.size()) +
                                    " targets, expected one per row");
  std::size_t scored = 0;
  for (std::size_t t = 0; t < T; ++t) {
    if (targets[t] < -1 || targets[t] >= static_cast<int>(V)) {
      throw std::invalid_argument("cross_entropy: target " + std::to_string(targets[t]) +
                                  " at row " + std::to_string(t) + " outside [-1, vocab=" +
                                  std::to_string(V) + ")");
    }
    if (targets[t] >= 0) ++scored;
  }
  throw_if(scored == 0, "cross_entropy: every target is -1, expected at least one scored row");
  // The mean is over the SCORED rows: dividing by T would shrink the loss and
  // every gradient of a sentence with few scored positions.
  const double inv_scored = 1.0 / static_cast<double>(scored);
  if (d_logits) *d_logits = xt::zeros<float>({T, V});  // unscored rows pass nothing back
  std::vector<double> e(V);
  double loss = 0.0;
  for (std::size_t t = 0; t < T; ++t) {
    if (targets[t] < 0) continue;
    const float* row = &logits(t, 0);
    // logsumexp with the row max subtracted: exp(1e4) overflows, exp(0) does not.
    const double max = *std::max_element(row, row + V);
    double sum = 0.0;
    for (std::size_t v = 0; v < V; ++v) sum += e[v] = std::exp(double(row[v]) - max);
    const auto y = static_cast<std::size_t>(targets[t]);
    loss += std::log(sum) - (double(row[y]) - max);  // -ln softmax(row)[y]
    if (!d_logits) continue;
    // d/d logit_v of -ln softmax_y = softmax_v - [v == y], divided by the scored rows' count.
    float* d = &(*d_logits)(t, 0);
    for (std::size_t v = 0; v < V; ++v) d[v] = float((e[v] / sum - (v == y)) * inv_scored);
  }
  return loss * inv_scored;
}

GptLossAndGrads gpt_loss_and_grads(const MiniGpt& model, const std::vector<int>& inputs,
                                   const std::vector<int>& targets) {
  check_tokens(model, inputs, "gpt_loss_and_grads");
  throw_if(targets.size() != inputs.size(), "gpt_loss_and_grads: " + std::to_string(inputs.size()) +
                                                " inputs but " + std::to_string(targets.size()) +
                                                " targets, expected equal lengths");
  // 1. Forward, keeping each block's input.
  const Forward f = forward(model, inputs);
  const Tensor2 logits = output_forward(model.embed, f.h);  // (T, vocab)
  // 2. The loss and d_logits (cross_entropy checks the targets).
  GptLossAndGrads out{};
  Tensor2 d_logits;
  out.loss = cross_entropy(logits, targets, &d_logits);  // d_logits: (T, vocab)
  for (int y : targets) out.scored += y >= 0;
  GptGrads& g = out.grads;
  // 3. The tied output layer, its first part: d_embed = d_logits^T h.
  g.d_embed = Tensor2::from_shape(model.embed.shape());
  Tensor2 dx = output_backward(model.embed, f.h, d_logits, g.d_embed);  // dh: (T, d_model)
  // 4. The final LayerNorm, then down the stack: block_backward's dx (its two residual
  //    forks inside) is the gradient at the block's input, the block below's output.
  LayerNormGrads lnf = layer_norm_backward(f.x_last, model.lnf_gamma, kLayerNormEps, dx);
  g.d_lnf_gamma = std::move(lnf.dgamma);
  g.d_lnf_beta = std::move(lnf.dbeta);
  dx = std::move(lnf.dx);  // dLoss/dx_L: (T, d_model)
  g.blocks.resize(model.blocks.size());
  for (std::size_t l = model.blocks.size(); l-- > 0;) {
    g.blocks[l] = block_backward(model.blocks[l], f.block_inputs[l], dx);
    dx = g.blocks[l].dx;  // dLoss/dx_l: (T, d_model)
  }
  // 5. The tied weight's second part: x_0 = embed[inputs], so row t of dx_0
  //    goes into the row of token inputs[t].
  embed_backward(inputs, dx, g.d_embed);
  return out;
}

// ============================================================ the optimiser

double clip_grad_norm(GptGrads& grads, double max_norm) {
  throw_if(!(max_norm > 0.0),
           "clip_grad_norm: max_norm=" + std::to_string(max_norm) + " must be > 0");
  // ONE norm over every parameter, as one long vector: clipping rescales the whole
  // step and keeps its direction; clipping each tensor alone would bend it.
  const std::vector<Flat> all = gradients(grads);
  double sum_sq = 0.0;
  for (const Flat& p : all) {
    for (std::size_t i = 0, n = elements(p); i < n; ++i) sum_sq += double(p.data[i]) * p.data[i];
  }
  const double norm = std::sqrt(sum_sq);
  if (norm > max_norm) {
    const auto scale = static_cast<float>(max_norm / (norm + 1e-6));
    for (const Flat& p : all) {
      for (std::size_t i = 0, n = elements(p); i < n; ++i) p.data[i] *= scale;
    }
  }
  return norm;
}

double learning_rate_at(int step, double max_lr, double min_lr, int warmup, int total) {
  throw_if(step < 0 || warmup < 0 || total <= warmup || !(min_lr <= max_lr),
           "learning_rate_at: step=" + std::to_string(step) + ", warmup=" + std::to_string(warmup) +
               ", total=" + std::to_string(total) + ", min_lr=" + std::to_string(min_lr) +
               ", max_lr=" + std::to_string(max_lr) +
               ": expected 0 <= step, 0 <= warmup < total, min_lr <= max_lr");
  // Warm-up: AdamW's first v is tiny and noisy; small steps let the moments settle.
  if (step < warmup) return max_lr * step / warmup;
  if (step > total) return min_lr;
  // Cosine from max_lr (step = warmup) down to min_lr (step = total).
  const double progress = double(step - warmup) / double(total - warmup);  // 0 .. 1
  return min_lr + 0.5 * (1.0 + std::cos(std::acos(-1.0) * progress)) * (max_lr - min_lr);
}

AdamW::AdamW(const MiniGpt& model, AdamWConfig config)
    : config_(config), steps_(0), m_(zeros_like(model)), v_(zeros_like(model)) {}

void AdamW::step(MiniGpt& model, const GptGrads& grads, float lr) {
  const std::vector<Flat> theta = parameters(model), g = gradients(grads);
  const std::vector<Flat> m = gradients(m_), v = gradients(v_);
  check_same_shapes(theta, g, "the gradient");  // every shape, before anything changes
  check_same_shapes(theta, m, "the optimiser's state (made for another model)");
  ++steps_;  // t counts from 1
  const double b1 = config_.beta1, b2 = config_.beta2;
  // Bias correction: m and v start at 0, so early on they are too small by
  // the factors (1 - b^t); dividing by them gives unbiased averages.
  const double step_size = lr / (1.0 - std::pow(b1, steps_));
  const double bc2_sqrt = std::sqrt(1.0 - std::pow(b2, steps_));
  const auto decay = static_cast<float>(1.0 - double(lr) * config_.weight_decay);
  const auto one_minus_b1 = static_cast<float>(1.0 - b1), one_minus_b2 = static_cast<float>(1.0 - b2);
  for (std::size_t p = 0; p < theta.size(); ++p) {
    float *w = theta[p].data, *mp = m[p].data, *vp = v[p].data;
    const float* grad = g[p].data;
    // Decoupled decay (Loshchilov and Hutter): the weights shrink toward 0
    // directly, outside the adaptive step, and only the matrices: a gamma
    // pulled toward 0 would switch its LayerNorm off.
    const bool decayed = theta[p].decayed;
    for (std::size_t i = 0, n = elements(theta[p]); i < n; ++i) {
      if (decayed) w[i] *= decay;
    }
    for (std::size_t i = 0, n = elements(theta[p]); i < n; ++i) {  // then the Adam step
      mp[i] = config_.beta1 * mp[i] + one_minus_b1 * grad[i];
      vp[i] = config_.beta2 * vp[i] + one_minus_b2 * grad[i] * grad[i];
      const float denom = static_cast<float>(std::sqrt(vp[i]) / bc2_sqrt) + config_.eps;
      w[i] -= static_cast<float>(step_size) * (mp[i] / denom);
    }
  }
}

int AdamW::steps() const { return steps_; }

// =============================================================== sampling

int sample_token(const Tensor1& logits, const Sampling& sampling, double u) {
  const std::size_t V = logits.size();
  throw_if(!(u >= 0.0 && u < 1.0), "sample_token: u=" + std::to_string(u) + " outside [0, 1)");
  throw_if(!(sampling.temperature >= 0.0f) || sampling.top_k < 0,
           "sample_token: temperature=" + std::to_string(sampling.temperature) + ", top_k=" +
               std::to_string(sampling.top_k) + ": expected both >= 0 (top_k 0 keeps all)");
  throw_if(V == 0, "sample_token: logits are empty");
  if (sampling.temperature == 0.0f) {  // greedy: the first (lowest) id of the largest logit
    return static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  }
  // Top-k: rank ids by logit, larger first, equal logits lower id first (a stable sort);
  // keep the first k, then walk them in increasing id order.
  std::vector<int> ids(V);
  std::iota(ids.begin(), ids.end(), 0);
  const std::size_t k = (sampling.top_k == 0 || std::size_t(sampling.top_k) >= V)
                            ? V
                            : static_cast<std::size_t>(sampling.top_k);
  std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) { return logits(a) > logits(b); });
  ids.resize(k);
  std::sort(ids.begin(), ids.end());
  // p = softmax(kept / temperature): a temperature below 1 sharpens it, above 1 flattens it.
  const double T = sampling.temperature;
  double max = -INFINITY;
  for (int id : ids) max = std::max(max, double(logits(id)) / T);
  std::vector<double> p(k);
  double sum = 0.0;
  for (std::size_t i = 0; i < k; ++i) sum += p[i] = std::exp(double(logits(ids[i])) / T - max);
  // Inverse-CDF sampling: the first id whose cumulative probability exceeds u.
  double cumulative = 0.0;
  for (std::size_t i = 0; i < k; ++i) {
    cumulative += p[i] / sum;
    if (cumulative > u) return ids[i];
  }
  return ids.back();  // rounding left the total just below u
}

// ============================================================== generation

GptDecoder::GptDecoder(const MiniGpt& model, int capacity) : model_(&model), length_(0) {
  if (capacity < 1 || capacity > model.max_len) {
    throw std::invalid_argument("GptDecoder: capacity=" + std::to_string(capacity) +
                                " outside [1, max_len=" + std::to_string(model.max_len) + "]");
  }
  // One KV cache per block, inside lab 11's decoder over that block's attention.
  for (const TransformerBlock& block : model.blocks) attention_.emplace_back(block.attn, capacity);
}

Tensor2 GptDecoder::step(const std::vector<int>& new_tokens) {
  const MiniGpt& model = *model_;
  const int capacity = attention_.front().cache().capacity();
  throw_if(length_ + static_cast<long long>(new_tokens.size()) > capacity,
           "GptDecoder: capacity=" + std::to_string(capacity) + " cannot hold " +
               std::to_string(length_) + " + " + std::to_string(new_tokens.size()) + " positions");
  check_tokens(model, new_tokens, "GptDecoder::step");  // all checked before any cache changes
  // The block's forward on the new rows only: LayerNorm, FFN and residuals act row by
  // row; attention reads the old positions from the cache (keys rotated once).
  Tensor2 x = embed_forward(model.embed, new_tokens);  // (T_new, d_model)
  for (std::size_t l = 0; l < model.blocks.size(); ++l) {
    const TransformerBlock& block = model.blocks[l];
    const Tensor2 a = layer_norm(x, block.ln1_gamma, block.ln1_beta);  // (T_new, d_model)
    const Tensor2 h = x + attention_[l].step(a);                        // (T_new, d_model)
    x = h + block.ffn.forward(layer_norm(h, block.ln2_gamma, block.ln2_beta));
  }
  length_ += static_cast<int>(new_tokens.size());
  return output_forward(model.embed, layer_norm(x, model.lnf_gamma, model.lnf_beta));
}

int GptDecoder::length() const { return length_; }

const KVCache& GptDecoder::cache(int block) const {
  throw_if(block < 0 || block >= static_cast<int>(attention_.size()),
           "GptDecoder::cache: block=" + std::to_string(block) + " outside [0, n_layers)");
  return attention_[static_cast<std::size_t>(block)].cache();
}

std::vector<int> generate(const MiniGpt& model, const std::vector<int>& prompt,
                          int max_new_tokens, const Sampling& sampling, int eos,
                          std::uint64_t seed) {
  check_tokens(model, prompt, "generate: prompt");
  throw_if(eos < 0 || eos >= model.vocab, "generate: eos=" + std::to_string(eos) +
                                              " outside [0, vocab=" + std::to_string(model.vocab) +
                                              ")");
  throw_if(max_new_tokens < 0,
           "generate: max_new_tokens=" + std::to_string(max_new_tokens) + " must be >= 0");
  throw_if(!(sampling.temperature >= 0.0f) || sampling.top_k < 0,
           "generate: temperature=" + std::to_string(sampling.temperature) + ", top_k=" +
               std::to_string(sampling.top_k) + ": expected temperature >= 0 and top_k >= 0");
  // As many new tokens as asked, and as fit in max_len with the prompt.
  const int room = std::min(max_new_tokens, model.max_len - static_cast<int>(prompt.size()));
  std::vector<int> out;
  if (room == 0) return out;
  GptDecoder decoder(model, model.max_len);
  NumpyRng rng(seed);
  Tensor2 logits = decoder.step(prompt);  // prefill: (T_prompt, vocab), one call
  for (;;) {
    const Tensor1 row = xt::row(logits, logits.shape(0) - 1);  // (vocab): the last position
    const int token = sample_token(row, sampling, rng.random());  // one draw, even if greedy
    out.push_back(token);
    if (token == eos || static_cast<int>(out.size()) == room) return out;
    logits = decoder.step({token});  // decode: one row, against the cache
  }
}

}  // namespace mha
