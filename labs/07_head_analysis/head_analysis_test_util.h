// Helpers and shared cases of lab 7's tests: the public tests here and the
// grading tests (in the instructors' repository) run the same checks, each on
// its own golden set (a folder of .npy files written by a golden generator),
// name each classic mistake in the same words, and read profiles and labels
// alike. The grading tests add cases of their own on top.
//
//   MatchesGolden(Field(profiles, &HeadProfile::entropy), dir + "causal_entropy.npy", kRowOp,
//                 {"head"}, kHeadAnalysisMistakes.Of(dir + "causal_entropy", {"bits"}));
#ifndef MHA_LABS_07_HEAD_ANALYSIS_HEAD_ANALYSIS_TEST_UTIL_H_
#define MHA_LABS_07_HEAD_ANALYSIS_HEAD_ANALYSIS_TEST_UTIL_H_

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>

#include "common/testing/testing.h"
#include "labs/07_head_analysis/head_analysis.h"

namespace mha {
namespace testing {

// The classic mistakes of docs/07_head_analysis.md, by the names the golden
// generator gives what each one computes (<statistic>_mistake_<name>.npy).
inline const MistakeTable kHeadAnalysisMistakes(
    "docs/07_head_analysis.md",
    {
        {"bits", "entropy in bits (log2) instead of nats (ln)"},
        {"signed", "distance i - j without the absolute value"},
        {"signed_reversed", "distance j - i without the absolute value"},
        {"over_T",
         "previous-token sum divided by T instead of by the T - 1 queries that have a previous "
         "token"},
        {"key_i_minus_L",
         "induction target i - L (the previous occurrence) instead of i - L + 1 (the token "
         "after it)"},
        {"key_i_minus_L_plus_2", "induction target i - L + 2 instead of i - L + 1"},
        {"over_2L",
         "induction score divided by all 2L queries instead of the L queries of the second "
         "copy"},
    });

// The mistakes the tests tell by a NaN, an exception or a label (no golden),
// named as data for the grader (common/testing/misconception.h).
inline const MistakeTable kRuleMistakes(
    "docs/07_head_analysis.md",
    {
        {"zero_log_zero_is_nan", "entropy is NaN; a weight of 0 must add 0 ln 0 = 0, not 0 * -inf"},
        {"previous_token_nan_at_T1", "T == 1 has no query with i >= 1: 0, not 0/0"},
        {"no_square_check", "weights must be (H, T, T)"},
        {"wrong_rule_order",
         "the first rule that holds wins: induction, previous-token, self, first-token, local, "
         "diffuse"},
        {"strict_thresholds", "a statistic exactly at its threshold passes (>= 0.5, <= 2.0)"},
    });

// What a label in the wrong order says.
inline const MistakeNote kOrder = kRuleMistakes.Named("wrong_rule_order");

// The same field of every profile, as an (H,) tensor.
inline Tensor1 Field(const std::vector<HeadProfile>& profiles, float HeadProfile::*field) {
  Tensor1 out = xt::zeros<float>({profiles.size()});
  for (std::size_t h = 0; h < profiles.size(); ++h) out(h) = profiles[h].*field;
  return out;
}

// A profile with every statistic below its threshold ("diffuse").
inline HeadProfile Quiet() { return HeadProfile{2.0f, 3.0f, 0.1f, 0.1f, 0.1f}; }

// One scalar statistic against its expected value (kRowOp), named in the
// message when `what` is given.
inline ::testing::AssertionResult Near(float actual, double expected,
                                       const std::string& what = "") {
  ::testing::AssertionResult r =
      AllClose(Tensor1{actual}, Tensor1{static_cast<float>(expected)}, kRowOp);
  if (!r && !what.empty()) r << " (" << what << ")";
  return r;
}

// Shared cases. `golden` is a golden set's folder ("labs/07_head_analysis/golden/").

// The golden set's two random softmax patterns, <case>_weights.npy: a causal
// one and an unmasked one, each with its statistics (<case>_entropy.npy, ...).
inline const char* const kPatternCases[] = {"causal", "full"};

inline std::vector<HeadProfile> GoldenProfiles(const std::string& golden, const std::string& c) {
  return profile_heads(LoadGolden<3>(golden + c + "_weights.npy"));  // (H, T, T)
}

// The statistic `field` of every head, on both patterns, equals
// <case>_<statistic>.npy; a failure names the first of `mistakes` it looks like.
inline void ExpectStatisticMatchesGolden(const std::string& golden, float HeadProfile::*field,
                                         const std::string& statistic,
                                         const std::vector<std::string>& mistakes = {}) {
  for (const std::string c : kPatternCases) {
    const std::string name = golden + c + "_" + statistic;
    EXPECT_TRUE(MatchesGolden(Field(GoldenProfiles(golden, c), field), name + ".npy", kRowOp,
                              {"head"}, kHeadAnalysisMistakes.Of(name, mistakes)))
        << c;
  }
}

// ... and entropy, which must never be NaN first (0 ln 0 = 0).
inline void ExpectEntropyMatchesGolden(const std::string& golden) {
  for (const std::string c : kPatternCases) {
    const std::vector<HeadProfile> p = GoldenProfiles(golden, c);
    for (const HeadProfile& h : p) {
      ASSERT_FALSE(std::isnan(h.entropy))
          << c << ": " << kRuleMistakes.Named("zero_log_zero_is_nan");
    }
    EXPECT_TRUE(MatchesGolden(Field(p, &HeadProfile::entropy), golden + c + "_entropy.npy",
                              kRowOp, {"head"},
                              kHeadAnalysisMistakes.Of(golden + c + "_entropy", {"bits"})))
        << c;
  }
}

inline void ExpectProfileHeadsRejectsWeightsThatAreNotSquare() {
  const Tensor3 w = xt::zeros<float>({2, 3, 4});
  EXPECT_TRUE(ThrowsInvalidArgument([&] { profile_heads(w); }, {"(2, 3, 4)"}))
      << kRuleMistakes.Named("no_square_check");
}

// induction_score(<golden>induction_weights.npy, block_len) equals
// induction_score.npy.
inline void ExpectInductionScoreMatchesGolden(const std::string& golden, int block_len) {
  const Tensor2 w = LoadGolden<2>(golden + "induction_weights.npy");  // (2L, 2L)
  EXPECT_TRUE(MatchesGolden(
      Tensor1{induction_score(w, block_len)}, golden + "induction_score.npy", kRowOp, {"score"},
      kHeadAnalysisMistakes.Of(golden + "induction_score",
                               {"key_i_minus_L", "key_i_minus_L_plus_2", "over_2L"})));
}

// Switch the rules on from the last to the first: each new one must win.
inline void ExpectRulesApplyInTheDocumentedOrder() {
  HeadProfile p = Quiet();
  EXPECT_EQ(classify_head(p), "diffuse") << kOrder;
  p.mean_distance = 1.0f;
  EXPECT_EQ(classify_head(p), "local") << kOrder;
  p.first_token = 0.9f;
  EXPECT_EQ(classify_head(p), "first-token") << kOrder;
  p.self = 0.9f;
  EXPECT_EQ(classify_head(p), "self") << kOrder;
  p.previous_token = 0.9f;
  EXPECT_EQ(classify_head(p), "previous-token") << kOrder;
  EXPECT_EQ(classify_head(p, 0.9f), "induction") << kOrder;
}

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_07_HEAD_ANALYSIS_HEAD_ANALYSIS_TEST_UTIL_H_
