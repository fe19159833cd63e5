// Helpers of grow_induction_heads: the rotary model, the composition baseline
// and the path-specific ablations (circuits.h says what each one computes).
#include "labs/13_induction_heads/circuits.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "labs/01_split_heads/split_heads.h"
#include "labs/02_batched_attention/attention.h"
#include "labs/04_causal_mask/causal_mask.h"
#include "labs/10_attention_backward/attention_backward.h"
#include "labs/11_rotary_embeddings/rotary_embeddings.h"

namespace mha {
namespace {

using xt::linalg::dot;

// embed[tokens], plus pos[0:T] with learned positions.                (T, d_model)
Tensor2 embed_tokens(const AttentionOnlyTransformer& m, const std::vector<int>& tokens,
                     bool with_pos) {
  const std::size_t T = tokens.size(), d = static_cast<std::size_t>(m.d_model);
  Tensor2 x = Tensor2::from_shape({T, d});
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t c = 0; c < d; ++c) {
      x(t, c) = m.embed(static_cast<std::size_t>(tokens[t]), c) + (with_pos ? m.pos(t, c) : 0.0f);
    }
  }
  return x;
}

// The inverse rotation: R(-a) = F R(a) F, where F negates the second half of
// each head's features (the pair (u, v) -> (u, -v)). It is also R(a)^T, so it
// carries a gradient back through apply_rope.
Tensor3 unrotate(const Tensor3& x) {  // (H, T, d_head)
  const std::size_t half = x.shape(2) / 2;
  Tensor3 f = x;
  xt::view(f, xt::all(), xt::all(), xt::range(half, x.shape(2))) *= -1.0f;
  Tensor3 r = apply_rope(f);  // lab 11
  xt::view(r, xt::all(), xt::all(), xt::range(half, x.shape(2))) *= -1.0f;
  return r;
}

// One layer with its own input for the queries, the keys and the values
// (the same tensor in a plain forward), keeping what the backward needs.
struct LayerPass {
  Tensor3 q, k, v;        // (H, T, d_head), q and k rotated with RoPE
  AttentionResult heads;  // output (H, T, d_head), weights (H, T, T)
  Tensor2 y;              // (T, d_model): combine_heads(output) @ W_O
};

LayerPass layer_pass(const MultiHeadAttention& layer, const Tensor2& xq, const Tensor2& xk,
                     const Tensor2& xv, const Tensor2& mask, bool rope) {
  LayerPass p;
  p.q = split_heads(dot(xq, layer.W_Q), layer.n_heads);  // (H, T, d_head), labs 1
  p.k = split_heads(dot(xk, layer.W_K), layer.n_heads);
  p.v = split_heads(dot(xv, layer.W_V), layer.n_heads);
  if (rope) {  // lab 11: positions enter only here, as rotations of q and k
    p.q = apply_rope(p.q);
    p.k = apply_rope(p.k);
  }
  p.heads = attention_batched(p.q, p.k, p.v, mask);  // lab 2
  p.y = dot(combine_heads(p.heads.output), layer.W_O);  // (T, d_model)
  return p;
}

// The whole forward with every layer's input x_l and pass kept.
struct ModelPass {
  std::vector<Tensor2> inputs;  // x_0 .. x_{L-1}
  std::vector<LayerPass> layers;
  Tensor2 x_last;  // x_L
};

ModelPass model_pass(const AttentionOnlyTransformer& m, const std::vector<int>& tokens,
                     bool rope) {
  const Tensor2 mask = causal_mask(static_cast<int>(tokens.size()));  // (T, T), lab 4
  ModelPass p;
  Tensor2 x = embed_tokens(m, tokens, !rope);
  for (const MultiHeadAttention& layer : m.layers) {
    p.inputs.push_back(x);
    p.layers.push_back(layer_pass(layer, x, x, x, mask, rope));
    x = x + p.layers.back().y;
  }
  p.x_last = x;
  return p;
}

void check_tokens(const AttentionOnlyTransformer& m, const std::vector<int>& tokens) {
  if (tokens.empty() || static_cast<int>(tokens.size()) > m.max_len) {
    throw std::invalid_argument("rotary model: " + std::to_string(tokens.size()) +
                                " tokens, expected 1 <= T <= max_len=" +
                                std::to_string(m.max_len));
  }
  for (int t : tokens) {
    if (t < 0 || t >= m.vocab) {
      throw std::invalid_argument("rotary model: token " + std::to_string(t) +
                                  " outside [0, vocab=" + std::to_string(m.vocab) + ")");
    }
  }
}

