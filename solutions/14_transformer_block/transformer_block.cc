// Lab 14 reference solution: the transformer block, forward and backward.
//
// One function per operation, each forward beside its backward:
//
//   forward                                  backward (of L = sum(out * d_out))
//   y = layer_norm(x)                        dx = rstd (g - mean(g) - xhat mean(g xhat))
//   y = gelu(x)                              dx = dy gelu'(x)
//   y = gelu(x W_1 + b_1) W_2 + b_2          the chain through both products and the GELU
//   y = apply_rope(x)        (lab 11)        dx = the rotation by the opposite angle
//   y = rotary attention     (lab 11)        lab 10's steps, with the rotation undone on dq, dk
//   y = the pre-LN block                     both sub-layers' backwards, and the residual forks
//
// Each backward recomputes what it needs from its forward's inputs: the API
// keeps no state between calls, and recomputing is cheap next to the
// products.
//
// Every matrix product is one BLAS call (gemm, common/core/matrix_ref.h): lab 15
// trains two of these blocks for a thousand steps, and a loop of xtensor
// expressions would make that minutes instead of seconds.
#include "labs/14_transformer_block/transformer_block.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor/xbuilder.hpp>

#include "common/core/matrix_ref.h"
#include "common/core/shape_string.h"
#include "common/rng.h"
#include "labs/01_split_heads/split_heads.h"
#include "labs/02_batched_attention/attention.h"
#include "labs/04_causal_mask/causal_mask.h"

namespace mha {
namespace {

constexpr float kLayerNormEps = 1e-5f;  // layer_norm's default, which the block uses

// ------------------------------------------------------------------ checks

// x must be (T >= 1, width): the width a layer was built for.
void check_rows(const std::string& who, const std::string& name, const Tensor2& x,
                std::size_t width, const std::string& width_name) {
  if (x.shape(0) < 1 || x.shape(1) != width) {
    throw std::invalid_argument(who + ": " + name + " has shape " + shape_string(x) +
                                ", expected (T >= 1, " + width_name + "=" +
                                std::to_string(width) + ")");
  }
}

// A gradient has the shape of the output it belongs to.
void check_same_shape(const std::string& who, const std::string& name, const Tensor2& t,
                      const Tensor2& like, const std::string& like_name) {
  if (t.shape() != like.shape()) {
    throw std::invalid_argument(who + ": " + name + " has shape " + shape_string(t) +
                                ", expected " + shape_string(like) + " (" + like_name +
                                "'s shape)");
  }
}

void check_vector(const std::string& who, const std::string& name, const Tensor1& v,
                  const Tensor2& x) {
  if (v.size() != x.shape(1)) {
    throw std::invalid_argument(who + ": " + name + " has " + std::to_string(v.size()) +
                                " elements, x has " + std::to_string(x.shape(1)) + " columns");
  }
}

void check_layer_norm(const std::string& who, const Tensor2& x, const Tensor1& gamma, float eps) {
  if (x.shape(1) < 1) {
    throw std::invalid_argument(who + ": x has shape " + shape_string(x) +
                                ", expected at least one column to normalise");
  }
  check_vector(who, "gamma", gamma, x);
  // eps keeps 1 / sqrt(var + eps) finite on a constant row; NaN fails too.
  if (!(eps > 0.0f)) {
    throw std::invalid_argument(who + ": eps=" + std::to_string(eps) + " must be > 0");
  }
}

// ---------------------------------------------------------- small helpers

// out = x @ W + b: each row of out starts as b, then BLAS adds the product.
Tensor2 affine(const Tensor2& x, const Tensor2& W, const Tensor1& b) {
  Tensor2 out = Tensor2::from_shape({x.shape(0), W.shape(1)});  // (T, out)
  for (std::size_t t = 0; t < out.shape(0); ++t) {
    std::copy(b.begin(), b.end(), &out(t, 0));
  }
  gemm(whole(x), false, whole(W), false, whole(out), 1.0f, /*beta=*/1.0f);
  return out;
}

// sum_t m[t, :]: a bias was added to every row, so its gradient is the sum
// of every row's gradient.
Tensor1 column_sums(const Tensor2& m) {
  Tensor1 sums = xt::zeros<float>({m.shape(1)});  // (cols)
  for (std::size_t t = 0; t < m.shape(0); ++t) {
    for (std::size_t i = 0; i < m.shape(1); ++i) sums(i) += m(t, i);
  }
  return sums;
}

// a^T b (a weight's gradient: input^T upstream) and a b^T (an input's: upstream W^T).
Tensor2 at_b(const Tensor2& a, const Tensor2& b) {
  Tensor2 out = Tensor2::from_shape({a.shape(1), b.shape(1)});
  gemm(whole(a), /*transpose_a=*/true, whole(b), false, whole(out));
  return out;
}
Tensor2 a_bt(const Tensor2& a, const Tensor2& b) {
  Tensor2 out = Tensor2::from_shape({a.shape(0), b.shape(0)});
  gemm(whole(a), false, whole(b), /*transpose_b=*/true, whole(out));
  return out;
}

// ------------------------------------------------------------- LayerNorm

// The statistics of row t: its mean and 1 / sqrt(var + eps). Two passes:
// the mean first, then the mean of squared distances from it. The one-pass
// E[x^2] - E[x]^2 subtracts two numbers of about mu^2 to get var: on a row
// offset by 1e3, mu^2 = 1e6 and a float keeps 7 digits of it, so a variance
// of 1 comes out with no correct digit (or negative, and sqrt gives NaN).
struct RowStats {
  float mu, rstd;
};

RowStats row_stats(const float* row, std::size_t d, float eps) {
  float sum = 0.0f;
  for (std::size_t i = 0; i < d; ++i) sum += row[i];
  const float mu = sum / static_cast<float>(d);
  float squares = 0.0f;
  for (std::size_t i = 0; i < d; ++i) squares += (row[i] - mu) * (row[i] - mu);
  // Divide by d, not d - 1: the biased variance, as torch.nn.LayerNorm.
  const float var = squares / static_cast<float>(d);
  return {mu, 1.0f / std::sqrt(var + eps)};
}

// ------------------------------------------------------------------ GELU

// Phi and phi, the standard normal's distribution and density, in double.
double normal_cdf(double x) { return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))); }
double normal_pdf(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI); }

