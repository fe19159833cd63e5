// Lab 14: the transformer block. This is the file you edit.
// Read docs/14_transformer_block.md first; the header labs/14_transformer_block/transformer_block.h
// says what each function must do.
// Check your work with:  bazel test //labs/14_transformer_block/...
#include "labs/14_transformer_block/transformer_block.h"

#include <stdexcept>

// What you may use besides earlier labs:
// #include <cmath>                       // std::erf, std::exp, std::sqrt, std::cos, std::sin
// #include "common/rng.h"                // NumpyRng: FeedForward draws W_1 and W_2 with it
// #include "common/core/matrix_ref.h"    // gemm: matrix products by BLAS, with transposes
// #include "common/core/shape_string.h"  // shape_string(x): "(2, 3)" for your error messages
//
// What you may call from earlier labs (and nothing else of theirs):
// #include "labs/01_split_heads/split_heads.h"      // split_heads, combine_heads
// #include "labs/02_batched_attention/attention.h"  // attention_batched, softmax_rows
// #include "labs/04_causal_mask/causal_mask.h"      // causal_mask(T)
// (lab 10's attention_backward, and lab 11's rope_angles, apply_rope and RotaryAttention's
// constructor and forward, come with the header above.)

namespace mha {

// ------------------------------------------------------------------ LayerNorm

Tensor2 layer_norm(const Tensor2& x, const Tensor1& gamma, const Tensor1& beta, float eps) {
  // TODO:
  // 1. Check eps > 0 and that gamma and beta have x.shape(1) elements, naming the sizes
  //    ("layer_norm: gamma has 63 elements, x has 64 columns").
  // 2. Per row: mu = the mean; var = the mean of (x - mu)^2 (two passes: never
  //    E[x^2] - E[x]^2); rstd = 1 / sqrt(var + eps).
  // 3. y = (x - mu) * rstd * gamma + beta.
  (void)x, (void)gamma, (void)beta, (void)eps;
  throw std::logic_error("lab 14: layer_norm is not implemented yet, see docs/14_transformer_block.md");
}

LayerNormGrads layer_norm_backward(const Tensor2& x, const Tensor1& gamma, float eps,
                                   const Tensor2& dy) {
  // TODO:
  // 1. The same checks, and dy shaped like x.
  // 2. Per row, recompute mu, rstd and xhat = (x - mu) * rstd; g = dy * gamma;
  //    dx = rstd * (g - mean(g) - xhat * mean(g * xhat)).
  // 3. dgamma = sum over rows of dy * xhat; dbeta = sum over rows of dy.
  (void)x, (void)gamma, (void)eps, (void)dy;
  throw std::logic_error("lab 14: layer_norm_backward is not implemented yet, see docs/14_transformer_block.md");
}

// ----------------------------------------------------------------------- GELU

Tensor2 gelu(const Tensor2& x) {
  // TODO: per element, in double: 0.5 * x * (1 + erf(x / sqrt(2))), rounded to float once.
  (void)x;
  throw std::logic_error("lab 14: gelu is not implemented yet, see docs/14_transformer_block.md");
}

Tensor2 gelu_backward(const Tensor2& x, const Tensor2& dy) {
  // TODO: check dy is shaped like x; per element, in double, dy * (Phi(x) + x * phi(x)),
  // with Phi(x) = 0.5 (1 + erf(x / sqrt 2)) and phi(x) = exp(-x^2 / 2) / sqrt(2 pi).
  (void)x, (void)dy;
  throw std::logic_error("lab 14: gelu_backward is not implemented yet, see docs/14_transformer_block.md");
}

// ---------------------------------------------------------------- FeedForward

FeedForward::FeedForward(int model_width, int hidden_width, std::uint64_t seed) {
  // TODO:
  // 1. Reject model_width < 1 or hidden_width < 1, naming the value.
  // 2. d_model = model_width, d_ff = hidden_width; from NumpyRng(seed), in this order:
  //    W_1 = normal_matrix(d_model, d_ff, d_model), W_2 = normal_matrix(d_ff, d_model, d_ff).
  // 3. b_1 = zeros (d_ff), b_2 = zeros (d_model).
  (void)model_width, (void)hidden_width, (void)seed;
  throw std::logic_error("lab 14: FeedForward is not implemented yet, see docs/14_transformer_block.md");
}

Tensor2 FeedForward::forward(const Tensor2& x) const {
  // TODO: check x is (T, d_model); return gelu(x @ W_1 + b_1) @ W_2 + b_2.
  (void)x;
  throw std::logic_error("lab 14: FeedForward::forward is not implemented yet, see docs/14_transformer_block.md");
}

std::size_t FeedForward::parameter_count() const {
  // TODO: two matrices and two bias vectors.
  throw std::logic_error("lab 14: FeedForward::parameter_count is not implemented yet, see docs/14_transformer_block.md");
}

FeedForwardGrads feed_forward_backward(const FeedForward& ffn, const Tensor2& x,
                                       const Tensor2& dy) {
  // TODO:
  // 1. Check x is (T, d_model) and dy shaped like x.
  // 2. Recompute u = x @ W_1 + b_1 and g = gelu(u).
  // 3. dW_2 = g^T dy, db_2 = sum over rows of dy, dg = dy W_2^T;
  //    du = gelu_backward(u, dg); dW_1 = x^T du, db_1 = sum over rows of du, dx = du W_1^T.
  (void)ffn, (void)x, (void)dy;
  throw std::logic_error("lab 14: feed_forward_backward is not implemented yet, see docs/14_transformer_block.md");
}

// ------------------------------------------------------------- RoPE, backward

Tensor3 rope_backward(const Tensor3& d_rotated, int start, double base) {
  // TODO:
  // 1. Check as apply_rope does: d_head even and >= 2, start >= 0, base > 1.
  // 2. The same angles as lab 11 (in double; cos and sin rounded to float once), and
  //    turn each pair (a, b) = (feature i, feature i + d_head/2) the OTHER way:
  //      out[a] = a cos + b sin      out[b] = b cos - a sin
  (void)d_rotated, (void)start, (void)base;
  throw std::logic_error("lab 14: rope_backward is not implemented yet, see docs/14_transformer_block.md");
}

MhaGrads rotary_attention_backward(const RotaryAttention& layer, const Tensor2& x,
                                   const std::optional<Tensor2>& mask, const Tensor2& d_y) {
  // TODO:
  // 1. Check x is (T, d_model), d_y shaped like x, the mask (T, T) when given.
  // 2. Forward again: Q, K, V = x @ W; split_heads; apply_rope to q and k (start 0);
  //    attention_batched; combine_heads gives concat.
  // 3. dW_O = concat^T d_y; d_concat = d_y W_O^T.
  // 4. attention_backward on the ROTATED q and k with split_heads(d_concat);
  //    rope_backward on dq and dk (not dv); combine_heads.
  // 5. dW_Q = x^T dQ (K, V likewise); dx = dQ W_Q^T + dK W_K^T + dV W_V^T.
  (void)layer, (void)x, (void)mask, (void)d_y;
  throw std::logic_error("lab 14: rotary_attention_backward is not implemented yet, see docs/14_transformer_block.md");
}

// ----------------------------------------------------------- TransformerBlock

// attn and ffn are built in the member initializer list, in the order they are declared:
//   : d_model(width), ..., attn(width, heads, seed, base), ffn(width, hidden, seed + 1)
TransformerBlock::TransformerBlock(int width, int heads, int hidden, std::uint64_t seed,
                                   double base) {
  // TODO:
  // 1. Reject hidden < 1 before anything is drawn; RotaryAttention's constructor checks the rest.
  // 2. attn = RotaryAttention(width, heads, seed, base);
  //    ffn = FeedForward(width, hidden, seed + 1).
  // 3. Both gammas are ones, both betas zeros, (d_model) each.
  (void)width, (void)heads, (void)hidden, (void)seed, (void)base;
  throw std::logic_error("lab 14: TransformerBlock is not implemented yet, see docs/14_transformer_block.md");
}

Tensor2 TransformerBlock::forward(const Tensor2& x) const {
  // TODO: check x is (T >= 1, d_model); then
  //   a = layer_norm(x, ln1_gamma, ln1_beta)    h = x + attn.forward(a, causal_mask(T))
  //   b = layer_norm(h, ln2_gamma, ln2_beta)    y = h + ffn.forward(b)
  (void)x;
  throw std::logic_error("lab 14: TransformerBlock::forward is not implemented yet, see docs/14_transformer_block.md");
}

Tensor3 TransformerBlock::attention_weights(const Tensor2& x) const {
  // TODO: the softmax weights attn computes on a = layer_norm(x, ln1_gamma, ln1_beta)
  // with causal_mask(T): (n_heads, T, T).
  (void)x;
  throw std::logic_error("lab 14: TransformerBlock::attention_weights is not implemented yet, see docs/14_transformer_block.md");
}

std::size_t TransformerBlock::parameter_count() const {
  // TODO: attention's four matrices, the FFN's parameters, two gammas and two betas.
  throw std::logic_error("lab 14: TransformerBlock::parameter_count is not implemented yet, see docs/14_transformer_block.md");
}

BlockGrads block_backward(const TransformerBlock& block, const Tensor2& x, const Tensor2& dy) {
  // TODO:
  // 1. Check dy is shaped like x; recompute a, h and b as forward does.
  // 2. Residual 2: dh = dy + layer_norm_backward(h, ln2_gamma, 1e-5,
  //                                              feed_forward_backward(ffn, b, dy).dx).dx
  // 3. Residual 1: dx = dh + layer_norm_backward(x, ln1_gamma, 1e-5,
  //                       rotary_attention_backward(attn, a, causal_mask(T), dh).dx).dx
  // 4. Fill every field of BlockGrads from the four backwards.
  (void)block, (void)x, (void)dy;
  throw std::logic_error("lab 14: block_backward is not implemented yet, see docs/14_transformer_block.md");
}

}  // namespace mha
