// Lab 11 reference solution: rotary position embeddings (RoPE), in the layer
// and in the KV cache.
//
//   theta_i  = base^(-2i / d_head)                       one frequency per pair
//   angle    = p * theta_i, in double                    one angle per (position, pair)
//   (x_a, x_b) -> (x_a cos - x_b sin, x_b cos + x_a sin)  pair a = i, b = i + d_head/2
//
// In the layer the rotation sits after split_heads and before the scores, on
// queries and keys only. Why it works: rotating q by m*theta and k by n*theta
// and then taking their dot product is the same as rotating k alone by
// (n - m)*theta, so a score sees the distance n - m and never m or n.
//
// In the decoder a key is rotated once, at its own absolute position, and
// cached rotated. A query arriving later is rotated at ITS position; the dot
// product then sees their distance, exactly as in the full forward.
#include "labs/11_rotary_embeddings/rotary_embeddings.h"

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xbuilder.hpp>

#include "common/core/shape_string.h"
#include "labs/01_split_heads/split_heads.h"
#include "labs/02_batched_attention/attention.h"
#include "labs/03_output_projection/multi_head_attention.h"
#include "labs/04_causal_mask/causal_mask.h"

namespace mha {
namespace {

// ------------------------------------------------------------------ checks

void check_d_head(const std::string& who, int d_head) {
  if (d_head < 2 || d_head % 2 != 0) {
    throw std::invalid_argument(who + ": d_head=" + std::to_string(d_head) +
                                " must be even and at least 2 (features are rotated in pairs)");
  }
}

void check_base(const std::string& who, double base) {
  // base <= 1 would make the frequencies grow with i (or all equal 1), and a
  // NaN fails this test too.
  if (!(base > 1.0)) {
    throw std::invalid_argument(who + ": base=" + std::to_string(base) + " must be > 1");
  }
}

void check_start(const std::string& who, int start) {
  if (start < 0) {
    throw std::invalid_argument(who + ": start=" + std::to_string(start) + " must be >= 0");
  }
}

// ---------------------------------------------------------------- rotation

// theta_i = base^(-2i / d_head) for pair i in [0, d_head / 2), in double.
std::vector<double> frequencies(int d_head, double base) {
  const int half = d_head / 2;
  std::vector<double> theta(static_cast<std::size_t>(half));
  for (int i = 0; i < half; ++i) {
    // 2i, not i: pair i owns two features, so the exponent walks over the
    // even feature indices 0, 2, ..., d_head - 2 and the slowest pair turns
    // at base^(-(d_head - 2) / d_head), close to 1 / base.
    theta[static_cast<std::size_t>(i)] = std::pow(base, -2.0 * static_cast<double>(i) / d_head);
  }
  return theta;
}

// cos and sin of p * theta_i for the T positions p = start .. start + T - 1:
// (T, d_head / 2) each. Computed once per call and shared by every head (and
// by q and k, which sit at the same positions).
struct RotationTable {
  Tensor2 cos;  // (T, d_head / 2)
  Tensor2 sin;  // (T, d_head / 2)
};

RotationTable rotation_table(std::size_t T, int start, int d_head, double base) {
  const std::vector<double> theta = frequencies(d_head, base);
  const std::size_t half = theta.size();
  RotationTable table{xt::empty<float>({T, half}), xt::empty<float>({T, half})};
  for (std::size_t t = 0; t < T; ++t) {
    const long long p = static_cast<long long>(start) + static_cast<long long>(t);
    for (std::size_t i = 0; i < half; ++i) {
      // In double: near p = 10^6 a float angle is off by up to 0.02 rad
      // (d_head 16) to 0.06 rad (d_head 128): a float has 24 bits, 10^6 takes
      // 20 of them before the point, and theta_i rounded to float adds more.
      const double angle = static_cast<double>(p) * theta[i];
      table.cos(t, i) = static_cast<float>(std::cos(angle));  // rounded to float once
      table.sin(t, i) = static_cast<float>(std::sin(angle));
    }
  }
  return table;
}

// x: (H, T, d_head) -> the rotated copy, row t turned by the angles of row t of the table.
Tensor3 rotate(const Tensor3& x, const RotationTable& table) {
  const std::size_t H = x.shape(0), T = x.shape(1), dh = x.shape(2), half = dh / 2;
  Tensor3 out = xt::empty<float>({H, T, dh});  // (H, T, d_head)
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t t = 0; t < T; ++t) {
      const float* in = &x(h, t, 0);  // one token of one head: (d_head,)
      float* o = &out(h, t, 0);
      const float* c = &table.cos(t, 0);  // (d_head / 2,)
      const float* s = &table.sin(t, 0);
      for (std::size_t i = 0; i < half; ++i) {
        // Half-split pairs (rotate_half): feature i turns with feature
        // i + d_head/2. A checkpoint trained with this pairing gives garbage
        // with adjacent pairs (2i, 2i + 1), and no error says so.
        const std::size_t a = i, b = i + half;
        const float xa = in[a], xb = in[b];
        o[a] = xa * c[i] - xb * s[i];  // the 2-D rotation [cos -sin; sin cos] of (xa, xb)
        o[b] = xb * c[i] + xa * s[i];
      }
    }
  }
  return out;
}

