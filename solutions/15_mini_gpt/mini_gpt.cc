// Lab 15 reference solution: a Mini-GPT, its loss and gradients, AdamW,
// sampling and KV-cache generation.
//
// Each block is lab 14's TransformerBlock, forward and backward (block_backward).
// What is new here is what surrounds the blocks, each forward beside its backward:
//
//   embedding      x_0 = embed[tokens]          <->  scatter-add dx_0 into embed's rows
//   output layer   logits = h @ embed^T         <->  d_embed += d_logits^T h,  dh = d_logits @ embed
//   loss           mean cross-entropy           <->  (softmax - onehot) / n_scored
//
// The output layer is TIED to the embedding: one matrix, used twice, so its
// gradient is the sum of two parts. Forget either and training still runs;
// it just learns worse (the tests and the lesson's "Classic mistakes" say how).
//
// Then the optimiser (global-norm clipping, the warm-up-then-cosine
// schedule, AdamW with decay on matrices only), sampling, and generation
// through lab 11's RotaryDecoder, one per block.
#include "labs/15_mini_gpt/mini_gpt.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
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
constexpr double kPi = 3.14159265358979323846;

// ------------------------------------------------------------------ checks

void check_tokens(const MiniGpt& model, const std::vector<int>& tokens, const std::string& who) {
  const std::size_t T = tokens.size();
  if (T < 1 || T > static_cast<std::size_t>(model.max_len)) {
    throw std::invalid_argument(who + ": " + std::to_string(T) +
                                " tokens, expected 1 <= T <= max_len=" +
                                std::to_string(model.max_len));
  }
  for (std::size_t t = 0; t < T; ++t) {
    if (tokens[t] < 0 || tokens[t] >= model.vocab) {
      throw std::invalid_argument(who + ": token " + std::to_string(tokens[t]) +
                                  " at position " + std::to_string(t) + " outside [0, vocab=" +
                                  std::to_string(model.vocab) + ")");
    }
  }
}

// ------------------------------------------------- embedding: forward, backward

