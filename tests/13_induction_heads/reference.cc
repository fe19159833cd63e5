#include "tests/13_induction_heads/reference.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include <xtensor/xbuilder.hpp>

namespace mha {
namespace reference {
namespace {

D2 MatMul(const D2& a, const D2& b) {
  const std::size_t n = a.shape(0), m = a.shape(1), p = b.shape(1);
  D2 out = xt::zeros<double>({n, p});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < m; ++k)
      for (std::size_t j = 0; j < p; ++j) out(i, j) += a(i, k) * b(k, j);
  return out;
}

D2 Transpose(const D2& a) {
  D2 out = D2::from_shape({a.shape(1), a.shape(0)});
  for (std::size_t i = 0; i < a.shape(0); ++i)
    for (std::size_t j = 0; j < a.shape(1); ++j) out(j, i) = a(i, j);
  return out;
}

double Frobenius(const D2& a) {
  double s = 0.0;
  for (double v : a) s += v * v;
  return std::sqrt(s);
}

// Columns [lo, hi) of a.
D2 Columns(const D2& a, std::size_t lo, std::size_t hi) {
  D2 out = D2::from_shape({a.shape(0), hi - lo});
  for (std::size_t i = 0; i < a.shape(0); ++i)
    for (std::size_t j = lo; j < hi; ++j) out(i, j - lo) = a(i, j);
  return out;
}

// One causal attention layer, x (T, d) -> (T, d); weights (H, T, T) out.
D2 LayerForward(const Layer& w, int n_heads, const D2& x, D3* weights) {
  const std::size_t T = x.shape(0), d = x.shape(1), H = n_heads, dh = d / H;
  const D2 Q = MatMul(x, w.W_Q), K = MatMul(x, w.W_K), V = MatMul(x, w.W_V);
  D2 concat = xt::zeros<double>({T, d});
  if (weights) *weights = xt::zeros<double>({H, T, T});
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t i = 0; i < T; ++i) {
      std::vector<double> p(i + 1);
      double max = -std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j <= i; ++j) {  // causal: keys j <= i
        double s = 0.0;
        for (std::size_t c = 0; c < dh; ++c) s += Q(i, h * dh + c) * K(j, h * dh + c);
        p[j] = s / std::sqrt(double(dh));
        max = std::max(max, p[j]);
      }
      double sum = 0.0;
      for (double& v : p) sum += (v = std::exp(v - max));
      for (std::size_t j = 0; j <= i; ++j) {
        p[j] /= sum;
        if (weights) (*weights)(h, i, j) = p[j];
        for (std::size_t c = 0; c < dh; ++c) concat(i, h * dh + c) += p[j] * V(j, h * dh + c);
      }
    }
  }
  return MatMul(concat, w.W_O);
}

}  // namespace

Layer FromLayer(const MultiHeadAttention& layer) {
  return {xt::cast<double>(layer.W_Q), xt::cast<double>(layer.W_K), xt::cast<double>(layer.W_V),
          xt::cast<double>(layer.W_O)};
}

Model FromTransformer(const AttentionOnlyTransformer& model) {
  Model m;
  m.n_heads = model.n_heads;
  m.embed = xt::cast<double>(model.embed);
  m.pos = xt::cast<double>(model.pos);
  m.unembed = xt::cast<double>(model.unembed);
  for (const MultiHeadAttention& l : model.layers) m.layers.push_back(FromLayer(l));
  return m;
}

D2 Logits(const Model& model, const std::vector<int>& tokens, std::vector<D3>* weights) {
  const std::size_t T = tokens.size(), d = model.embed.shape(1);
  D2 x = D2::from_shape({T, d});
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t c = 0; c < d; ++c) x(t, c) = model.embed(tokens[t], c) + model.pos(t, c);
  if (weights) weights->clear();
  for (const Layer& layer : model.layers) {
    D3 w;
    x = x + LayerForward(layer, model.n_heads, x, &w);
    if (weights) weights->push_back(w);
  }
  return MatMul(x, model.unembed);
}

double Loss(const Model& model, const std::vector<int>& inputs, const std::vector<int>& targets) {
  const D2 logits = Logits(model, inputs);
  double total = 0.0;
  int scored = 0;
  for (std::size_t t = 0; t < inputs.size(); ++t) {
    if (targets[t] < 0) continue;
    double max = -std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < logits.shape(1); ++c) max = std::max(max, logits(t, c));
    double sum = 0.0;
    for (std::size_t c = 0; c < logits.shape(1); ++c) sum += std::exp(logits(t, c) - max);
    total += std::log(sum) + max - logits(t, targets[t]);
    ++scored;
  }
  return total / scored;
}

Scores Composition(const Layer& earlier, int earlier_heads, const Layer& later, int later_heads) {
  const std::size_t d = earlier.W_Q.shape(0);
  auto ov = [d](const Layer& w, int n, int h) {
    const std::size_t dh = d / n, lo = h * dh;
    return MatMul(Columns(w.W_V, lo, lo + dh), Transpose(Columns(Transpose(w.W_O), lo, lo + dh)));
  };
  auto qk = [d](const Layer& w, int n, int h) {
    const std::size_t dh = d / n, lo = h * dh;
    return MatMul(Columns(w.W_Q, lo, lo + dh), Transpose(Columns(w.W_K, lo, lo + dh)));
  };
  auto score = [](const D2& product, const D2& a, const D2& b) {
    const double na = Frobenius(a), nb = Frobenius(b);
    return na == 0.0 || nb == 0.0 ? 0.0 : Frobenius(product) / (na * nb);
  };
  const std::size_t A = earlier_heads, B = later_heads;
  Scores s{xt::zeros<double>({B, A}), xt::zeros<double>({B, A}), xt::zeros<double>({B, A})};
  for (std::size_t b = 0; b < B; ++b) {
    const D2 ov_b = ov(later, later_heads, b), qk_b = qk(later, later_heads, b);
    for (std::size_t a = 0; a < A; ++a) {
      const D2 ov_a = ov(earlier, earlier_heads, a);
      s.q(b, a) = score(MatMul(ov_a, qk_b), ov_a, qk_b);
      s.k(b, a) = score(MatMul(qk_b, Transpose(ov_a)), qk_b, ov_a);
      s.v(b, a) = score(MatMul(ov_a, ov_b), ov_a, ov_b);
    }
  }
  return s;
}

}  // namespace reference
}  // namespace mha
