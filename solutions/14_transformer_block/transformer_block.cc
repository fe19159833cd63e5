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
// Each backward recomputes what it needs from its forward's inputs (the API
// keeps no state between calls), but nothing twice: block_backward runs the
// forward once, keeping attention's rotated q, k, v and output, and one table
// of cos and sin turns q and k, then dq and dk back. Lab 15 trains two blocks
// for a thousand steps, so every matrix product is one BLAS call (gemm,
// common/core/matrix_ref.h), and GELU's erf and exp (in double, as the header
// asks) run several lanes at a time (erf_of, exp_of, common/core/vector_math.h).
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
#include "common/core/vector_math.h"
#include "common/rng.h"
#include "labs/01_split_heads/split_heads.h"
#include "labs/02_batched_attention/attention.h"
#include "labs/04_causal_mask/causal_mask.h"

namespace mha {
namespace {

constexpr float kLayerNormEps = 1e-5f;  // layer_norm's default, which the block uses

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
    throw std::invalid_argument(who + ": " + name + " has shape " + shape_string(t) + ", expected "
                                + shape_string(like) + " (" + like_name + "'s shape)");
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

// out = x @ W + b: each row of out starts as b, then BLAS adds the product.
Tensor2 affine(const Tensor2& x, const Tensor2& W, const Tensor1& b) {
  Tensor2 out = Tensor2::from_shape({x.shape(0), W.shape(1)});  // (T, out)
  for (std::size_t t = 0; t < out.shape(0); ++t) std::copy(b.begin(), b.end(), &out(t, 0));
  gemm(whole(x), false, whole(W), false, whole(out), 1.0f, /*beta=*/1.0f);
  return out;
}

// sum_t m[t, :]: a bias was added to every row, so its gradient is the sum
// of every row's gradient.
Tensor1 column_sums(const Tensor2& m) {
  Tensor1 sums = xt::zeros<float>({m.shape(1)});  // (cols)
  for (std::size_t t = 0, cols = m.shape(1); t < m.shape(0); ++t)
    for (std::size_t i = 0; i < cols; ++i) sums.data()[i] += m.data()[t * cols + i];
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

// The statistics of a row of d values: its mean and 1 / sqrt(var + eps), and
// the row minus its mean in `centred`. Two passes, each a plain sum in index
// order (sum_of's vector lanes round differently from the lesson's runs): the
// mean, then the mean of squared distances from it. The one-pass E[x^2] - E[x]^2
// subtracts two numbers of about mu^2: on a row offset by 1e3, mu^2 = 1e6 and a
// float keeps 7 digits of it, so a variance of 1 comes out with no correct digit.
struct RowStats { float mu, rstd; };

RowStats row_stats(const float* row, std::size_t d, float eps, float* centred) {
  float sum = 0.0f, squares = 0.0f;
  for (std::size_t i = 0; i < d; ++i) sum += row[i];
  const float mu = sum / static_cast<float>(d);
  for (std::size_t i = 0; i < d; ++i) centred[i] = row[i] - mu, squares += centred[i] * centred[i];
  // Divide by d, not d - 1: the biased variance, as torch.nn.LayerNorm.
  const float var = squares / static_cast<float>(d);
  return {mu, 1.0f / std::sqrt(var + eps)};
}

// GELU on the n values x, in double, each result rounded to float once: y = x Phi(x)
// where y is given, dx = dy gelu'(x) where dx is given. In chunks that stay in L1: erf and
// exp are the costly part, and erf_of and exp_of do several values at a time (the loops
// around them vectorise by themselves).
void gelu_parts(const float* x, std::size_t n, float* y, const float* dy, float* dx) {
  constexpr std::size_t kChunk = 256;
  double cdf[kChunk], pdf[kChunk];
  for (std::size_t j = 0; j < n; j += kChunk) {
    const std::size_t m = std::min(kChunk, n - j);
    const float* v = x + j;
    // Phi = (1 + erf(v / sqrt 2)) / 2 and phi = exp(-v^2 / 2) / sqrt(2 pi): the standard
    // normal's distribution and density.
    for (std::size_t i = 0; i < m; ++i) cdf[i] = v[i] * M_SQRT1_2, pdf[i] = -0.5 * v[i] * v[i];
    erf_of(cdf, cdf, m);
    for (std::size_t i = 0; i < m; ++i) cdf[i] = 0.5 * (1.0 + cdf[i]);
    if (y) {  // x * Phi(x): x, in proportion to how likely a standard normal is below it
      for (std::size_t i = 0; i < m; ++i) y[j + i] = static_cast<float>(v[i] * cdf[i]);
    }
    if (!dx) continue;
    exp_of(pdf, pdf, m);
    for (std::size_t i = 0; i < m; ++i) {
      // d/dx [x Phi(x)] = Phi(x) + x phi(x): the product rule, with Phi' = phi.
      const double slope = cdf[i] + v[i] * (pdf[i] / std::sqrt(2.0 * M_PI));
      dx[j + i] = static_cast<float>(dy[j + i] * slope);
    }
  }
}

// cos and sin of p * theta_i for the T positions p = start .. start + T - 1 and
// the pairs i, theta_i = base^(-2i / d_head): lab 11's angles, in double, each
// rounded to float once. One table turns q and k, and turns dq and dk back.
struct Rotation { Tensor2 cos, sin; };  // (T, d_head / 2) each

Rotation rotation(std::size_t T, int start, std::size_t d_head, double base) {
  const std::size_t half = d_head / 2;
  Rotation r{Tensor2::from_shape({T, half}), Tensor2::from_shape({T, half})};
  for (std::size_t i = 0; i < half; ++i) {
    const double theta =
        std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d_head));
    for (std::size_t t = 0; t < T; ++t) {
      const double angle = (static_cast<double>(start) + static_cast<double>(t)) * theta;
      r.cos(t, i) = static_cast<float>(std::cos(angle));
      r.sin(t, i) = static_cast<float>(std::sin(angle));
    }
  }
  return r;
}

// Turns every pair (i, i + d_head/2) of x (H, T, d_head) in place, row t by row
// t's angles: by +angle (sign 1, as apply_rope) or by -angle (sign -1, RoPE's
// backward: the forward turned each pair by R = [c -s; s c]; the gradient goes
// back through R^T = [c s; -s c], the turn by -angle: a rotation's inverse).
void turn(Tensor3& x, const Rotation& r, float sign) {
  const std::size_t H = x.shape(0), T = x.shape(1), half = x.shape(2) / 2;
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t t = 0; t < T; ++t) {
      float *pair_a = &x(h, t, 0), *pair_b = pair_a + half;  // features i and i + half of a token
      const float *cos = &r.cos(t, 0), *sin = &r.sin(t, 0);  // (half,) each
      for (std::size_t i = 0; i < half; ++i) {
        const float c = cos[i], s = sign * sin[i], a = pair_a[i], b = pair_b[i];
        pair_a[i] = a * c - b * s;  // [c -s; s c] (a, b)
        pair_b[i] = b * c + a * s;
      }
    }
  }
}

