// Lab 14: the transformer block.
//
// Attention is one of the two sub-layers of a GPT block. This lab writes the
// rest, forward and backward, one function per operation, and then the block
// that joins them around your own rotary attention (lab 11):
//
//   a = layer_norm(x, ln1_gamma, ln1_beta)       (T, d_model)  normalise before attending
//   h = x + attn.forward(a, causal_mask(T))      (T, d_model)  residual 1
//   b = layer_norm(h, ln2_gamma, ln2_beta)       (T, d_model)  normalise before the FFN
//   y = h + ffn.forward(b)                       (T, d_model)  residual 2
//
// This is the pre-LN order of GPT-2 (and of the seed course's Mini-GPT): each
// sub-layer reads a normalised copy of the residual stream and ADDS its output
// to the stream, which itself is never normalised on the way through.
//
// Every backward here returns the gradients of L = sum(output * d_output)
// with respect to the inputs and parameters of its forward, and recomputes
// what it needs from the forward: nothing is kept between calls. The block's
// backward forks at each residual: the gradient reaches the stream both
// around a sub-layer (the identity) and through it, and the two add up.
//
// All weights are public and read on every call: a test may overwrite them.
//
// Bad arguments throw std::invalid_argument naming the sizes, for example
//   "layer_norm: gamma has 63 elements, x has 64 columns"
//   "layer_norm: eps=0 must be > 0"
//   "gelu_backward: dy has shape (3, 4), expected (3, 5) (x's shape)"
//   "FeedForward: d_ff=0 must be at least 1"
//   "rope_backward: start=-1 must be >= 0"
//   "TransformerBlock: x has shape (5, 7), expected (T >= 1, d_model=8)"
//
// Lesson: docs/14_transformer_block.md.
#ifndef MHA_LABS_14_TRANSFORMER_BLOCK_TRANSFORMER_BLOCK_H_
#define MHA_LABS_14_TRANSFORMER_BLOCK_TRANSFORMER_BLOCK_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "common/tensor.h"
#include "labs/10_attention_backward/attention_backward.h"  // MhaGrads, attention_backward
#include "labs/11_rotary_embeddings/rotary_embeddings.h"    // RotaryAttention, apply_rope

namespace mha {

// LayerNorm of each row of x (T, d), biased variance (as torch.nn.LayerNorm):
//   mu_t = mean_i x[t,i]   var_t = mean_i (x[t,i] - mu_t)^2   rstd_t = 1 / sqrt(var_t + eps)
//   y[t,i] = (x[t,i] - mu_t) * rstd_t * gamma[i] + beta[i]
// A constant row gives y = beta (within float rounding of the mean), never NaN. Rows offset by
// 1e3 stay accurate to about 1e-3 with a two-pass variance in float; E[x^2] - E[x]^2 in float
// loses most digits there (rows of 64 values 1000 + N(0, 1): the variance 16% off in the median
// row, up to 93%; with a spread of 0.1, 43% of rows negative, so NaN): do not compute it so.
// gamma, beta: (d). eps <= 0, gamma or beta not (d): std::invalid_argument naming the sizes.
Tensor2 layer_norm(const Tensor2& x, const Tensor1& gamma, const Tensor1& beta, float eps = 1e-5f);

struct LayerNormGrads {
  Tensor2 dx;             // (T, d)
  Tensor1 dgamma, dbeta;  // (d)
};
// Gradients of sum(y * dy) for y = layer_norm(x, gamma, beta, eps); recomputes mu and rstd,
// keeps no state. With g = dy * gamma and xhat = (x - mu) * rstd, per row:
//   dx = rstd * (g - mean_i(g) - xhat * mean_i(g * xhat))
//   dgamma = sum_t dy * xhat      dbeta = sum_t dy
LayerNormGrads layer_norm_backward(const Tensor2& x, const Tensor1& gamma, float eps,
                                   const Tensor2& dy);

// GELU, exact form (torch.nn.functional.gelu's default, not the tanh approximation):
//   gelu(x) = x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2))     gelu'(x) = Phi(x) + x * phi(x)
// computed in double per element and rounded to float once. (Below x of about -8 the value is
// under 1e-15 in magnitude, and 0 is as right as an erfc form's tiny negative number: tests use
// an absolute tolerance there.)
Tensor2 gelu(const Tensor2& x);
Tensor2 gelu_backward(const Tensor2& x, const Tensor2& dy);  // dy * gelu'(x), shapes equal

// y = gelu(x @ W_1 + b_1) @ W_2 + b_2
class FeedForward {
 public:
  // From NumpyRng(seed), in this order: W_1 = normal_matrix(d_model, d_ff, d_model),
  // W_2 = normal_matrix(d_ff, d_model, d_ff). b_1 and b_2 start at zero (no draws).
  // d_model < 1 or d_ff < 1: std::invalid_argument.
  FeedForward(int d_model, int d_ff, std::uint64_t seed = 0);
  Tensor2 forward(const Tensor2& x) const;  // (T, d_model) -> (T, d_model)
  std::size_t parameter_count() const;      // 2 * d_model * d_ff + d_ff + d_model
  int d_model, d_ff;
  Tensor2 W_1;  Tensor1 b_1;                // (d_model, d_ff), (d_ff)
  Tensor2 W_2;  Tensor1 b_2;                // (d_ff, d_model), (d_model)

