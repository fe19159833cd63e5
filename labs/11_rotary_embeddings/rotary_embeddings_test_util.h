// Helpers and shared cases of lab 11's tests: the public tests here and the
// grading tests (in the instructors' repository) run the same checks, each on
// golden cases of their own (RotaryCase: a layer, a sequence and its full
// causal forward, written by a golden generator), build the golden layers,
// feed a decoder and name each classic mistake in the same way. The grading
// tests add cases of their own on top.
//
//   const RotaryAttention layer = LoadRotaryLayer(dir + "layer", 16, 2, 10000.0);
//   RotaryDecoder decoder(layer, /*capacity=*/8);
//   const std::optional<Tensor2> rows = DecodeInChunks(decoder, x, {3, 1, 4});
//   EXPECT_TRUE(MatchesGolden(*rows, dir + "layer_forward.npy", kLayer, axes,
//                             DecoderMistakes(dir + "layer", "chunks")));
#ifndef MHA_LABS_11_ROTARY_EMBEDDINGS_ROTARY_EMBEDDINGS_TEST_UTIL_H_
#define MHA_LABS_11_ROTARY_EMBEDDINGS_ROTARY_EMBEDDINGS_TEST_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "common/core/shape_string.h"
#include "common/testing/testing.h"
#include "labs/04_causal_mask/causal_mask.h"
#include "labs/11_rotary_embeddings/rotary_embeddings.h"

namespace mha {
namespace testing {

// The classic mistakes of docs/11_rotary_embeddings.md, by the names the
// golden generator gives what each one computes (<case>_mistake_<name>.npy).
inline const MistakeTable kRopeMistakes(
    "docs/11_rotary_embeddings.md",
    {
        {"adjacent_pairs",
         "adjacent pairs (feature 2i with 2i + 1, as Meta's original Llama code) instead of "
         "half-split pairs (feature i with i + d_head/2, rotate_half)"},
        {"exponent_i",
         "frequencies base^(-i/d_head) instead of base^(-2i/d_head), so the slow pairs turn "
         "too fast"},
        {"float_angles",
         "angles p * theta_i computed in float instead of double (off by up to ~0.06 rad near "
         "p = 10^6)"},
        {"sin_sign",
         "sin with the wrong sign: every pair turned by -p * theta_i instead of +p * theta_i"},
        {"values_rotated", "values rotated too; only the queries and keys turn"},
        {"before_split",
         "RoPE applied over d_model before split_heads instead of to each head's d_head "
         "features after it"},
        {"restart_positions",
         "decoder positions restarting at 0 at every step instead of continuing at P = "
         "cache().length()"},
        {"rotated_twice",
         "cached keys rotated again at every step, though they were cached rotated already"},
        {"unrotated_cache", "keys cached before they were rotated; the cache holds rotated keys"},
    });

// What each kind of golden can tell apart (the generator writes them all).
// A rotation case ("rope", "far"): mistakes of apply_rope itself.
inline std::vector<KnownMistake> RotationMistakes(const std::string& golden) {
  return kRopeMistakes.Of(golden + "_out",
                          {"adjacent_pairs", "exponent_i", "sin_sign", "float_angles"});
}

// The full forward of a layer case.
inline std::vector<KnownMistake> LayerMistakes(const std::string& golden) {
  return kRopeMistakes.Of(golden + "_forward", {"adjacent_pairs", "exponent_i", "sin_sign",
                                                "values_rotated", "before_split"});
}

// A decoder fed the layer case's x with `schedule` ("prefill", "single", "chunks").
inline std::vector<KnownMistake> DecoderMistakes(const std::string& golden,
                                                 const std::string& schedule) {
  std::vector<std::string> names;
  if (schedule != "prefill") names.push_back("restart_positions");  // right from an empty cache
  for (const char* n : {"rotated_twice", "values_rotated", "before_split"}) names.push_back(n);
  return kRopeMistakes.Of(golden + "_" + schedule, names);
}

// What the cache holds after the "chunks" schedule (`what`: "keys" or "values").
inline std::vector<KnownMistake> CacheMistakes(const std::string& golden,
                                               const std::string& what) {
  return kRopeMistakes.Of(golden + "_" + what,
                          {"restart_positions", "unrotated_cache", "values_rotated"});
}

// Said under a failure at positions near 10^6 that no golden mistake explained.
inline const std::string kFarPositionsHint =
    "\nif the same rotation is right at small positions, look at the precision of the "
    "angles: " +
    kRopeMistakes.Message("float_angles");

// A golden layer case: the public constructor, then the generator's weights
// <case>_W_Q.npy ... (`golden`: the folder and the case, "dir/layer").
inline RotaryAttention LoadRotaryLayer(const std::string& golden, int d_model, int n_heads,
                                       double base) {
  RotaryAttention layer(d_model, n_heads, /*seed=*/0, base);
  layer.W_Q = LoadGolden<2>(golden + "_W_Q.npy");  // (d_model, d_model)
  layer.W_K = LoadGolden<2>(golden + "_W_K.npy");
  layer.W_V = LoadGolden<2>(golden + "_W_V.npy");
  layer.W_O = LoadGolden<2>(golden + "_W_O.npy");
  return layer;
}

// (H, T, d) holding the pairs' squared norms: (H, T, d/2), entry i is
// x[i]^2 + x[i + d/2]^2 (half-split pairs).
inline Tensor3 PairNorms(const Tensor3& x) {
  const std::size_t H = x.shape(0), T = x.shape(1), half = x.shape(2) / 2;
  Tensor3 n = xt::zeros<float>({H, T, half});
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t t = 0; t < T; ++t) {
      for (std::size_t i = 0; i < half; ++i) {
        const float a = x(h, t, i), b = x(h, t, i + half);
        n(h, t, i) = a * a + b * b;
      }
    }
  }
  return n;
}