// x_0 = embed[tokens]: row t is the row of token tokens[t].       (T, d_model)
Tensor2 embed_forward(const Tensor2& embed, const std::vector<int>& tokens) {
  const std::size_t T = tokens.size(), d = embed.shape(1);
  Tensor2 x = Tensor2::from_shape({T, d});  // (T, d_model)
  for (std::size_t t = 0; t < T; ++t) {
    const float* row = &embed(static_cast<std::size_t>(tokens[t]), 0);
    std::copy(row, row + d, &x(t, 0));
  }
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

// The forward pass, keeping what the backward needs: each block's input
// x_l, and the final LayerNorm's input x_L and output h.
struct Forward {
  std::vector<Tensor2> block_inputs;  // x_0 .. x_{L-1}, (T, d_model) each
  Tensor2 x_last;                     // x_L, (T, d_model)
  Tensor2 h;                          // layer_norm(x_L), (T, d_model)
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

// One parameter tensor seen flat: every gradient, moment and weight of the
// model is one of these, in the API's declaration order. `data` is written
// only through the non-const overloads below.
struct Flat {
  std::string name;  // "embed", "blocks.0.attn.W_Q", ...
  float* data;
  std::vector<std::size_t> shape;
  bool decayed;  // a matrix: AdamW decays it; gammas, betas and biases it never does
};

template <class T>
Flat flat(const std::string& name, T& tensor, bool decayed) {
  return {name, const_cast<float*>(tensor.data()), {tensor.shape().begin(), tensor.shape().end()},
          decayed};
}

// The weights of a model.
std::vector<Flat> parameters(MiniGpt& m) {
  std::vector<Flat> p = {flat("embed", m.embed, true)};
  for (std::size_t l = 0; l < m.blocks.size(); ++l) {
    TransformerBlock& b = m.blocks[l];
    const std::string at = "blocks." + std::to_string(l) + ".";
    p.push_back(flat(at + "ln1_gamma", b.ln1_gamma, false));
    p.push_back(flat(at + "ln1_beta", b.ln1_beta, false));
    p.push_back(flat(at + "attn.W_Q", b.attn.W_Q, true));
    p.push_back(flat(at + "attn.W_K", b.attn.W_K, true));
    p.push_back(flat(at + "attn.W_V", b.attn.W_V, true));
    p.push_back(flat(at + "attn.W_O", b.attn.W_O, true));
    p.push_back(flat(at + "ln2_gamma", b.ln2_gamma, false));
    p.push_back(flat(at + "ln2_beta", b.ln2_beta, false));
    p.push_back(flat(at + "ffn.W_1", b.ffn.W_1, true));
    p.push_back(flat(at + "ffn.b_1", b.ffn.b_1, false));
    p.push_back(flat(at + "ffn.W_2", b.ffn.W_2, true));
    p.push_back(flat(at + "ffn.b_2", b.ffn.b_2, false));
  }
  p.push_back(flat("lnf_gamma", m.lnf_gamma, false));
  p.push_back(flat("lnf_beta", m.lnf_beta, false));
  return p;
}

// The parameter gradients of `grads`, in the same order (the dx fields are
// not parameters: they are left out). AdamW reads its `grads` argument
// through it and never writes them.
std::vector<Flat> gradients(const GptGrads& grads) {
  GptGrads& g = const_cast<GptGrads&>(grads);
  std::vector<Flat> p = {flat("embed", g.d_embed, true)};
  for (std::size_t l = 0; l < g.blocks.size(); ++l) {
    BlockGrads& b = g.blocks[l];
    const std::string at = "blocks." + std::to_string(l) + ".";
    p.push_back(flat(at + "ln1_gamma", b.dln1_gamma, false));
    p.push_back(flat(at + "ln1_beta", b.dln1_beta, false));
    p.push_back(flat(at + "attn.W_Q", b.dW_Q, true));
    p.push_back(flat(at + "attn.W_K", b.dW_K, true));
    p.push_back(flat(at + "attn.W_V", b.dW_V, true));
    p.push_back(flat(at + "attn.W_O", b.dW_O, true));
    p.push_back(flat(at + "ln2_gamma", b.dln2_gamma, false));
    p.push_back(flat(at + "ln2_beta", b.dln2_beta, false));
    p.push_back(flat(at + "ffn.W_1", b.dW_1, true));
    p.push_back(flat(at + "ffn.b_1", b.db_1, false));
    p.push_back(flat(at + "ffn.W_2", b.dW_2, true));
    p.push_back(flat(at + "ffn.b_2", b.db_2, false));
  }
  p.push_back(flat("lnf_gamma", g.d_lnf_gamma, false));
  p.push_back(flat("lnf_beta", g.d_lnf_beta, false));
  return p;
}

// Zeros shaped like every parameter of the model (dx left empty): AdamW's moments.
GptGrads zeros_like(const MiniGpt& model) {
  GptGrads z;
  z.d_embed = xt::zeros<float>(model.embed.shape());
  for (const TransformerBlock& b : model.blocks) {
    BlockGrads g;
    g.dln1_gamma = xt::zeros<float>(b.ln1_gamma.shape());
    g.dln1_beta = xt::zeros<float>(b.ln1_beta.shape());
    g.dW_Q = xt::zeros<float>(b.attn.W_Q.shape());
    g.dW_K = xt::zeros<float>(b.attn.W_K.shape());
    g.dW_V = xt::zeros<float>(b.attn.W_V.shape());
    g.dW_O = xt::zeros<float>(b.attn.W_O.shape());
    g.dln2_gamma = xt::zeros<float>(b.ln2_gamma.shape());
    g.dln2_beta = xt::zeros<float>(b.ln2_beta.shape());
    g.dW_1 = xt::zeros<float>(b.ffn.W_1.shape());
    g.db_1 = xt::zeros<float>(b.ffn.b_1.shape());
    g.dW_2 = xt::zeros<float>(b.ffn.W_2.shape());
    g.db_2 = xt::zeros<float>(b.ffn.b_2.shape());
    z.blocks.push_back(std::move(g));
  }
  z.d_lnf_gamma = xt::zeros<float>(model.lnf_gamma.shape());
  z.d_lnf_beta = xt::zeros<float>(model.lnf_beta.shape());
  return z;
}

std::size_t elements(const Flat& f) {
  return std::accumulate(f.shape.begin(), f.shape.end(), std::size_t{1},
                         [](std::size_t a, std::size_t b) { return a * b; });
}

// Throws, naming the first tensor of `got` whose name or shape differs from `want`'s.
void check_same_shapes(const std::vector<Flat>& want, const std::vector<Flat>& got,
                       const std::string& who, const std::string& what) {
  if (got.size() != want.size()) {
    throw std::invalid_argument(who + ": " + what + " has " + std::to_string(got.size()) +
                                " tensors, the model " + std::to_string(want.size()) +
                                " (a model of another n_layers?)");
  }
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (got[i].shape != want[i].shape) {
      throw std::invalid_argument(who + ": " + what + "'s " + got[i].name + " has shape " +
                                  shape_string(got[i].shape) + ", expected " +
                                  shape_string(want[i].shape));
    }
  }
}

}  // namespace