// Lab 11's forward on x (T, d_model) at positions 0 .. T-1, keeping what its
// backward reads: the heads as the scores saw them (q and k rotated) and the
// heads' outputs side by side.
struct RotaryForward {
  Rotation rotation;  // the angles of q and k
  Tensor3 q, k, v;    // (H, T, d_head) each
  Tensor2 concat;     // (T, d_model): the heads' outputs, before W_O
};

RotaryForward rotary_forward(const RotaryAttention& layer, const Tensor2& x,
                             const std::optional<Tensor2>& mask) {
  const std::size_t T = x.shape(0);
  Tensor2 Q(x.shape()), K(x.shape()), V(x.shape());          // (T, d_model) each, as x
  gemm(whole(x), false, whole(layer.W_Q), false, whole(Q));  // as lab 11's forward
  gemm(whole(x), false, whole(layer.W_K), false, whole(K));
  gemm(whole(x), false, whole(layer.W_V), false, whole(V));
  RotaryForward f{rotation(T, 0, static_cast<std::size_t>(layer.d_head), layer.base),
                  split_heads(Q, layer.n_heads), split_heads(K, layer.n_heads),
                  split_heads(V, layer.n_heads), {}};
  turn(f.q, f.rotation, 1.0f), turn(f.k, f.rotation, 1.0f);  // values are not rotated
  f.concat = combine_heads(attention_batched(f.q, f.k, f.v, mask).output);  // (T, d_model)
  return f;
}