 private:
  friend struct remote::Access;  // the grader copies layers between processes
  friend class TransformerBlock;  // so that its blank default constructor can build a blank FFN
  FeedForward() = default;
};
struct FeedForwardGrads { Tensor2 dx, dW_1; Tensor1 db_1; Tensor2 dW_2; Tensor1 db_2; };
// Gradients of sum(y * dy) for y = ffn.forward(x).
FeedForwardGrads feed_forward_backward(const FeedForward& ffn, const Tensor2& x, const Tensor2& dy);

// The backward of lab 11's apply_rope. A rotation's transpose is the rotation by
// -p * theta_i, so rope_backward(apply_rope(x, s, b), s, b) == x (within float), and for any
// d, rope_backward(d, s, b) is the gradient of sum(apply_rope(x, s, b) * d) with respect to x.
// Angles as lab 11 (double; cos and sin rounded to float once). Errors as apply_rope's.
Tensor3 rope_backward(const Tensor3& d_rotated, int start = 0, double base = 10000.0);

// Gradients of sum(y * d_y) for y = layer.forward(x, mask) (lab 11, start 0); d_y: (T, d_model).
// Lab 10's mha_backward with rope_backward applied to dq and dk after attention_backward.
MhaGrads rotary_attention_backward(const RotaryAttention& layer, const Tensor2& x,
                                   const std::optional<Tensor2>& mask, const Tensor2& d_y);

// Pre-LN decoder block (GPT-2's order; the seed course's Mini-GPT), always causal, the
// tokens at positions 0 .. T-1:
//   a = layer_norm(x, ln1_gamma, ln1_beta)      h = x + attn.forward(a, causal_mask(T))
//   b = layer_norm(h, ln2_gamma, ln2_beta)      y = h + ffn.forward(b)
class TransformerBlock {
 public:
  // attn = RotaryAttention(d_model, n_heads, seed, base); ffn = FeedForward(d_model, d_ff,
  // seed + 1); gammas 1, betas 0 (no draws). Errors as lab 11's constructor, and d_ff < 1.
  TransformerBlock(int d_model, int n_heads, int d_ff, std::uint64_t seed = 0,
                   double base = 10000.0);
  Tensor2 forward(const Tensor2& x) const;            // (T, d_model), T >= 1
  Tensor3 attention_weights(const Tensor2& x) const;  // (n_heads, T, T): attn's softmax on a
  std::size_t parameter_count() const;                // 4 d^2 + 2 d d_ff + d_ff + d + 4 d
  int d_model, n_heads, d_ff;
  Tensor1 ln1_gamma, ln1_beta;  // (d_model)
  RotaryAttention attn;         // W_Q, W_K, W_V, W_O: (d_model, d_model)
  Tensor1 ln2_gamma, ln2_beta;  // (d_model)
  FeedForward ffn;

 private:
  friend struct remote::Access;  // the grader copies blocks between processes
  TransformerBlock() = default;
};
struct BlockGrads {  // the block's parameters in the order above, then dx
  Tensor1 dln1_gamma, dln1_beta;
  Tensor2 dW_Q, dW_K, dW_V, dW_O;
  Tensor1 dln2_gamma, dln2_beta;
  Tensor2 dW_1; Tensor1 db_1; Tensor2 dW_2; Tensor1 db_2;
  Tensor2 dx;  // (T, d_model)
};
// Gradients of sum(y * dy) for y = block.forward(x); eps is layer_norm's default, 1e-5, as in
// forward. Each residual forks the gradient:
//   dh = dy + layer_norm_backward(h, ln2_gamma, eps, feed_forward_backward(ffn, b, dy).dx).dx
//   dx = dh + layer_norm_backward(x, ln1_gamma, eps,
//                                 rotary_attention_backward(attn, a, causal_mask(T), dh).dx).dx
BlockGrads block_backward(const TransformerBlock& block, const Tensor2& x, const Tensor2& dy);

}  // namespace mha

#endif  // MHA_LABS_14_TRANSFORMER_BLOCK_TRANSFORMER_BLOCK_H_
