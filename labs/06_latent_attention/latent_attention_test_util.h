// Helpers and shared cases of lab 6's tests: the public tests here and the
// grading tests (in the instructors' repository) run the same checks, each on
// golden cases of their own (LatentCase: a layer and the inputs and outputs a
// golden generator wrote for it), and name each classic mistake of the two
// forwards in the same words. The grading tests add cases of their own on top.
//
//   MatchesGolden(mla.forward_absorbed(x), dir + "case1_output.npy", kLayer, axes,
//                 LatentAbsorbedMistakes(dir + "case1_output", /*masked=*/false));
#ifndef MHA_LABS_06_LATENT_ATTENTION_LATENT_ATTENTION_TEST_UTIL_H_
#define MHA_LABS_06_LATENT_ATTENTION_LATENT_ATTENTION_TEST_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "common/testing/testing.h"
#include "labs/06_latent_attention/latent_attention.h"

namespace mha {
namespace testing {

// The classic mistakes of the forwards in docs/06_latent_attention.md, by
// the names the golden generator gives what each one computes
// (<case>_output_mistake_<name>.npy).
inline const MistakeTable kLatentAttentionMistakes(
    "docs/06_latent_attention.md",
    {
        {"kv_rank_scale", "scores scaled by 1/sqrt(kv_rank) instead of 1/sqrt(d_head)"},
        {"dmodel_scale", "scores scaled by 1/sqrt(d_model) instead of 1/sqrt(d_head)"},
        {"no_w_o", "the output projection W_O was never applied"},
        {"k_v_swapped", "keys built with W_UV and values with W_UK (swapped)"},
        {"mask_ignored", "the mask was never added to the scores"},
        {"wuk_reshaped",
         "W_UK reshaped to (d_model, kv_rank) instead of transposed when it was folded into the "
         "queries"},
        {"scores_transposed",
         "scores computed as c @ q_latent^T (keys x queries) instead of q_latent @ c^T"},
        {"whole_w_uv",
         "W_UV @ W_O folded with all of W_UV instead of head h's column block W_UV_h @ W_O_h"},
    });

// The mistakes that either forward can make, for the golden output `golden`
// (its path without ".npy") of a case with or without a mask.
inline std::vector<KnownMistake> LatentForwardMistakes(const std::string& golden, bool masked) {
  std::vector<std::string> names = {"kv_rank_scale", "dmodel_scale", "no_w_o", "k_v_swapped"};
  if (masked) names.push_back("mask_ignored");
  return kLatentAttentionMistakes.Of(golden, names);
}

// ... and those of the absorbed order besides.
inline std::vector<KnownMistake> LatentAbsorbedMistakes(const std::string& golden, bool masked) {
  std::vector<KnownMistake> m = LatentForwardMistakes(golden, masked);
  for (const KnownMistake& k : kLatentAttentionMistakes.Of(
           golden, {"wuk_reshaped", "scores_transposed", "whole_w_uv"})) {
    m.push_back(k);
  }
  return m;
}

// The mistakes the tests name on their own (no table of the lab's golden
// generator behind them), as data for the grader (common/testing/misconception.h).
inline const MistakeTable kLatentCheckMistakes(
    "docs/06_latent_attention.md",
    {
        {"drawn_after_w_dkv", "W_DKV drawn before W_Q: the order is W_Q, W_DKV, W_UK, W_UV, W_O"},
        {"w_uk_fan_in_d_model", "W_UK drawn with fan-in d_model instead of kv_rank"},
        {"w_uv_fan_in_d_model", "W_UV drawn with fan-in d_model instead of kv_rank"},
        {"stale_w_uk",
         "the old W_UK is still in use: do not keep matrices derived from the public weights "
         "between calls"},
        {"w_q_draw", "W_Q, drawn 1st"},
        {"w_dkv_draw", "W_DKV, drawn 2nd, fan-in d_model"},
        {"w_uk_draw", "W_UK, drawn 3rd, fan-in kv_rank"},
        {"w_uv_draw", "W_UV, drawn 4th, fan-in kv_rank"},
        {"w_o_draw", "W_O, drawn 5th"},
        {"cache_not_c_only", "the cache holds c only: kv_rank floats per token"},
        {"parameter_count", "2*d_model^2 (W_Q, W_O) + 3*d_model*kv_rank (W_DKV, W_UK, W_UV)"},
    });

// Mistake `name` of kLatentCheckMistakes, recognised by the golden `golden`.
inline KnownMistake LatentCheckMistake(const std::string& golden, const std::string& name) {
  return {golden, kLatentCheckMistakes.Message(name), kLatentCheckMistakes.Mistake(name)};
}

inline const std::vector<std::string> kLatentLayerAxes = {"token", "feature"};

// One golden case: the files <dir><name>_x.npy, _latent.npy, _output.npy (and
// _mask.npy when `masked`) of the layer (d_model, n_heads, kv_rank, seed).
struct LatentCase {
  std::string dir;   // the golden set's folder, "labs/06_latent_attention/golden/"
  std::string name;  // "case1"
  int d_model, n_heads, kv_rank;
  std::uint64_t seed;
  bool masked;