// The gradients of sum(y * d_y) for y = f.concat W_O from what rotary_forward kept
// (and its input x): lab 10's mha_backward, with the rotation undone on dq and dk.
MhaGrads rotary_backward(const RotaryAttention& layer, const Tensor2& x,
                         const std::optional<Tensor2>& mask, const RotaryForward& f,
                         const Tensor2& d_y) {
  MhaGrads grads;
  // pass 2, y = concat W_O: dW_O = concat^T d_y, d_concat = d_y W_O^T.
  grads.dW_O = at_b(f.concat, d_y);               // (d_model, d_model)
  const Tensor2 d_concat = a_bt(d_y, layer.W_O);  // (T, d_model)
  // pass 3: attention's backward (lab 10), on the ROTATED q and k: they are
  // what the scores saw, so dq and dk come out as gradients of rotated ones.
  AttentionGrads g = attention_backward(f.q, f.k, f.v, mask, split_heads(d_concat, layer.n_heads));
  // pass 4: undo the rotation on the gradients (rope_backward's opposite turn,
  // with the forward's table); v was never rotated, so dv passes as it is.
  turn(g.dq, f.rotation, -1.0f), turn(g.dk, f.rotation, -1.0f);
  const Tensor2 dQ = combine_heads(g.dq), dK = combine_heads(g.dk), dV = combine_heads(g.dv);
  // pass 5, Q = x W_Q (and K, V): as lab 10.
  grads.dW_Q = at_b(x, dQ), grads.dW_K = at_b(x, dK), grads.dW_V = at_b(x, dV);
  // x feeds all three projections: three paths, added (beta = 1).
  grads.dx = a_bt(dQ, layer.W_Q);  // (T, d_model)
  gemm(whole(dK), false, whole(layer.W_K), /*transpose_b=*/true, whole(grads.dx), 1.0f, 1.0f);
  gemm(whole(dV), false, whole(layer.W_V), /*transpose_b=*/true, whole(grads.dx), 1.0f, 1.0f);
  return grads;
}

// The block's forward, keeping what the backward needs.
struct BlockActivations {
  Tensor2 mask, a;     // (T, T) causal; (T, d_model) layer_norm(x), attention's input
  RotaryForward attn;  // attention's q, k, v and output on a
  Tensor2 h, b;        // (T, d_model) each: x + attention (residual 1); layer_norm(h), the FFN's
};

BlockActivations run_block(const TransformerBlock& block, const Tensor2& x) {
  check_rows("TransformerBlock", "x", x, static_cast<std::size_t>(block.d_model), "d_model");
  BlockActivations f;
  f.mask = causal_mask(static_cast<int>(x.shape(0)));       // (T, T)
  f.a = layer_norm(x, block.ln1_gamma, block.ln1_beta);     // (T, d_model)
  f.attn = rotary_forward(block.attn, f.a, f.mask);         // attn.forward(a, mask), before W_O
  f.h = x;  // residual 1: attention ADDS concat W_O to the stream; it reads a normalised copy

  gemm(whole(f.attn.concat), false, whole(block.attn.W_O), false, whole(f.h), 1.0f, 1.0f);
  f.b = layer_norm(f.h, block.ln2_gamma, block.ln2_beta);  // (T, d_model)
  return f;
}

// A size that must be at least 1, checked before anything is drawn.
int at_least_1(const std::string& who, const std::string& name, int value) {
  if (value < 1) {
    throw std::invalid_argument(who + ": " + name + "=" + std::to_string(value) +
                                " must be at least 1");
  }
  return value;
}

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

// ============================================================== LayerNorm

