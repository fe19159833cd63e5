#include "tests/14_transformer_block/reference.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>

#include "tests/common/naive.h"

namespace mha {
namespace reference {
using naive::MatMulOf;
using naive::SplitHeadsOf;

Block FromBlock(const TransformerBlock& b) {
  Block r;
  r.n_heads = b.n_heads;
  r.base = b.attn.base;
  r.ln1_gamma = xt::cast<double>(b.ln1_gamma);
  r.ln1_beta = xt::cast<double>(b.ln1_beta);
  r.W_Q = xt::cast<double>(b.attn.W_Q);
  r.W_K = xt::cast<double>(b.attn.W_K);
  r.W_V = xt::cast<double>(b.attn.W_V);
  r.W_O = xt::cast<double>(b.attn.W_O);
  r.ln2_gamma = xt::cast<double>(b.ln2_gamma);
  r.ln2_beta = xt::cast<double>(b.ln2_beta);
  r.W_1 = xt::cast<double>(b.ffn.W_1);
  r.b_1 = xt::cast<double>(b.ffn.b_1);
  r.W_2 = xt::cast<double>(b.ffn.W_2);
  r.b_2 = xt::cast<double>(b.ffn.b_2);
  return r;
}

D2 LayerNorm(const D2& x, const D1& gamma, const D1& beta, double eps) {
  const std::size_t T = x.shape(0), d = x.shape(1);
  D2 y = D2::from_shape({T, d});
  for (std::size_t t = 0; t < T; ++t) {
    double mean = 0.0, var = 0.0;
    for (std::size_t i = 0; i < d; ++i) mean += x(t, i) / d;
    for (std::size_t i = 0; i < d; ++i) var += (x(t, i) - mean) * (x(t, i) - mean) / d;
    for (std::size_t i = 0; i < d; ++i) {
      y(t, i) = (x(t, i) - mean) / std::sqrt(var + eps) * gamma(i) + beta(i);
    }
  }
  return y;
}

D2 Gelu(const D2& x) {
  D2 y = D2::from_shape({x.shape(0), x.shape(1)});
  for (std::size_t i = 0; i < x.size(); ++i) {
    y.flat(i) = x.flat(i) * 0.5 * std::erfc(-x.flat(i) / std::sqrt(2.0));  // x Phi(x)
  }
  return y;
}

D2 FeedForward(const D2& x, const D2& W_1, const D1& b_1, const D2& W_2, const D1& b_2) {
  D2 u = MatMulOf(x, W_1);
  for (std::size_t t = 0; t < u.shape(0); ++t)
    for (std::size_t j = 0; j < u.shape(1); ++j) u(t, j) += b_1(j);
  D2 y = MatMulOf(Gelu(u), W_2);
  for (std::size_t t = 0; t < y.shape(0); ++t)
    for (std::size_t j = 0; j < y.shape(1); ++j) y(t, j) += b_2(j);
  return y;
}

D3 Rotate(const D3& x, int start, double base) {
  const std::size_t H = x.shape(0), T = x.shape(1), dh = x.shape(2), half = dh / 2;
  D3 out = D3::from_shape({H, T, dh});
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t i = 0; i < half; ++i) {
      const double angle = double(start + static_cast<int>(t)) * std::pow(base, -2.0 * i / dh);
      const double c = std::cos(angle), s = std::sin(angle);
      for (std::size_t h = 0; h < H; ++h) {
        out(h, t, i) = x(h, t, i) * c - x(h, t, i + half) * s;
        out(h, t, i + half) = x(h, t, i + half) * c + x(h, t, i) * s;
      }
    }
  }
  return out;
}

D2 RotaryAttention(const D2& x, const D2& W_Q, const D2& W_K, const D2& W_V, const D2& W_O,
                   int n_heads, double base, bool causal, D3* weights) {
  const std::size_t T = x.shape(0), d = x.shape(1), H = n_heads, dh = d / H;
  const D3 q = Rotate(SplitHeadsOf(MatMulOf(x, W_Q), H), 0, base);
  const D3 k = Rotate(SplitHeadsOf(MatMulOf(x, W_K), H), 0, base);
  const D3 v = SplitHeadsOf(MatMulOf(x, W_V), H);
  D2 concat = xt::zeros<double>({T, d});
  if (weights) *weights = xt::zeros<double>({H, T, T});
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t i = 0; i < T; ++i) {
      const std::size_t seen = causal ? i + 1 : T;
      std::vector<double> p(seen);
      double max = -std::numeric_limits<double>::infinity(), sum = 0.0;
      for (std::size_t j = 0; j < seen; ++j) {
        double s = 0.0;
        for (std::size_t c = 0; c < dh; ++c) s += q(h, i, c) * k(h, j, c);
        p[j] = s / std::sqrt(double(dh));
        max = std::max(max, p[j]);
      }
      for (double& e : p) sum += (e = std::exp(e - max));
      for (std::size_t j = 0; j < seen; ++j) {
        p[j] /= sum;
        if (weights) (*weights)(h, i, j) = p[j];
        for (std::size_t c = 0; c < dh; ++c) concat(i, h * dh + c) += p[j] * v(h, j, c);
      }
    }
  }
  return MatMulOf(concat, W_O);
}

D2 BlockForward(const Block& b, const D2& x, D3* weights) {
  const D2 a = LayerNorm(x, b.ln1_gamma, b.ln1_beta);
  const D2 h = x + RotaryAttention(a, b.W_Q, b.W_K, b.W_V, b.W_O, b.n_heads, b.base,
                                   /*causal=*/true, weights);
  const D2 f = FeedForward(LayerNorm(h, b.ln2_gamma, b.ln2_beta), b.W_1, b.b_1, b.W_2, b.b_2);
  return h + f;
}

}  // namespace reference
}  // namespace mha
