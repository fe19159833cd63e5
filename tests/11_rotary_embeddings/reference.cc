#include "tests/11_rotary_embeddings/reference.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include <xtensor/xbuilder.hpp>

namespace mha {
namespace reference {
namespace {

using Matrix = std::vector<std::vector<double>>;  // [row][column]

// x (T, d_in) @ W (d_in, d_out), in double.
Matrix Times(const Tensor2& x, const Tensor2& W) {
  const std::size_t T = x.shape(0), n = x.shape(1), m = W.shape(1);
  Matrix out(T, std::vector<double>(m, 0.0));
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t j = 0; j < m; ++j) out[t][j] += double(x(t, k)) * double(W(k, j));
  return out;
}

// Turns columns [lo, lo + d_head) of every row of M in place: row t at start + t.
void RotateBlock(Matrix& M, std::size_t lo, std::size_t d_head, long long start, double base) {
  const std::size_t half = d_head / 2;
  for (std::size_t t = 0; t < M.size(); ++t) {
    const double p = static_cast<double>(start + static_cast<long long>(t));
    for (std::size_t i = 0; i < half; ++i) {
      const double theta = std::pow(base, -2.0 * double(i) / double(d_head));
      const double c = std::cos(p * theta), s = std::sin(p * theta);
      const double a = M[t][lo + i], b = M[t][lo + i + half];
      M[t][lo + i] = a * c - b * s;
      M[t][lo + i + half] = b * c + a * s;
    }
  }
}

}  // namespace

Tensor3 Rope(const Tensor3& x, long long start, double base) {
  const std::size_t H = x.shape(0), T = x.shape(1), d = x.shape(2);
  Tensor3 out = xt::zeros<float>(x.shape());
  for (std::size_t h = 0; h < H; ++h) {
    Matrix M(T, std::vector<double>(d));
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t f = 0; f < d; ++f) M[t][f] = x(h, t, f);
    RotateBlock(M, 0, d, start, base);
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t f = 0; f < d; ++f) out(h, t, f) = static_cast<float>(M[t][f]);
  }
  return out;
}

Tensor2 RotaryForward(const Tensor2& W_Q, const Tensor2& W_K, const Tensor2& W_V,
                      const Tensor2& W_O, int n_heads, double base, const Tensor2& x,
                      bool causal, long long start) {
  const std::size_t T = x.shape(0), d = x.shape(1), H = n_heads, dh = d / H;
  Matrix Q = Times(x, W_Q), K = Times(x, W_K), V = Times(x, W_V);
  Matrix concat(T, std::vector<double>(d, 0.0));
  for (std::size_t h = 0; h < H; ++h) {
    RotateBlock(Q, h * dh, dh, start, base);  // head h's own columns
    RotateBlock(K, h * dh, dh, start, base);
    for (std::size_t i = 0; i < T; ++i) {
      const std::size_t seen = causal ? i + 1 : T;
      std::vector<double> s(seen);
      double top = -std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < seen; ++j) {
        double dot = 0.0;
        for (std::size_t f = 0; f < dh; ++f) dot += Q[i][h * dh + f] * K[j][h * dh + f];
        s[j] = dot / std::sqrt(double(dh));
        top = std::max(top, s[j]);
      }
      double sum = 0.0;
      for (double& v : s) sum += (v = std::exp(v - top));
      for (std::size_t j = 0; j < seen; ++j)
        for (std::size_t f = 0; f < dh; ++f) concat[i][h * dh + f] += s[j] / sum * V[j][h * dh + f];
    }
  }
  Tensor2 y = xt::zeros<float>({T, d});
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t j = 0; j < d; ++j) {
      double acc = 0.0;
      for (std::size_t k = 0; k < d; ++k) acc += concat[t][k] * double(W_O(k, j));
      y(t, j) = static_cast<float>(acc);
    }
  return y;
}

}  // namespace reference
}  // namespace mha