// ===================================================================== MiniGpt

MiniGpt::MiniGpt(int vocab_, int max_len_, int d_model_, int n_heads_, int d_ff_, int n_layers_,
                 std::uint64_t seed, double base_)
    : vocab(vocab_), max_len(max_len_), d_model(d_model_), n_heads(n_heads_), d_ff(d_ff_),
      n_layers(n_layers_), base(base_) {
  if (vocab < 1 || max_len < 1 || d_model < 1 || n_heads < 1 || d_ff < 1 || n_layers < 1) {
    throw std::invalid_argument(
        "MiniGpt: vocab=" + std::to_string(vocab) + ", max_len=" + std::to_string(max_len) +
        ", d_model=" + std::to_string(d_model) + ", n_heads=" + std::to_string(n_heads) +
        ", d_ff=" + std::to_string(d_ff) + ", n_layers=" + std::to_string(n_layers) +
        ": every size must be at least 1");
  }
  if (d_model % n_heads != 0) {
    throw std::invalid_argument("MiniGpt: d_model=" + std::to_string(d_model) +
                                " is not divisible by n_heads=" + std::to_string(n_heads));
  }
  if ((d_model / n_heads) % 2 != 0) {
    throw std::invalid_argument("MiniGpt: d_head=" + std::to_string(d_model / n_heads) +
                                " (d_model / n_heads) must be even: RoPE rotates pairs");
  }
  if (!(base > 1.0)) {  // a NaN fails this too
    throw std::invalid_argument("MiniGpt: base=" + std::to_string(base) + " must be > 1");
  }
  const auto V = static_cast<std::size_t>(vocab), d = static_cast<std::size_t>(d_model);
  // Fan-in d_model: the output layer reads h (unit variance after the final
  // LayerNorm) through these rows, so each logit starts with variance ~1.
  embed = NumpyRng(seed).normal_matrix(V, d, d);  // (vocab, d_model)
  blocks.reserve(static_cast<std::size_t>(n_layers));
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
  const auto d = static_cast<std::size_t>(d_model);
  std::size_t n = static_cast<std::size_t>(vocab) * d;  // embed, counted once: it is tied
  for (const TransformerBlock& block : blocks) n += block.parameter_count();
  return n + 2 * d;  // lnf_gamma, lnf_beta
}

// ================================================================ the loss

double cross_entropy(const Tensor2& logits, const std::vector<int>& targets, Tensor2* d_logits) {
  const std::size_t T = logits.shape(0), V = logits.shape(1);
  if (targets.size() != T) {
    throw std::invalid_argument("cross_entropy: logits have shape " + shape_string(logits) +
                                " but there are " + std::to_string(targets.size()) +
                                " targets, expected one per row");
  }
  std::size_t scored = 0;
  for (std::size_t t = 0; t < T; ++t) {
    if (targets[t] < -1 || targets[t] >= static_cast<int>(V)) {
      throw std::invalid_argument("cross_entropy: target " + std::to_string(targets[t]) +
                                  " at row " + std::to_string(t) + " outside [-1, vocab=" +
                                  std::to_string(V) + ")");
    }
    if (targets[t] >= 0) ++scored;
  }
  if (scored == 0) {
    throw std::invalid_argument("cross_entropy: every target is -1, expected at least one "
                                "scored row");
  }
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
    if (d_logits) {
      // d/d logit_v of -ln softmax_y = softmax_v - [v == y], and the mean
      // divides it by the number of scored rows.
      float* d = &(*d_logits)(t, 0);
      for (std::size_t v = 0; v < V; ++v) {
        d[v] = static_cast<float>((e[v] / sum - (v == y ? 1.0 : 0.0)) * inv_scored);
      }
    }
  }
  return loss * inv_scored;
}