Tensor2 layer_norm(const Tensor2& x, const Tensor1& gamma, const Tensor1& beta, float eps) {
  check_layer_norm("layer_norm", x, gamma, eps);
  check_vector("layer_norm", "beta", beta, x);
  const std::size_t T = x.shape(0), d = x.shape(1);
  Tensor2 y = Tensor2::from_shape({T, d});  // (T, d)
  for (std::size_t t = 0; t < T; ++t) {
    float* y_t = &y(t, 0);  // x's row t centred, then normalised in place
    const RowStats s = row_stats(&x(t, 0), d, eps, y_t);
    for (std::size_t i = 0; i < d; ++i) {
      // xhat has mean 0 and variance ~1; gamma and beta then give the row
      // back whatever scale and offset training finds useful.
      const float xhat = y_t[i] * s.rstd;
      y_t[i] = xhat * gamma.data()[i] + beta.data()[i];
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
  float *dgamma = grads.dgamma.data(), *dbeta = grads.dbeta.data();
  for (std::size_t t = 0; t < T; ++t) {
    const RowStats s = row_stats(&x(t, 0), d, eps, xhat.data());  // recomputed: no state kept
    const float* dy_t = &dy(t, 0);
    float sum_g = 0.0f, sum_gx = 0.0f;
    for (std::size_t i = 0; i < d; ++i) {
      xhat[i] *= s.rstd;
      g[i] = dy_t[i] * gamma.data()[i];  // the gradient of xhat
      // gamma and beta act on every row: their gradients sum over rows.
      dgamma[i] += dy_t[i] * xhat[i];
      dbeta[i] += dy_t[i];
      sum_g += g[i], sum_gx += g[i] * xhat[i];
    }
    const float mean_g = sum_g / static_cast<float>(d), mean_gx = sum_gx / static_cast<float>(d);
    // xhat = (x - mu) * rstd, and mu and rstd depend on every x of the row:
    // dx = rstd * (g - mean(g) - xhat * mean(g * xhat)). The mean(g) term
    // is the path through mu (shifting the whole row changes nothing), the
    // last the path through rstd (scaling the row changes nothing), so the
    // gradient has no component along 1 or, with eps -> 0, along xhat.
    float* dx_t = &grads.dx(t, 0);
    for (std::size_t i = 0; i < d; ++i) dx_t[i] = s.rstd * (g[i] - mean_g - xhat[i] * mean_gx);
  }
  return grads;
}

// =================================================================== GELU

Tensor2 gelu(const Tensor2& x) {
  Tensor2 y = Tensor2::from_shape({x.shape(0), x.shape(1)});
  gelu_parts(x.data(), x.size(), y.data(), nullptr, nullptr);
  return y;
}

Tensor2 gelu_backward(const Tensor2& x, const Tensor2& dy) {
  check_same_shape("gelu_backward", "dy", dy, x, "x");
  Tensor2 dx = Tensor2::from_shape({x.shape(0), x.shape(1)});
  gelu_parts(x.data(), x.size(), nullptr, dy.data(), dx.data());
  return dx;
}

// =========================================================== FeedForward

FeedForward::FeedForward(int model_width, int hidden_width, std::uint64_t seed)
    : d_model(at_least_1("FeedForward", "d_model", model_width)),
      d_ff(at_least_1("FeedForward", "d_ff", hidden_width)) {
  const std::size_t d = static_cast<std::size_t>(d_model), f = static_cast<std::size_t>(d_ff);
  NumpyRng rng(seed);
  W_1 = rng.normal_matrix(d, f, d);  // (d_model, d_ff), fan-in d_model
  W_2 = rng.normal_matrix(f, d, f);  // (d_ff, d_model), fan-in d_ff
  b_1 = xt::zeros<float>({f});       // (d_ff)
  b_2 = xt::zeros<float>({d});       // (d_model)
}

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
  Tensor2 g(u.shape()), du(u.shape());            // (T, d_ff) each
  // y = g W_2 + b_2: as lab 10's W_O, dg = dy W_2^T and dW_2 = g^T dy.
  const Tensor2 dg = a_bt(dy, ffn.W_2);  // (T, d_ff)
  // g = gelu(u), elementwise: its backward is elementwise too, du = dg gelu'(u), and both
  // come out of one pass over u (one erf each).
  gelu_parts(u.data(), u.size(), g.data(), dg.data(), du.data());
  FeedForwardGrads grads;
  grads.dW_2 = at_b(g, dy);          // (d_ff, d_model)
  grads.db_2 = column_sums(dy);      // (d_model)
  // u = x W_1 + b_1: the same step once more.
  grads.dW_1 = at_b(x, du);          // (d_model, d_ff)
  grads.db_1 = column_sums(du);      // (d_ff)
  grads.dx = a_bt(du, ffn.W_1);      // (T, d_model)
  return grads;
}

// ============================================================ RoPE's backward

Tensor3 rope_backward(const Tensor3& d_rotated, int start, double base) {
  const std::size_t T = d_rotated.shape(1), dh = d_rotated.shape(2);
  if (dh < 2 || dh % 2 != 0) {
    throw std::invalid_argument("rope_backward: d_head=" + std::to_string(dh) +
                                " must be even and at least 2 (features are rotated in pairs)");
  }
  if (start < 0) {
    throw std::invalid_argument("rope_backward: start=" + std::to_string(start) + " must be >= 0");
  }
  if (!(base > 1.0)) {
    throw std::invalid_argument("rope_backward: base=" + std::to_string(base) + " must be > 1");
  }
  Tensor3 dx = d_rotated;  // (H, T, d_head)
  turn(dx, rotation(T, start, dh, base), -1.0f);  // the opposite turn: R^T
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
  // pass 1: lab 11's forward again, keeping q, k (rotated), v and concat; then the backward.
  return rotary_backward(layer, x, mask, rotary_forward(layer, x, mask), d_y);
}

// ======================================================== TransformerBlock

// The members are built in their order of declaration: d_ff is checked before
// anything is drawn, and attn (lab 11's constructor) checks the rest.
TransformerBlock::TransformerBlock(int width, int heads, int hidden, std::uint64_t seed,
                                   double base)
    : d_model(width),
      n_heads(heads),
      d_ff(at_least_1("TransformerBlock", "d_ff", hidden)),
      attn(width, heads, seed, base),
      ffn(width, hidden, seed + 1) {
  const std::size_t d = static_cast<std::size_t>(d_model);
  // Gamma 1 and beta 0: each LayerNorm starts as the plain normalisation.
  ln1_gamma = ln2_gamma = xt::ones<float>({d});
  ln1_beta = ln2_beta = xt::zeros<float>({d});
}

Tensor2 TransformerBlock::forward(const Tensor2& x) const {
  const BlockActivations f = run_block(*this, x);
  // Residual 2: the FFN, too, adds to the stream what it reads from a
  // normalised copy of it.
  return f.h + ffn.forward(f.b);  // (T, d_model)
}

Tensor3 TransformerBlock::attention_weights(const Tensor2& x) const {
  const BlockActivations f = run_block(*this, x);  // attention's rotated q, k, v on a
  return attention_batched(f.attn.q, f.attn.k, f.attn.v, f.mask).weights;  // (H, T, T)
}

std::size_t TransformerBlock::parameter_count() const {
  const std::size_t d = static_cast<std::size_t>(d_model);
  // W_Q, W_K, W_V, W_O; the FFN; two gammas and two betas.
  return 4 * d * d + ffn.parameter_count() + 4 * d;
}

BlockGrads block_backward(const TransformerBlock& block, const Tensor2& x, const Tensor2& dy) {
  check_same_shape("block_backward", "dy", dy, x, "x");
  const BlockActivations f = run_block(block, x);  // mask, a, attention's heads, h, b

  // Residual 2, y = h + ffn(layer_norm(h)): h reaches y twice, around the
  // FFN (the identity: dy itself) and through it. The two paths add.
  FeedForwardGrads ffn_grads = feed_forward_backward(block.ffn, f.b, dy);
  const LayerNormGrads ln2 = layer_norm_backward(f.h, block.ln2_gamma, kLayerNormEps,
                                                 ffn_grads.dx);
  const Tensor2 dh = dy + ln2.dx;  // (T, d_model)

  // Residual 1, h = x + attn(layer_norm(x)): the same fork, one level down (attention's
  // backward from the forward just run: rotary_attention_backward(attn, a, mask, dh)).
  MhaGrads attn_grads = rotary_backward(block.attn, f.a, f.mask, f.attn, dh);
  const LayerNormGrads ln1 = layer_norm_backward(x, block.ln1_gamma, kLayerNormEps,
                                                 attn_grads.dx);
  const Tensor2 dx = dh + ln1.dx;  // (T, d_model)

  // Every parameter's gradient, in the block's order, then dx (the matrices moved, not copied).
  return {ln1.dgamma,  ln1.dbeta,  std::move(attn_grads.dW_Q), std::move(attn_grads.dW_K),
          std::move(attn_grads.dW_V), std::move(attn_grads.dW_O), ln2.dgamma, ln2.dbeta,
          std::move(ffn_grads.dW_1), ffn_grads.db_1, std::move(ffn_grads.dW_2), ffn_grads.db_2, dx};
}

}  // namespace mha