// ------------------------------------------------------------------ RoPE

// theta_i = base^(-2i / d_head) for pair i, in double: lab 11's frequencies.
std::vector<double> rope_frequencies(std::size_t d_head, double base) {
  std::vector<double> theta(d_head / 2);
  for (std::size_t i = 0; i < theta.size(); ++i) {
    theta[i] = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d_head));
  }
  return theta;
}

// ------------------------------------------------------- rotary attention

// The heads of the rotary layer on x (T, d_model), at positions 0 .. T-1:
// what lab 11's forward computes before attending. q and k rotated, v not.
struct RotaryHeads {
  Tensor3 q, k, v;  // (H, T, d_head) each
};

RotaryHeads rotary_heads(const RotaryAttention& layer, const Tensor2& x) {
  const std::size_t T = x.shape(0), d = static_cast<std::size_t>(layer.d_model);
  Tensor2 Q = Tensor2::from_shape({T, d}), K = Q, V = Q;     // (T, d_model) each
  gemm(whole(x), false, whole(layer.W_Q), false, whole(Q));  // as lab 11's forward
  gemm(whole(x), false, whole(layer.W_K), false, whole(K));
  gemm(whole(x), false, whole(layer.W_V), false, whole(V));
  return {apply_rope(split_heads(Q, layer.n_heads), 0, layer.base),  // (H, T, d_head)
          apply_rope(split_heads(K, layer.n_heads), 0, layer.base),  // (H, T, d_head)
          split_heads(V, layer.n_heads)};                            // (H, T, d_head)
}

// ------------------------------------------------------------------ block

// The block's forward, keeping what the backward needs.
struct BlockActivations {
  Tensor2 mask;  // (T, T) causal
  Tensor2 a;     // (T, d_model) layer_norm(x): attention's input
  Tensor2 h;     // (T, d_model) x + attention: the stream after residual 1
  Tensor2 b;     // (T, d_model) layer_norm(h): the FFN's input
};