GptLossAndGrads gpt_loss_and_grads(const MiniGpt& model, const std::vector<int>& inputs,
                                   const std::vector<int>& targets) {
  check_tokens(model, inputs, "gpt_loss_and_grads");
  if (targets.size() != inputs.size()) {
    throw std::invalid_argument("gpt_loss_and_grads: " + std::to_string(inputs.size()) +
                                " inputs but " + std::to_string(targets.size()) +
                                " targets, expected equal lengths");
  }
  // 1. Forward, keeping each block's input.
  const Forward f = forward(model, inputs);
  const Tensor2 logits = output_forward(model.embed, f.h);  // (T, vocab)

  // 2. The loss and d_logits (cross_entropy checks the targets).
  GptLossAndGrads out;
  Tensor2 d_logits;
  out.loss = cross_entropy(logits, targets, &d_logits);  // d_logits: (T, vocab)
  out.scored = static_cast<std::size_t>(
      std::count_if(targets.begin(), targets.end(), [](int y) { return y >= 0; }));
  GptGrads& g = out.grads;

  // 3. The tied output layer, its first part: d_embed = d_logits^T h.
  g.d_embed = Tensor2::from_shape(model.embed.shape());
  Tensor2 dx = output_backward(model.embed, f.h, d_logits, g.d_embed);  // dh: (T, d_model)

  // 4. The final LayerNorm, then down the stack. block_backward's dx is the
  //    gradient at the block's input, which is the gradient at the output of
  //    the block below (its two residual forks are inside it).
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
  if (!(max_norm > 0.0)) {
    throw std::invalid_argument("clip_grad_norm: max_norm=" + std::to_string(max_norm) +
                                " must be > 0");
  }
  // ONE norm over every parameter together (as if they were one long
  // vector), not one per tensor: clipping rescales the whole step and keeps
  // its direction; clipping each tensor alone would bend it.
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
  if (step < 0 || warmup < 0 || total <= warmup || !(min_lr <= max_lr)) {
    throw std::invalid_argument(
        "learning_rate_at: step=" + std::to_string(step) + ", max_lr=" + std::to_string(max_lr) +
        ", min_lr=" + std::to_string(min_lr) + ", warmup=" + std::to_string(warmup) +
        ", total=" + std::to_string(total) +
        ": expected step >= 0, warmup >= 0, total > warmup and min_lr <= max_lr");
  }
  // Warm-up: AdamW's first steps divide by a tiny, noisy v; small steps let
  // the moments settle before the rate is at its largest.
  if (step < warmup) return max_lr * step / warmup;
  if (step > total) return min_lr;
  // Cosine from max_lr (step = warmup) down to min_lr (step = total).
  const double progress = double(step - warmup) / double(total - warmup);  // 0 .. 1
  return min_lr + 0.5 * (1.0 + std::cos(kPi * progress)) * (max_lr - min_lr);
}

AdamW::AdamW(const MiniGpt& model, AdamWConfig config)
    : config_(config), steps_(0), m_(zeros_like(model)), v_(zeros_like(model)) {}