// ------------------------------------------------------------------- layer

// The heads of the T tokens x (T, d_model) at positions start .. start + T - 1:
// queries and keys rotated, values as they are. The layer and the decoder
// both start here.
struct Heads {
  Tensor3 q, k, v;  // (H, T, d_head) each
};

Heads project(const RotaryAttention& layer, const Tensor2& x, int start) {
  // pass 1: project, as lab 3 (weights read on every call, never cached).
  Tensor2 Q = xt::linalg::dot(x, layer.W_Q);  // (T, d_model)
  Tensor2 K = xt::linalg::dot(x, layer.W_K);  // (T, d_model)
  Tensor2 V = xt::linalg::dot(x, layer.W_V);  // (T, d_model)

  // pass 2: split first, rotate second. Each head rotates its own d_head
  // features with the frequencies of d_head (not of d_model).
  Heads heads{split_heads(Q, layer.n_heads),   // (H, T, d_head)
              split_heads(K, layer.n_heads),   // (H, T, d_head)
              split_heads(V, layer.n_heads)};  // (H, T, d_head)

  // pass 3: queries and keys turn by their position; values do not: they are
  // what is read, not what is compared, so position has no business there.
  const RotationTable table = rotation_table(x.shape(0), start, layer.d_head, layer.base);
  heads.q = rotate(heads.q, table);  // (H, T, d_head)
  heads.k = rotate(heads.k, table);  // (H, T, d_head)
  return heads;
}

}  // namespace

// -------------------------------------------------------------- free functions

Tensor2 rope_angles(int n_positions, int d_head, double base) {
  if (n_positions < 1) {
    throw std::invalid_argument("rope_angles: n_positions=" + std::to_string(n_positions) +
                                " must be at least 1");
  }
  check_d_head("rope_angles", d_head);
  check_base("rope_angles", base);
  const std::vector<double> theta = frequencies(d_head, base);
  const std::size_t n = static_cast<std::size_t>(n_positions), half = theta.size();
  Tensor2 angles = xt::empty<float>({n, half});  // (n_positions, d_head / 2)
  for (std::size_t p = 0; p < n; ++p) {
    for (std::size_t i = 0; i < half; ++i) {
      angles(p, i) = static_cast<float>(static_cast<double>(p) * theta[i]);
    }
  }
  return angles;
}

Tensor3 apply_rope(const Tensor3& x, int start, double base) {
  const int d_head = static_cast<int>(x.shape(2));
  check_d_head("apply_rope", d_head);
  check_start("apply_rope", start);
  check_base("apply_rope", base);
  return rotate(x, rotation_table(x.shape(1), start, d_head, base));  // (H, T, d_head)
}

// ----------------------------------------------------------- RotaryAttention

RotaryAttention::RotaryAttention(int embed_dim, int num_heads, std::uint64_t seed,
                                 double rope_base)
    : d_model(embed_dim), n_heads(num_heads), d_head(0), base(rope_base) {
  // Every check before drawing, in lab 3's words for lab 3's checks.
  if (d_model <= 0) {
    throw std::invalid_argument("RotaryAttention: d_model=" + std::to_string(d_model) +
                                " must be positive");
  }
  if (n_heads <= 0) {
    throw std::invalid_argument("RotaryAttention: n_heads=" + std::to_string(n_heads) +
                                " must be positive");
  }
  if (d_model % n_heads != 0) {
    throw std::invalid_argument("RotaryAttention: d_model=" + std::to_string(d_model) +
                                " is not divisible by n_heads=" + std::to_string(n_heads));
  }
  d_head = d_model / n_heads;
  if (d_head % 2 != 0) {
    throw std::invalid_argument("RotaryAttention: d_head=" + std::to_string(d_head) +
                                " (d_model=" + std::to_string(d_model) + " / n_heads=" +
                                std::to_string(n_heads) + ") must be even: RoPE rotates pairs");
  }
  check_base("RotaryAttention", base);
  // The same four draws as lab 3's layer: RoPE adds no parameter, so a
  // rotary layer and a plain one built from one seed share their weights.
  const MultiHeadAttention plain(d_model, n_heads, seed);
  W_Q = plain.W_Q;  // (d_model, d_model)
  W_K = plain.W_K;
  W_V = plain.W_V;
  W_O = plain.W_O;
}