BlockActivations run_block(const TransformerBlock& block, const Tensor2& x) {
  check_rows("TransformerBlock", "x", x, static_cast<std::size_t>(block.d_model), "d_model");
  BlockActivations f;
  f.mask = causal_mask(static_cast<int>(x.shape(0)));           // (T, T)
  f.a = layer_norm(x, block.ln1_gamma, block.ln1_beta);         // (T, d_model)
  // Residual 1: attention ADDS to the stream; it reads a normalised copy.
  f.h = x + block.attn.forward(f.a, f.mask);                    // (T, d_model)
  f.b = layer_norm(f.h, block.ln2_gamma, block.ln2_beta);       // (T, d_model)
  return f;
}

}  // namespace

// ============================================================== LayerNorm

Tensor2 layer_norm(const Tensor2& x, const Tensor1& gamma, const Tensor1& beta, float eps) {
  check_layer_norm("layer_norm", x, gamma, eps);
  check_vector("layer_norm", "beta", beta, x);
  const std::size_t T = x.shape(0), d = x.shape(1);
  Tensor2 y = Tensor2::from_shape({T, d});  // (T, d)
  for (std::size_t t = 0; t < T; ++t) {
    const RowStats s = row_stats(&x(t, 0), d, eps);
    for (std::size_t i = 0; i < d; ++i) {
      // xhat has mean 0 and variance ~1; gamma and beta then give the row
      // back whatever scale and offset training finds useful.
      const float xhat = (x(t, i) - s.mu) * s.rstd;
      y(t, i) = xhat * gamma(i) + beta(i);
    }
  }
  return y;
}

LayerNormGrads layer_norm_backward(const Tensor2& x, const Tensor1& gamma, float eps,
                                   const Tensor2& dy) {
  check_layer_norm("layer_norm_backward", x, gamma, eps);
  check_same_shape("layer_norm_backward", "dy", dy, x, "x");
  const std::size_t T = x.shape(0), d = x.shape(1);
  LayerNormGrads grads{Tensor2::from_shape({T, d}), xt::zeros<float>({d}),
                       xt::zeros<float>({d})};
  std::vector<float> xhat(d), g(d);  // one row
  for (std::size_t t = 0; t < T; ++t) {
    const RowStats s = row_stats(&x(t, 0), d, eps);  // recomputed: no state kept
    float mean_g = 0.0f, mean_gx = 0.0f;
    for (std::size_t i = 0; i < d; ++i) {
      xhat[i] = (x(t, i) - s.mu) * s.rstd;
      g[i] = dy(t, i) * gamma(i);  // the gradient of xhat
      mean_g += g[i];
      mean_gx += g[i] * xhat[i];
      // gamma and beta act on every row: their gradients sum over rows.
      grads.dgamma(i) += dy(t, i) * xhat[i];
      grads.dbeta(i) += dy(t, i);
    }
    mean_g /= static_cast<float>(d);
    mean_gx /= static_cast<float>(d);
    // xhat = (x - mu) * rstd, and mu and rstd depend on every x of the row:
    // dx = rstd * (g - mean(g) - xhat * mean(g * xhat)). The mean(g) term
    // is the path through mu (shifting the whole row changes nothing), the
    // last the path through rstd (scaling the row changes nothing), so the
    // gradient has no component along 1 or, with eps -> 0, along xhat.
    for (std::size_t i = 0; i < d; ++i) {
      grads.dx(t, i) = s.rstd * (g[i] - mean_g - xhat[i] * mean_gx);
    }
  }
  return grads;
}

// =================================================================== GELU

Tensor2 gelu(const Tensor2& x) {
  Tensor2 y = Tensor2::from_shape({x.shape(0), x.shape(1)});
  for (std::size_t j = 0; j < x.size(); ++j) {
    // x * Phi(x): keep x in proportion to how likely a standard normal is
    // below it. In double, rounded once: erf is the costly part anyway.
    const double v = x.data()[j];
    y.data()[j] = static_cast<float>(v * normal_cdf(v));
  }
  return y;
}

Tensor2 gelu_backward(const Tensor2& x, const Tensor2& dy) {
  check_same_shape("gelu_backward", "dy", dy, x, "x");
  Tensor2 dx = Tensor2::from_shape({x.shape(0), x.shape(1)});
  for (std::size_t j = 0; j < x.size(); ++j) {
    // d/dx [x Phi(x)] = Phi(x) + x phi(x): the product rule, with Phi' = phi.
    const double v = x.data()[j];
    dx.data()[j] = static_cast<float>(dy.data()[j] * (normal_cdf(v) + v * normal_pdf(v)));
  }
  return dx;
}