inline const std::vector<std::string> kRotationAxes = {"head", "position", "feature"};

// One golden layer case: the folder of goldens `dir`, the case `name` (its
// files <name>_W_Q.npy, ..., <name>_x.npy of T tokens, <name>_forward.npy,
// ...), the layer's sizes and base, and the generator's uneven chunking.
struct RotaryCase {
  std::string dir;
  std::string name;
  int d_model, n_heads;
  double base;
  int T;
  std::vector<int> chunks;

  std::string File(const std::string& what) const { return dir + name + "_" + what + ".npy"; }
  RotaryAttention Layer() const { return LoadRotaryLayer(dir + name, d_model, n_heads, base); }
  Tensor2 X() const { return LoadGolden<2>(File("x")); }  // (T, d_model)
  // The chunk sizes of "prefill" (all T), "single" (one at a time) or "chunks".
  std::vector<int> Schedule(const std::string& schedule) const {
    if (schedule == "prefill") return {T};
    if (schedule == "single") return std::vector<int>(static_cast<std::size_t>(T), 1);
    return chunks;
  }
};

// Shared cases. `golden` is a golden set's folder ("labs/11_rotary_embeddings/golden/").

// rope_angles(n_positions, d_head, base) equals <golden><name>.npy.
inline void ExpectRopeAnglesMatchGolden(const std::string& golden, const std::string& name,
                                        int n_positions, int d_head, double base) {
  EXPECT_TRUE(MatchesGolden(rope_angles(n_positions, d_head, base), golden + name + ".npy",
                            kRowOp, {"position", "pair"},
                            kRopeMistakes.Of(golden + name, {"exponent_i"})));
}

// apply_rope(<name>_x.npy, start, base) equals <name>_out.npy (Hugging Face's
// Llama rotation); positions `far` from 0 add the hint on the angles' precision.
inline void ExpectApplyRopeMatchesGolden(const std::string& golden, const std::string& name,
                                         int start, double base, bool far) {
  const Tensor3 x = LoadGolden<3>(golden + name + "_x.npy");  // (H, T, d_head)
  EXPECT_TRUE(MatchesGolden(apply_rope(x, start, base), golden + name + "_out.npy", kRowOp,
                            kRotationAxes, RotationMistakes(golden + name)))
      << (far ? kFarPositionsHint : std::string());
}

// The case's layer, drawn from `seed` instead of loaded, has the weights of
// MultiHeadAttention's draw (<name>_W_Q.npy, ...), its sizes and base as given
// and no parameter of its own.
inline void ExpectDrawsTheWeightsOfMultiHeadAttention(const RotaryCase& c, std::uint64_t seed) {
  const RotaryAttention layer(c.d_model, c.n_heads, seed, c.base);
  EXPECT_EQ(layer.d_model, c.d_model);
  EXPECT_EQ(layer.n_heads, c.n_heads);
  EXPECT_EQ(layer.d_head, c.d_model / c.n_heads);
  EXPECT_EQ(layer.base, c.base);  // stored as given, no arithmetic
  const std::size_t d = static_cast<std::size_t>(c.d_model);
  EXPECT_EQ(layer.parameter_count(), 4u * d * d) << "RoPE adds no parameter";
  for (const auto& [w, file] : {std::pair<const Tensor2*, std::string>{&layer.W_Q, "W_Q"},
                                {&layer.W_K, "W_K"},
                                {&layer.W_V, "W_V"},
                                {&layer.W_O, "W_O"}}) {
    EXPECT_TRUE(AllClose(*w, LoadGolden<2>(c.File(file)), kExact, {"in", "out"}))
        << file << " must be the same draw as MultiHeadAttention's";
  }
}