LossAndGrads rope_loss_and_grads(const AttentionOnlyTransformer& m,
                                 const std::vector<int>& inputs,
                                 const std::vector<int>& targets) {
  check_tokens(m, inputs);
  const std::size_t T = inputs.size(), V = static_cast<std::size_t>(m.vocab);
  const Tensor2 mask = causal_mask(static_cast<int>(T));
  const ModelPass p = model_pass(m, inputs, true);
  const Tensor2 logits = dot(p.x_last, m.unembed);  // (T, vocab)
  std::size_t scored = 0;
  for (int t : targets) scored += t >= 0;
  if (targets.size() != T || scored == 0) {
    throw std::invalid_argument("rotary model: targets must match the inputs and score one");
  }
  // d_logits = (softmax - onehot) / n_scored on scored rows, 0 elsewhere.  (T, vocab)
  Tensor2 d_logits = xt::zeros<float>({T, V});
  double loss = 0.0;
  for (std::size_t t = 0; t < T; ++t) {
    if (targets[t] < 0) continue;
    const float* row = &logits(t, 0);
    const float max = *std::max_element(row, row + V);
    double sum = 0.0;
    for (std::size_t c = 0; c < V; ++c) sum += std::exp(double(row[c]) - max);
    loss += std::log(sum) - (double(row[targets[t]]) - max);
    for (std::size_t c = 0; c < V; ++c) {
      d_logits(t, c) = float(std::exp(double(row[c]) - max) / sum / scored);
    }
    d_logits(t, static_cast<std::size_t>(targets[t])) -= 1.0f / scored;
  }
  LossAndGrads out;
  out.loss = loss / scored;
  TransformerGrads& g = out.grads;
  g.d_unembed = dot(xt::transpose(p.x_last), d_logits);  // (d_model, vocab)
  Tensor2 grad = dot(d_logits, xt::transpose(m.unembed));  // g_L: (T, d_model)
  g.layers.resize(m.layers.size());
  for (std::size_t l = m.layers.size(); l-- > 0;) {
    const MultiHeadAttention& layer = m.layers[l];
    const LayerPass& lp = p.layers[l];
    const Tensor2& x = p.inputs[l];  // (T, d_model)
    LayerGrads& lg = g.layers[l];
    lg.dW_O = dot(xt::transpose(combine_heads(lp.heads.output)), grad);
    const Tensor3 d_out = split_heads(dot(grad, xt::transpose(layer.W_O)), layer.n_heads);
    const AttentionGrads ag = attention_backward(lp.q, lp.k, lp.v, mask, d_out);  // lab 10
    const Tensor2 dq = combine_heads(unrotate(ag.dq));  // (T, d_model), back through the rotation
    const Tensor2 dk = combine_heads(unrotate(ag.dk));
    const Tensor2 dv = combine_heads(ag.dv);
    lg.dW_Q = dot(xt::transpose(x), dq);
    lg.dW_K = dot(xt::transpose(x), dk);
    lg.dW_V = dot(xt::transpose(x), dv);
    // Around the layer and through it.
    grad = grad + dot(dq, xt::transpose(layer.W_Q)) + dot(dk, xt::transpose(layer.W_K)) +
           dot(dv, xt::transpose(layer.W_V));
  }
  g.d_embed = xt::zeros<float>(m.embed.shape());
  g.d_pos = xt::zeros<float>(m.pos.shape());  // pos is not read
  for (std::size_t t = 0; t < T; ++t) {
    xt::view(g.d_embed, static_cast<std::size_t>(inputs[t]), xt::all()) +=
        xt::view(grad, t, xt::all());
  }
  return out;
}

}  // namespace

Positions parse_positions(const std::string& name) {
  if (name == "learned") return Positions::kLearned;
  if (name == "rope") return Positions::kRope;
  throw std::invalid_argument("positions \"" + name + "\": expected learned or rope");
}

Tensor2 model_logits(const AttentionOnlyTransformer& m, const std::vector<int>& tokens,
                     Positions positions) {
  if (positions == Positions::kLearned) return m.logits(tokens);  // lab 13
  check_tokens(m, tokens);
  return dot(model_pass(m, tokens, true).x_last, m.unembed);
}

