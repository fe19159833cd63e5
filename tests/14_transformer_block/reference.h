// An independent double-precision reference of lab 14, for the hidden tests:
// LayerNorm, GELU, the FFN, the rotation, rotary attention and the pre-LN
// block, forward only, as plain loops (no lab code). The gradient tests
// differentiate these forwards by central differences (tests/common/naive.h).
#ifndef MHA_TESTS_14_TRANSFORMER_BLOCK_REFERENCE_H_
#define MHA_TESTS_14_TRANSFORMER_BLOCK_REFERENCE_H_

#include <xtensor/xtensor.hpp>

#include "labs/14_transformer_block/transformer_block.h"

namespace mha {
namespace reference {

using D1 = xt::xtensor<double, 1>;
using D2 = xt::xtensor<double, 2>;
using D3 = xt::xtensor<double, 3>;

// The block's parameters in double (BlockGrads' order), and its sizes.
struct Block {
  int n_heads = 1;
  double base = 10000.0;
  D1 ln1_gamma, ln1_beta;
  D2 W_Q, W_K, W_V, W_O;
  D1 ln2_gamma, ln2_beta;
  D2 W_1;
  D1 b_1;
  D2 W_2;
  D1 b_2;
};
Block FromBlock(const TransformerBlock& block);

// Per row: (x - mean) / sqrt(biased variance + eps) * gamma + beta.
D2 LayerNorm(const D2& x, const D1& gamma, const D1& beta, double eps = 1e-5);
// x Phi(x), elementwise.
D2 Gelu(const D2& x);
// gelu(x W_1 + b_1) W_2 + b_2.
D2 FeedForward(const D2& x, const D2& W_1, const D1& b_1, const D2& W_2, const D1& b_2);
// x (H, T, d_head), row t turned by (start + t) theta_i, half-split pairs.
D3 Rotate(const D3& x, int start, double base);
// Rotary attention at positions 0 .. T-1, causal or not; `weights`, when
// given, receives the softmax (H, T, T).
D2 RotaryAttention(const D2& x, const D2& W_Q, const D2& W_K, const D2& W_V, const D2& W_O,
                   int n_heads, double base, bool causal, D3* weights = nullptr);
// The pre-LN block; `weights` as above, of its attention.
D2 BlockForward(const Block& block, const D2& x, D3* weights = nullptr);

}  // namespace reference
}  // namespace mha

#endif  // MHA_TESTS_14_TRANSFORMER_BLOCK_REFERENCE_H_