Tensor2 RotaryAttention::forward(const Tensor2& x, const std::optional<Tensor2>& mask,
                                 int start) const {
  const std::size_t T = x.shape(0);
  if (x.shape(1) != static_cast<std::size_t>(d_model)) {
    throw std::invalid_argument("RotaryAttention: x has shape " + shape_string(x) +
                                ", expected (T, d_model=" + std::to_string(d_model) + ")");
  }
  if (mask && (mask->shape(0) != T || mask->shape(1) != T)) {
    throw std::invalid_argument("RotaryAttention: mask has shape " + shape_string(*mask) +
                                ", expected (" + std::to_string(T) + ", " + std::to_string(T) +
                                ")");
  }
  check_start("RotaryAttention", start);

  // passes 1-3: project, split, rotate q and k.
  const Heads heads = project(*this, x, start);  // q, k, v: (H, T, d_head)
  // pass 4: attention exactly as lab 2 (scale 1/sqrt(d_head), mask, softmax).
  AttentionResult attended = attention_batched(heads.q, heads.k, heads.v, mask);
  // pass 5: concatenate the heads and mix them with W_O.
  Tensor2 concat = combine_heads(attended.output);  // (T, d_model)
  Tensor2 y = xt::linalg::dot(concat, W_O);         // (T, d_model)
  return y;
}

std::size_t RotaryAttention::parameter_count() const {
  // The rotation has no weights: its angles are a fixed function of position.
  const std::size_t d = static_cast<std::size_t>(d_model);
  return 4 * d * d;
}

// ------------------------------------------------------------- RotaryDecoder

RotaryDecoder::RotaryDecoder(const RotaryAttention& layer, int capacity)
    : layer_(&layer), cache_(layer.n_heads, layer.d_head, capacity) {}

Tensor2 RotaryDecoder::step(const Tensor2& x_new) {
  const RotaryAttention& layer = *layer_;
  if (x_new.shape(1) != static_cast<std::size_t>(layer.d_model) || x_new.shape(0) == 0) {
    throw std::invalid_argument("RotaryDecoder: x_new has shape " + shape_string(x_new) +
                                ", expected (T_new >= 1, d_model=" +
                                std::to_string(layer.d_model) + ")");
  }
  const std::size_t T_new = x_new.shape(0);
  const int P = cache_.length();  // positions already cached
  // Checked before any work, so a full cache throws with nothing changed.
  if (P + static_cast<long long>(T_new) > cache_.capacity()) {
    throw std::invalid_argument("RotaryDecoder: capacity=" + std::to_string(cache_.capacity()) +
                                " cannot hold " + std::to_string(P) + " + " +
                                std::to_string(T_new) + " positions");
  }

  // pass 1: the new tokens sit at absolute positions P .. P + T_new - 1, so
  // that is where their queries and keys turn (not at 0 .. T_new - 1).
  const Heads heads = project(layer, x_new, P);  // q, k, v: (H, T_new, d_head)

  // pass 2: cache the keys ROTATED. Each was turned once, at its own
  // position; from now on it is read as it is, never rotated again.
  cache_.append(heads.k, heads.v);
  const int S = P + static_cast<int>(T_new);

  // pass 3: attend from the new queries over everything held, bottom-right
  // causal (lab 4): query i sits at P + i and sees keys 0 .. P + i.
  Tensor3 k = cache_.keys();    // (H, S, d_head), rotated at their positions
  Tensor3 v = cache_.values();  // (H, S, d_head)
  Tensor2 mask = causal_mask(static_cast<int>(T_new), S);  // (T_new, S)
  AttentionResult attended = attention_batched(heads.q, k, v, mask);

  // pass 4: combine and mix, as the layer does.
  Tensor2 concat = combine_heads(attended.output);     // (T_new, d_model)
  Tensor2 y = xt::linalg::dot(concat, layer.W_O);      // (T_new, d_model)
  return y;
}

const KVCache& RotaryDecoder::cache() const { return cache_; }

}  // namespace mha
