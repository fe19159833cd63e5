#include "tests/common/naive.h"

#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace mha {
namespace naive {

Tensor2 MatMul(const Tensor2& a, const Tensor2& b) { return MatMulOf(a, b); }

Tensor2 CausalMask(int T, int S) {
  Tensor2 mask = xt::zeros<float>({std::size_t(T), std::size_t(S)});
  for (int i = 0; i < T; ++i) {
    for (int j = 0; j < S; ++j) {
      if (j > S - T + i) mask(i, j) = -std::numeric_limits<float>::infinity();
    }
  }
  return mask;
}

Attention ScaledDotProduct(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                           const std::optional<Tensor2>& mask) {
  const std::size_t H = q.shape(0), T = q.shape(1), d = q.shape(2), S = k.shape(1);
  const std::size_t dv = v.shape(2);
  const double scale = 1.0 / std::sqrt(double(d));
  Attention out{xt::zeros<float>({H, T, dv}), xt::zeros<float>({H, T, S})};
  std::vector<double> scores(S);
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t i = 0; i < T; ++i) {
      // pass 1: scaled, masked scores and their max
      double max = -std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < S; ++j) {
        double s = 0.0;
        for (std::size_t c = 0; c < d; ++c) s += double(q(h, i, c)) * double(k(h, j, c));
        s *= scale;
        if (mask) s += double((*mask)(i, j));
        scores[j] = s;
        if (s > max) max = s;
      }
      if (max == -std::numeric_limits<double>::infinity()) continue;  // sees no key: zeros
      // pass 2: exponentials and their sum
      double sum = 0.0;
      for (std::size_t j = 0; j < S; ++j) {
        scores[j] = std::exp(scores[j] - max);
        sum += scores[j];
      }
      // pass 3: weights and the weighted sum of values
      for (std::size_t j = 0; j < S; ++j) {
        const double p = scores[j] / sum;
        out.weights(h, i, j) = static_cast<float>(p);
        for (std::size_t c = 0; c < dv; ++c) out.output(h, i, c) += static_cast<float>(p * v(h, j, c));
      }
    }
  }
  return out;
}

Tensor3 SplitHeads(const Tensor2& x, int n_heads) {
  return SplitHeadsOf(x, static_cast<std::size_t>(n_heads));
}

Tensor2 CombineHeads(const Tensor3& heads) { return CombineHeadsOf(heads); }

Tensor2 MultiHeadForward(const Tensor2& x, const Tensor2& W_Q, const Tensor2& W_K,
                         const Tensor2& W_V, const Tensor2& W_O, int n_heads,
                         const std::optional<Tensor2>& mask) {
  const std::size_t H = std::size_t(n_heads);
  const std::size_t d_head = W_Q.shape(1) / H;
  const std::size_t H_kv = W_K.shape(1) / d_head;
  const Tensor3 q = SplitHeads(MatMul(x, W_Q), n_heads);
  const Tensor3 k_kv = SplitHeads(MatMul(x, W_K), int(H_kv));
  const Tensor3 v_kv = SplitHeads(MatMul(x, W_V), int(H_kv));
  // Each kv head serves a contiguous group of query heads.
  Tensor3 k = xt::zeros<float>({H, k_kv.shape(1), d_head});
  Tensor3 v = xt::zeros<float>({H, v_kv.shape(1), d_head});
  for (std::size_t h = 0; h < H; ++h) {
    const std::size_t g = h / (H / H_kv);
    for (std::size_t s = 0; s < k.shape(1); ++s)
      for (std::size_t c = 0; c < d_head; ++c) {
        k(h, s, c) = k_kv(g, s, c);
        v(h, s, c) = v_kv(g, s, c);
      }
  }
  return MatMul(CombineHeads(ScaledDotProduct(q, k, v, mask).output), W_O);
}

}  // namespace naive
}  // namespace mha