// =========================================================== FeedForward

FeedForward::FeedForward(int model_width, int hidden_width, std::uint64_t seed)
    : d_model(model_width), d_ff(hidden_width) {
  if (d_model < 1) {
    throw std::invalid_argument("FeedForward: d_model=" + std::to_string(d_model) +
                                " must be at least 1");
  }
  if (d_ff < 1) {
    throw std::invalid_argument("FeedForward: d_ff=" + std::to_string(d_ff) +
                                " must be at least 1");
  }
  const std::size_t d = static_cast<std::size_t>(d_model), f = static_cast<std::size_t>(d_ff);
  NumpyRng rng(seed);
  W_1 = rng.normal_matrix(d, f, d);  // (d_model, d_ff), fan-in d_model
  W_2 = rng.normal_matrix(f, d, f);  // (d_ff, d_model), fan-in d_ff
  b_1 = xt::zeros<float>({f});       // (d_ff)
  b_2 = xt::zeros<float>({d});       // (d_model)
}

namespace {
// The FFN's weights against its sizes: a test may overwrite them.
void check_ffn(const std::string& who, const FeedForward& ffn, const Tensor2& x) {
  check_rows(who, "x", x, static_cast<std::size_t>(ffn.d_model), "d_model");
  const std::size_t d = static_cast<std::size_t>(ffn.d_model);
  const std::size_t f = static_cast<std::size_t>(ffn.d_ff);
  if (ffn.W_1.shape() != std::array<std::size_t, 2>{d, f} || ffn.b_1.size() != f ||
      ffn.W_2.shape() != std::array<std::size_t, 2>{f, d} || ffn.b_2.size() != d) {
    throw std::invalid_argument(who + ": W_1 " + shape_string(ffn.W_1) + ", b_1 " +
                                shape_string(ffn.b_1) + ", W_2 " + shape_string(ffn.W_2) +
                                ", b_2 " + shape_string(ffn.b_2) + " do not fit d_model=" +
                                std::to_string(d) + ", d_ff=" + std::to_string(f));
  }
}
}  // namespace

Tensor2 FeedForward::forward(const Tensor2& x) const {
  check_ffn("FeedForward", *this, x);
  const Tensor2 u = affine(x, W_1, b_1);  // (T, d_ff): each token widened, on its own
  return affine(gelu(u), W_2, b_2);       // (T, d_model): and brought back
}

std::size_t FeedForward::parameter_count() const {
  const std::size_t d = static_cast<std::size_t>(d_model), f = static_cast<std::size_t>(d_ff);
  return 2 * d * f + f + d;  // W_1, W_2, b_1, b_2
}

FeedForwardGrads feed_forward_backward(const FeedForward& ffn, const Tensor2& x,
                                       const Tensor2& dy) {
  check_ffn("feed_forward_backward", ffn, x);
  check_same_shape("feed_forward_backward", "dy", dy, x, "x");
  // The forward again, keeping u (pre-activation) and g = gelu(u).
  const Tensor2 u = affine(x, ffn.W_1, ffn.b_1);  // (T, d_ff)
  const Tensor2 g = gelu(u);                      // (T, d_ff)

  FeedForwardGrads grads;
  // y = g W_2 + b_2: as lab 10's W_O, dW_2 = g^T dy and dg = dy W_2^T.
  grads.dW_2 = at_b(g, dy);          // (d_ff, d_model)
  grads.db_2 = column_sums(dy);      // (d_model)
  const Tensor2 dg = a_bt(dy, ffn.W_2);  // (T, d_ff)
  // g = gelu(u), elementwise: its backward is elementwise too.
  const Tensor2 du = gelu_backward(u, dg);  // (T, d_ff)
  // u = x W_1 + b_1: the same step once more.
  grads.dW_1 = at_b(x, du);          // (d_model, d_ff)
  grads.db_1 = column_sums(du);      // (d_ff)
  grads.dx = a_bt(du, ffn.W_1);      // (T, d_model)
  return grads;
}