  std::string File(const std::string& what) const { return dir + name + "_" + what + ".npy"; }
  MultiHeadLatentAttention Layer() const {
    return MultiHeadLatentAttention(d_model, n_heads, kv_rank, seed);
  }
  Tensor2 X() const { return LoadGolden<2>(File("x")); }  // (T, d_model)
  std::optional<Tensor2> Mask() const {
    if (!masked) return std::nullopt;
    return LoadGolden<2>(File("mask"));  // (T, T)
  }
};

// Shared cases.

// The seeded `layer`'s five weights equal <weights>W_Q.npy, ... (`weights`:
// the golden path up to the matrix name, "<dir>seed7_"), drawn in the order
// W_Q, W_DKV, W_UK, W_UV, W_O.
inline void ExpectSeededWeightsMatchGolden(const MultiHeadLatentAttention& layer,
                                           const std::string& weights) {
  const std::string& g = weights;
  const auto named = [](const char* name) { return kLatentCheckMistakes.Named(name); };
  EXPECT_TRUE(MatchesGolden(
      layer.W_Q, g + "W_Q.npy", kExact, {"in", "out"},
      {LatentCheckMistake(g + "W_Q_mistake_drawn_after_w_dkv.npy", "drawn_after_w_dkv")}))
      << named("w_q_draw");
  EXPECT_TRUE(MatchesGolden(layer.W_DKV, g + "W_DKV.npy", kExact, {"in", "out"}))
      << named("w_dkv_draw");
  // W_UK and W_UV alike: fan-in kv_rank (the mistake: fan-in d_model).
  const std::vector<std::tuple<std::string, const Tensor2*, std::string>> up_projections = {
      {"W_UK", &layer.W_UK, "w_uk"}, {"W_UV", &layer.W_UV, "w_uv"}};
  for (const auto& [name, w, key] : up_projections) {
    EXPECT_TRUE(MatchesGolden(
        *w, g + name + ".npy", kExact, {"in", "out"},
        {LatentCheckMistake(g + name + "_mistake_fan_in_d_model.npy", key + "_fan_in_d_model")}))
        << kLatentCheckMistakes.Named(key + "_draw");
  }
  EXPECT_TRUE(MatchesGolden(layer.W_O, g + "W_O.npy", kExact, {"in", "out"}))
      << named("w_o_draw");
}

// compress(x) equals <name>_latent.npy: x @ W_DKV.
inline void ExpectCompressMatchesGolden(const LatentCase& c) {
  EXPECT_TRUE(MatchesGolden(c.Layer().compress(c.X()), c.File("latent"), kLayer,
                            {"token", "latent"}))
      << c.name;
}

// forward (the naive order) equals <name>_output.npy.
inline void ExpectForwardMatchesTorch(const LatentCase& c) {
  EXPECT_TRUE(MatchesGolden(c.Layer().forward(c.X(), c.Mask()), c.File("output"), kLayer,
                            kLatentLayerAxes,
                            LatentForwardMistakes(c.dir + c.name + "_output", c.masked)))
      << c.name;
}

// forward_absorbed equals <name>_output.npy too.
inline void ExpectAbsorbedMatchesTorch(const LatentCase& c) {
  EXPECT_TRUE(MatchesGolden(c.Layer().forward_absorbed(c.X(), c.Mask()), c.File("output"),
                            kLayer, kLatentLayerAxes,
                            LatentAbsorbedMistakes(c.dir + c.name + "_output", c.masked)))
      << c.name;
}

// A precondition of the tests that compare forward_absorbed with forward: two
// answers that compute nothing (zeros, x passed back) agree with each other,
// so forward must first give the golden case `c`.
inline ::testing::AssertionResult ForwardGivesTheGolden(const LatentCase& c) {
  return MatchesGolden(c.Layer().forward(c.X(), c.Mask()), c.File("output"), kLayer,
                       kLatentLayerAxes);
}

// After a first call of each forward, W_UK := <name>_new_W_UK.npy changes both
// forwards to <name>_output_new_W_UK.npy: nothing derived from the old
// weights may be kept between calls.
inline void ExpectOverwrittenWUkIsUsedByBothForwards(const LatentCase& c) {
  MultiHeadLatentAttention mla = c.Layer();
  const Tensor2 x = c.X();
  // Run once first, so anything kept from the old weights would show.
  mla.forward_absorbed(x);
  mla.forward(x);
  mla.W_UK = LoadGolden<2>(c.File("new_W_UK"));
  const std::string expected = c.File("output_new_W_UK");
  const std::vector<KnownMistake> stale = {LatentCheckMistake(c.File("output"), "stale_w_uk")};
  EXPECT_TRUE(MatchesGolden(mla.forward(x), expected, kLayer, kLatentLayerAxes, stale))
      << "forward";
  EXPECT_TRUE(MatchesGolden(mla.forward_absorbed(x), expected, kLayer, kLatentLayerAxes, stale))
      << "forward_absorbed";
}

inline void ExpectRejectsDModelNotDivisibleByHeads() {
  EXPECT_TRUE(ThrowsInvalidArgument([] { MultiHeadLatentAttention(10, 4, 3); },
                                    {"d_model=10", "n_heads=4"}));
}

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_06_LATENT_ATTENTION_LATENT_ATTENTION_TEST_UTIL_H_
