// The learner's lab 2 file for the case extra_helper_of_lab2: no lab 2
// function (its own grade does not matter here), and one extra helper with
// external linkage, full attention by loops, that lab 9 means to borrow.
#include "labs/02_batched_attention/attention.h"

#include <cmath>
#include <vector>

namespace mha {

Tensor3 lab2_attention_helper(const Tensor3& q, const Tensor3& k, const Tensor3& v) {
  const std::size_t H = q.shape(0), T = q.shape(1), S = k.shape(1), d = q.shape(2);
  Tensor3 out = xt::zeros<float>({H, T, v.shape(2)});
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  std::vector<float> p(S);
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t i = 0; i < T; ++i) {
      float m = -INFINITY, l = 0.0f;
      for (std::size_t j = 0; j < S; ++j) {
        float s = 0.0f;
        for (std::size_t c = 0; c < d; ++c) s += q(h, i, c) * k(h, j, c);
        p[j] = s * scale;
        m = std::fmax(m, p[j]);
      }
      for (std::size_t j = 0; j < S; ++j) l += (p[j] = std::exp(p[j] - m));
      for (std::size_t j = 0; j < S; ++j)
        for (std::size_t c = 0; c < v.shape(2); ++c) out(h, i, c) += p[j] / l * v(h, j, c);
    }
  }
  return out;
}

}  // namespace mha