// ============================================================ RoPE's backward

Tensor3 rope_backward(const Tensor3& d_rotated, int start, double base) {
  const std::size_t H = d_rotated.shape(0), T = d_rotated.shape(1), dh = d_rotated.shape(2);
  if (dh < 2 || dh % 2 != 0) {
    throw std::invalid_argument("rope_backward: d_head=" + std::to_string(dh) +
                                " must be even and at least 2 (features are rotated in pairs)");
  }
  if (start < 0) {
    throw std::invalid_argument("rope_backward: start=" + std::to_string(start) +
                                " must be >= 0");
  }
  if (!(base > 1.0)) {
    throw std::invalid_argument("rope_backward: base=" + std::to_string(base) + " must be > 1");
  }
  const std::vector<double> theta = rope_frequencies(dh, base);
  const std::size_t half = dh / 2;
  Tensor3 dx = Tensor3::from_shape({H, T, dh});  // (H, T, d_head)
  for (std::size_t t = 0; t < T; ++t) {
    const double p = static_cast<double>(start) + static_cast<double>(t);
    for (std::size_t i = 0; i < half; ++i) {
      const double angle = p * theta[i];  // in double, as apply_rope's
      const float c = static_cast<float>(std::cos(angle)), s = static_cast<float>(std::sin(angle));
      for (std::size_t h = 0; h < H; ++h) {
        // The forward turned the pair (a, b) by R = [c -s; s c]. The gradient
        // goes back through R^T = [c s; -s c], the turn by -angle: a rotation
        // is orthogonal, so its transpose is its inverse.
        const float da = d_rotated(h, t, i), db = d_rotated(h, t, i + half);
        dx(h, t, i) = da * c + db * s;
        dx(h, t, i + half) = db * c - da * s;
      }
    }
  }
  return dx;
}

// ==================================================== rotary attention's backward

MhaGrads rotary_attention_backward(const RotaryAttention& layer, const Tensor2& x,
                                   const std::optional<Tensor2>& mask, const Tensor2& d_y) {
  const std::string who = "rotary_attention_backward";
  check_rows(who, "x", x, static_cast<std::size_t>(layer.d_model), "d_model");
  check_same_shape(who, "d_y", d_y, x, "x");
  const std::size_t T = x.shape(0);
  if (mask && (mask->shape(0) != T || mask->shape(1) != T)) {
    throw std::invalid_argument(who + ": mask has shape " + shape_string(*mask) + ", expected (" +
                                std::to_string(T) + ", " + std::to_string(T) + ")");
  }
  // pass 1: lab 11's forward again, keeping the rotated q, k and v and the
  // heads' output side by side (concat).
  const RotaryHeads heads = rotary_heads(layer, x);  // q, k, v: (H, T, d_head)
  const Tensor2 concat =
      combine_heads(attention_batched(heads.q, heads.k, heads.v, mask).output);  // (T, d_model)

  MhaGrads grads;
  // pass 2, y = concat W_O: dW_O = concat^T d_y, d_concat = d_y W_O^T.
  grads.dW_O = at_b(concat, d_y);                // (d_model, d_model)
  const Tensor2 d_concat = a_bt(d_y, layer.W_O);  // (T, d_model)
  // pass 3: attention's backward (lab 10), on the ROTATED q and k: they are
  // what the scores saw, so dq and dk come out as gradients of rotated ones.
  const AttentionGrads g = attention_backward(heads.q, heads.k, heads.v, mask,
                                              split_heads(d_concat, layer.n_heads));
  // pass 4: undo the rotation on the gradients (its transpose); v was never
  // rotated, so dv passes as it is.
  const Tensor2 dQ = combine_heads(rope_backward(g.dq, 0, layer.base));  // (T, d_model)
  const Tensor2 dK = combine_heads(rope_backward(g.dk, 0, layer.base));  // (T, d_model)
  const Tensor2 dV = combine_heads(g.dv);                                // (T, d_model)
  // pass 5, Q = x W_Q (and K, V): as lab 10.
  grads.dW_Q = at_b(x, dQ);
  grads.dW_K = at_b(x, dK);
  grads.dW_V = at_b(x, dV);
  // x feeds all three projections: three paths, added (beta = 1).
  grads.dx = a_bt(dQ, layer.W_Q);  // (T, d_model)
  gemm(whole(dK), false, whole(layer.W_K), /*transpose_b=*/true, whole(grads.dx), 1.0f, 1.0f);
  gemm(whole(dV), false, whole(layer.W_V), /*transpose_b=*/true, whole(grads.dx), 1.0f, 1.0f);
  return grads;
}

