// An independent reference for lab 11's hidden tests: RoPE and the rotary
// layer written as plain loops in double, with no call into any lab. The
// fresh-random tests compare the learner's float results with it.
#ifndef MHA_TESTS_11_ROTARY_EMBEDDINGS_REFERENCE_H_
#define MHA_TESTS_11_ROTARY_EMBEDDINGS_REFERENCE_H_

#include "common/tensor.h"

namespace mha {
namespace reference {

// x (H, T, d_head), row t at position start + t: half-split pairs turned by
// (start + t) * base^(-2i / d_head), every step in double.
Tensor3 Rope(const Tensor3& x, long long start, double base);

// The rotary layer on x (T, d_model) at positions start .. start + T - 1:
// projections, per-head RoPE on q and k, softmax(q k^T / sqrt(d_head)) with a
// causal mask when `causal`, @ v, combine, @ W_O; in double.
Tensor2 RotaryForward(const Tensor2& W_Q, const Tensor2& W_K, const Tensor2& W_V,
                      const Tensor2& W_O, int n_heads, double base, const Tensor2& x,
                      bool causal, long long start);

}  // namespace reference
}  // namespace mha

#endif  // MHA_TESTS_11_ROTARY_EMBEDDINGS_REFERENCE_H_