// The case's layer, forward(x, causal_mask(T)), equals <name>_forward.npy (PyTorch).
inline void ExpectCausalForwardMatchesPyTorch(const RotaryCase& c) {
  EXPECT_TRUE(MatchesGolden(c.Layer().forward(c.X(), causal_mask(c.T)), c.File("forward"), kLayer,
                            {"token", "column"}, LayerMistakes(c.dir + c.name)));
}

// A precondition of the tests of a property that an answer computing nothing
// also has (a forward of zeros does not depend on where the sequence starts):
// the case's causal forward is PyTorch's.
inline ::testing::AssertionResult CausalForwardGivesTheGolden(const RotaryCase& c) {
  return MatchesGolden(c.Layer().forward(c.X(), causal_mask(c.T)), c.File("forward"), kLayer,
                       {"token", "column"});
}

// apply_rope(x, start) differs from x somewhere: a rotation by a non-zero
// angle moves a pair that is not zero (the identity keeps every norm too).
inline ::testing::AssertionResult Rotates(const Tensor3& x, int start) {
  if (!AllClose(apply_rope(x, start), x, kRowOp)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "apply_rope(x, " << start << ") returned x unchanged: at a position p > 0 every "
            "pair turns by p * theta_i";
}

// apply_rope(x, start) keeps the length of every half-split pair (feature i,
// feature i + d_head/2), and rotates: the identity keeps every norm too.
inline void ExpectApplyRopeKeepsPairNorms(const Tensor3& x, int start) {
  EXPECT_TRUE(AllClose(PairNorms(apply_rope(x, start)), PairNorms(x), kRowOp,
                       {"head", "position", "pair"}))
      << "a rotation keeps the length of each pair (feature i, feature i + d_head/2); "
         "if it does not, the pairs may be "
      << kRopeMistakes.Message("adjacent_pairs");
  EXPECT_TRUE(Rotates(x, start)) << "x passed back unchanged keeps every norm too";
}

// A decoder of capacity T fed the case's x with `schedule` returns, row for
// row, the full causal forward.
inline void ExpectDecodes(const RotaryCase& c, const std::string& schedule) {
  const RotaryAttention layer = c.Layer();
  RotaryDecoder decoder(layer, c.T);
  const std::optional<Tensor2> rows = DecodeInChunks(decoder, c.X(), c.Schedule(schedule));
  ASSERT_TRUE(rows.has_value());
  EXPECT_TRUE(MatchesGolden(*rows, c.File("forward"), kLayer, {"token", "column"},
                            DecoderMistakes(c.dir + c.name, schedule)));
}

// After the case's uneven chunks, a decoder of `capacity` caches every key
// rotated at its own position (<name>_keys.npy) and the values unrotated
// (<name>_values.npy).
inline void ExpectCachedKeysAreRotatedAtTheirOwnPositions(const RotaryCase& c, int capacity) {
  const RotaryAttention layer = c.Layer();
  RotaryDecoder decoder(layer, capacity);
  ASSERT_TRUE(DecodeInChunks(decoder, c.X(), c.chunks).has_value());
  EXPECT_EQ(decoder.cache().length(), c.T);
  EXPECT_EQ(decoder.cache().capacity(), capacity);
  EXPECT_TRUE(MatchesGolden(decoder.cache().keys(), c.File("keys"), kLayer,
                            {"head", "position", "feature"},
                            CacheMistakes(c.dir + c.name, "keys")));
  EXPECT_TRUE(MatchesGolden(decoder.cache().values(), c.File("values"), kLayer,
                            {"head", "position", "feature"},
                            CacheMistakes(c.dir + c.name, "values")));
}

// A layer of (d_model, n_heads) rejects, naming the bad value: an x of
// d_model - 1 columns, a mask of T + 1 columns for T tokens, and a negative
// start (`bad_start`).
inline void ExpectForwardRejectsBadArguments(int d_model, int n_heads, int T, int bad_start) {
  const RotaryAttention layer(d_model, n_heads);
  const auto shape = [](int rows, int cols) {
    return "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")";
  };
  EXPECT_TRUE(ThrowsInvalidArgument([&] { layer.forward(xt::zeros<float>({T, d_model - 1})); },
                                    {shape(T, d_model - 1)}));
  const Tensor2 wide_mask = xt::zeros<float>({T, T + 1});  // (T, T + 1)
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { layer.forward(xt::zeros<float>({T, d_model}), wide_mask); }, {shape(T, T + 1)}));
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { layer.forward(xt::zeros<float>({T, d_model}), {}, bad_start); },
      {"start=" + std::to_string(bad_start)}));
}

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_11_ROTARY_EMBEDDINGS_ROTARY_EMBEDDINGS_TEST_UTIL_H_
