#include "tests/12_variant_backward/reference.h"

#include <cmath>
#include <limits>

namespace mha {
namespace reference {
namespace {

D2 MatMul(const D2& a, const D2& b) {
  D2 out = xt::zeros<double>({a.shape(0), b.shape(1)});
  for (std::size_t i = 0; i < a.shape(0); ++i)
    for (std::size_t t = 0; t < a.shape(1); ++t)
      for (std::size_t j = 0; j < b.shape(1); ++j) out(i, j) += a(i, t) * b(t, j);
  return out;
}

// Attention of every query head over the columns of K and V of the kv head it
// reads, then @ W_O. Q (T, H*d); K, V (T, n_kv*d).
D2 Attend(const D2& Q, const D2& K, const D2& V, const D2& W_O, int n_heads, int n_kv_heads,
          const std::optional<D2>& mask) {
  const std::size_t T = Q.shape(0), d = Q.shape(1) / n_heads;
  const int group = n_heads / n_kv_heads;
  D2 concat = xt::zeros<double>({T, Q.shape(1)});
  std::vector<double> s(T);
  for (int h = 0; h < n_heads; ++h) {
    const std::size_t qc = h * d, kc = (h / group) * d;
    for (std::size_t i = 0; i < T; ++i) {
      double max = -std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < T; ++j) {
        double dot = 0.0;
        for (std::size_t c = 0; c < d; ++c) dot += Q(i, qc + c) * K(j, kc + c);
        s[j] = dot / std::sqrt(double(d)) + (mask ? (*mask)(i, j) : 0.0);
        max = std::max(max, s[j]);
      }
      if (std::isinf(max)) continue;  // sees no key: a zero row
      double sum = 0.0;
      for (std::size_t j = 0; j < T; ++j) sum += (s[j] = std::exp(s[j] - max));
      for (std::size_t j = 0; j < T; ++j)
        for (std::size_t c = 0; c < d; ++c) concat(i, qc + c) += s[j] / sum * V(j, kc + c);
    }
  }
  return MatMul(concat, W_O);
}

}  // namespace

D2 GqaForward(const D2& x, const D2& W_Q, const D2& W_K, const D2& W_V, const D2& W_O,
              int n_heads, int n_kv_heads, const std::optional<D2>& mask) {
  return Attend(MatMul(x, W_Q), MatMul(x, W_K), MatMul(x, W_V), W_O, n_heads, n_kv_heads, mask);
}

D2 MlaForward(const D2& x, const D2& W_Q, const D2& W_DKV, const D2& W_UK, const D2& W_UV,
              const D2& W_O, int n_heads, const std::optional<D2>& mask) {
  const D2 c = MatMul(x, W_DKV);
  return Attend(MatMul(x, W_Q), MatMul(c, W_UK), MatMul(c, W_UV), W_O, n_heads, n_heads, mask);
}

}  // namespace reference
}  // namespace mha