void AdamW::step(MiniGpt& model, const GptGrads& grads, float lr) {
  const std::vector<Flat> theta = parameters(model), g = gradients(grads);
  const std::vector<Flat> m = gradients(m_), v = gradients(v_);
  // Every shape checked before anything changes.
  check_same_shapes(theta, g, "AdamW::step", "the gradient");
  check_same_shapes(theta, m, "AdamW::step", "the optimiser's state (made for another model)");

  ++steps_;  // t counts from 1
  const double b1 = config_.beta1, b2 = config_.beta2;
  // Bias correction: m and v start at 0, so early on they are too small by
  // the factors (1 - b^t); dividing by them gives unbiased averages.
  const double step_size = lr / (1.0 - std::pow(b1, steps_));
  const double bc2_sqrt = std::sqrt(1.0 - std::pow(b2, steps_));
  const auto decay = static_cast<float>(1.0 - double(lr) * config_.weight_decay);
  const auto one_minus_b1 = static_cast<float>(1.0 - b1), one_minus_b2 = static_cast<float>(1.0 - b2);
  for (std::size_t p = 0; p < theta.size(); ++p) {
    float* w = theta[p].data;
    const float* grad = g[p].data;
    float* mp = m[p].data;
    float* vp = v[p].data;
    // Decoupled decay (Loshchilov and Hutter): the weights shrink toward 0
    // directly, outside the adaptive step, and only the matrices: a gamma
    // pulled toward 0 would switch its LayerNorm off.
    const bool decayed = theta[p].decayed;
    for (std::size_t i = 0, n = elements(theta[p]); i < n; ++i) {
      if (decayed) w[i] *= decay;
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
  if (!(u >= 0.0 && u < 1.0)) {
    throw std::invalid_argument("sample_token: u=" + std::to_string(u) + " outside [0, 1)");
  }
  if (!(sampling.temperature >= 0.0f)) {
    throw std::invalid_argument("sample_token: temperature=" +
                                std::to_string(sampling.temperature) + " must be >= 0");
  }
  if (sampling.top_k < 0) {
    throw std::invalid_argument("sample_token: top_k=" + std::to_string(sampling.top_k) +
                                " must be >= 0 (0 keeps every token)");
  }
  if (V == 0) throw std::invalid_argument("sample_token: logits are empty");

  if (sampling.temperature == 0.0f) {  // greedy: the first (lowest) id of the largest logit
    return static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  }
  // Top-k: rank ids by logit, larger first and, among equal logits, lower id
  // first; keep the first k. Then walk the kept ids in increasing id order.
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
  if (new_tokens.empty()) {
    throw std::invalid_argument("GptDecoder: no new tokens, expected at least one");
  }
  // Every check before any cache changes.
  if (length_ + static_cast<long long>(new_tokens.size()) > capacity) {
    throw std::invalid_argument("GptDecoder: capacity=" + std::to_string(capacity) +
                                " cannot hold " + std::to_string(length_) + " + " +
                                std::to_string(new_tokens.size()) + " positions");
  }
  for (std::size_t t = 0; t < new_tokens.size(); ++t) {
    if (new_tokens[t] < 0 || new_tokens[t] >= model.vocab) {
      throw std::invalid_argument("GptDecoder: token " + std::to_string(new_tokens[t]) +
                                  " at position " + std::to_string(t) + " outside [0, vocab=" +
                                  std::to_string(model.vocab) + ")");
    }
  }
  // The block's forward on the new rows only: a LayerNorm, the FFN and the
  // residual adds act on each row alone, so the old rows need nothing again;
  // attention is the only part that reads other positions, and it reads
  // them from the cache (keys rotated once, at their own positions).
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
  if (block < 0 || block >= static_cast<int>(attention_.size())) {
    throw std::invalid_argument("GptDecoder::cache: block=" + std::to_string(block) +
                                " outside [0, n_layers=" + std::to_string(attention_.size()) +
                                ")");
  }
  return attention_[static_cast<std::size_t>(block)].cache();
}

std::vector<int> generate(const MiniGpt& model, const std::vector<int>& prompt,
                          int max_new_tokens, const Sampling& sampling, int eos,
                          std::uint64_t seed) {
  check_tokens(model, prompt, "generate: prompt");
  if (eos < 0 || eos >= model.vocab) {
    throw std::invalid_argument("generate: eos=" + std::to_string(eos) + " outside [0, vocab=" +
                                std::to_string(model.vocab) + ")");
  }
  if (max_new_tokens < 0) {
    throw std::invalid_argument("generate: max_new_tokens=" + std::to_string(max_new_tokens) +
                                " must be >= 0");
  }
  if (!(sampling.temperature >= 0.0f) || sampling.top_k < 0) {
    throw std::invalid_argument("generate: temperature=" + std::to_string(sampling.temperature) +
                                ", top_k=" + std::to_string(sampling.top_k) +
                                ": expected temperature >= 0 and top_k >= 0");
  }
  // As many new tokens as asked, and as fit in max_len with the prompt.
  const int room = std::min(max_new_tokens, model.max_len - static_cast<int>(prompt.size()));
  std::vector<int> out;
  if (room == 0) return out;
  GptDecoder decoder(model, model.max_len);
  NumpyRng rng(seed);
  Tensor2 logits = decoder.step(prompt);  // prefill: (T_prompt, vocab), one call
  for (;;) {
    const std::size_t last = logits.shape(0) - 1;
    const Tensor1 row = xt::view(logits, last, xt::all());  // (vocab)
    const double u = rng.random();  // one draw per token, even when greedy
    const int token = sample_token(row, sampling, u);
    out.push_back(token);
    if (token == eos || static_cast<int>(out.size()) == room) return out;
    logits = decoder.step({token});  // decode: one row, against the cache
  }
}

}  // namespace mha
