// Independent reference arithmetic for tests: plain loops, accumulated in
// double, written for clarity rather than speed. Hidden tests compare a
// learner's result on fresh random inputs (testing::FreshSeed) with these;
// they share no code with any solution.
//
//   Tensor2 y = naive::MatMul(x, W);                      // (T, in) @ (in, out)
//   naive::Attention a = naive::ScaledDotProduct(q, k, v, mask);
#ifndef MHA_TESTS_COMMON_NAIVE_H_
#define MHA_TESTS_COMMON_NAIVE_H_

#include <optional>

#include "common/core/tensor.h"

namespace mha {
namespace naive {

// (n, m) @ (m, p) -> (n, p).
Tensor2 MatMul(const Tensor2& a, const Tensor2& b);

// (T, S) additive causal mask, bottom-right aligned: query i sees key j when
// j <= S - T + i.
Tensor2 CausalMask(int T, int S);

struct Attention {
  Tensor3 output;   // (H, T, d_head)
  Tensor3 weights;  // (H, T, S); a query that sees no key has an all-zero row
};

// softmax(q k^T / sqrt(d_head) + mask) v, head by head.
Attention ScaledDotProduct(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                           const std::optional<Tensor2>& mask = std::nullopt);

// (T, H*d) -> (H, T, d): head h takes columns [h*d, (h+1)*d).
Tensor3 SplitHeads(const Tensor2& x, int n_heads);
// (H, T, d) -> (T, H*d).
Tensor2 CombineHeads(const Tensor3& heads);

// The multi-head layer: ((softmax per head of (x W_Q)(x W_K)^T / sqrt(d_head)
// + mask) (x W_V)) combined, @ W_O. W_K and W_V may be narrower than W_Q
// (grouped-query attention): kv head g serves query heads
// [g * H / H_kv, (g + 1) * H / H_kv).
Tensor2 MultiHeadForward(const Tensor2& x, const Tensor2& W_Q, const Tensor2& W_K,
                         const Tensor2& W_V, const Tensor2& W_O, int n_heads,
                         const std::optional<Tensor2>& mask = std::nullopt);

}  // namespace naive
}  // namespace mha

#endif  // MHA_TESTS_COMMON_NAIVE_H_