// ======================================================== TransformerBlock

namespace {
int checked_d_ff(int d_ff) {
  if (d_ff < 1) {
    throw std::invalid_argument("TransformerBlock: d_ff=" + std::to_string(d_ff) +
                                " must be at least 1");
  }
  return d_ff;
}
}  // namespace

// The members are built in their order of declaration: d_ff is checked before
// anything is drawn, and attn (lab 11's constructor) checks the rest.
TransformerBlock::TransformerBlock(int width, int heads, int hidden, std::uint64_t seed,
                                   double base)
    : d_model(width),
      n_heads(heads),
      d_ff(checked_d_ff(hidden)),
      attn(width, heads, seed, base),
      ffn(width, hidden, seed + 1) {
  const std::size_t d = static_cast<std::size_t>(d_model);
  // Gamma 1 and beta 0: each LayerNorm starts as the plain normalisation.
  ln1_gamma = xt::ones<float>({d});
  ln1_beta = xt::zeros<float>({d});
  ln2_gamma = xt::ones<float>({d});
  ln2_beta = xt::zeros<float>({d});
}

Tensor2 TransformerBlock::forward(const Tensor2& x) const {
  const BlockActivations f = run_block(*this, x);
  // Residual 2: the FFN, too, adds to the stream what it reads from a
  // normalised copy of it.
  return f.h + ffn.forward(f.b);  // (T, d_model)
}

Tensor3 TransformerBlock::attention_weights(const Tensor2& x) const {
  check_rows("TransformerBlock", "x", x, static_cast<std::size_t>(d_model), "d_model");
  const Tensor2 a = layer_norm(x, ln1_gamma, ln1_beta);  // (T, d_model): what attn reads
  const RotaryHeads heads = rotary_heads(attn, a);       // (H, T, d_head) each
  const Tensor2 mask = causal_mask(static_cast<int>(x.shape(0)));
  return attention_batched(heads.q, heads.k, heads.v, mask).weights;  // (H, T, T)
}

std::size_t TransformerBlock::parameter_count() const {
  const std::size_t d = static_cast<std::size_t>(d_model);
  // W_Q, W_K, W_V, W_O; the FFN; two gammas and two betas.
  return 4 * d * d + ffn.parameter_count() + 4 * d;
}

BlockGrads block_backward(const TransformerBlock& block, const Tensor2& x, const Tensor2& dy) {
  check_same_shape("block_backward", "dy", dy, x, "x");
  const BlockActivations f = run_block(block, x);  // mask, a, h, b

  // Residual 2, y = h + ffn(layer_norm(h)): h reaches y twice, around the
  // FFN (the identity: dy itself) and through it. The two paths add.
  const FeedForwardGrads ffn_grads = feed_forward_backward(block.ffn, f.b, dy);
  const LayerNormGrads ln2 = layer_norm_backward(f.h, block.ln2_gamma, kLayerNormEps,
                                                 ffn_grads.dx);
  const Tensor2 dh = dy + ln2.dx;  // (T, d_model)

  // Residual 1, h = x + attn(layer_norm(x)): the same fork, one level down.
  const MhaGrads attn_grads = rotary_attention_backward(block.attn, f.a, f.mask, dh);
  const LayerNormGrads ln1 = layer_norm_backward(x, block.ln1_gamma, kLayerNormEps,
                                                 attn_grads.dx);
  const Tensor2 dx = dh + ln1.dx;  // (T, d_model)

  // Every parameter's gradient, in the block's order, then dx.
  return {ln1.dgamma,     ln1.dbeta,      attn_grads.dW_Q, attn_grads.dW_K, attn_grads.dW_V,
          attn_grads.dW_O, ln2.dgamma,    ln2.dbeta,       ffn_grads.dW_1,  ffn_grads.db_1,
          ffn_grads.dW_2, ffn_grads.db_2, dx};
}

}  // namespace mha