std::vector<Tensor3> model_attention_weights(const AttentionOnlyTransformer& m,
                                             const std::vector<int>& tokens,
                                             Positions positions) {
  if (positions == Positions::kLearned) return m.attention_weights(tokens);  // lab 13
  check_tokens(m, tokens);
  std::vector<Tensor3> w;
  for (const LayerPass& lp : model_pass(m, tokens, true).layers) w.push_back(lp.heads.weights);
  return w;
}

LossAndGrads model_loss_and_grads(const AttentionOnlyTransformer& m,
                                  const std::vector<int>& inputs,
                                  const std::vector<int>& targets, Positions positions) {
  if (positions == Positions::kLearned) return loss_and_grads(m, inputs, targets);  // lab 13
  return rope_loss_and_grads(m, inputs, targets);
}

CompositionBaseline random_composition_baseline(int d_model, int n_heads, int pairs) {
  CompositionBaseline b{0.0, 0.0, 0.0};
  const double n = double(pairs) * n_heads * n_heads;
  for (int i = 0; i < pairs; ++i) {
    // Seeds far from any the program trains with.
    const std::uint64_t seed = 7000000 + 2 * static_cast<std::uint64_t>(i);
    const Composition c =
        composition_scores(MultiHeadAttention(d_model, n_heads, seed),
                           MultiHeadAttention(d_model, n_heads, seed + 1));  // lab 13
    b.q += xt::sum(c.q)() / n;
    b.k += xt::sum(c.k)() / n;
    b.v += xt::sum(c.v)() / n;
  }
  return b;
}

const char* path_name(Path path) {
  switch (path) {
    case Path::kQuery: return "queries";
    case Path::kKey: return "keys";
    case Path::kValue: return "values";
  }
  return "?";
}

const char* part_name(Part part) {
  switch (part) {
    case Part::kWhole: return "whole";
    case Part::kPosition: return "position";
    case Part::kToken: return "token";
  }
  return "?";
}

Tensor2 ablated_logits(const AttentionOnlyTransformer& m, const std::vector<int>& tokens,
                       Positions positions, int head, Path path, Part part) {
  if (m.n_layers != 2) {
    throw std::invalid_argument("ablated_logits: a model of 2 layers, not " +
                                std::to_string(m.n_layers));
  }
  check_tokens(m, tokens);
  const bool rope = positions == Positions::kRope;
  const std::size_t T = tokens.size();
  const Tensor2 mask = causal_mask(static_cast<int>(T));
  const MultiHeadAttention& l1 = m.layers[0];
  const Tensor2 x0 = embed_tokens(m, tokens, !rope);  // (T, d_model)
  const LayerPass p1 = layer_pass(l1, x0, x0, x0, mask, rope);
  const Tensor2 x1 = x0 + p1.y;  // (T, d_model): the residual, untouched
  Tensor2 xq = x1, xk = x1, xv = x1;
  if (head >= 0) {
    // What head `head` moved from the chosen part of x_0:
    // A_h (part W_V[:, h]) W_O[h, :]                                   (T, d_model)
    Tensor2 source = xt::zeros<float>(x0.shape());
    if (part == Part::kWhole) source = x0;
    if (part == Part::kToken) source = embed_tokens(m, tokens, false);
    if (part == Part::kPosition && !rope) {
      source = xt::view(m.pos, xt::range(0, T), xt::all());
    }
    const std::size_t dh = static_cast<std::size_t>(l1.d_head);
    const std::size_t c0 = static_cast<std::size_t>(head) * dh, c1 = c0 + dh;  // head's block
    const Tensor2 A = xt::view(p1.heads.weights, head, xt::all(), xt::all());   // (T, T)
    const Tensor2 W_V = xt::view(l1.W_V, xt::all(), xt::range(c0, c1));  // (d_model, d_head)
    const Tensor2 W_O = xt::view(l1.W_O, xt::range(c0, c1), xt::all());  // (d_head, d_model)
    const Tensor2 removed = dot(dot(A, dot(source, W_V)), W_O);
    Tensor2& target = path == Path::kQuery ? xq : path == Path::kKey ? xk : xv;
    target = target - removed;
  }
  const LayerPass p2 = layer_pass(m.layers[1], xq, xk, xv, mask, rope);
  return dot(x1 + p2.y, m.unembed);  // (T, vocab)
}

}  // namespace mha
