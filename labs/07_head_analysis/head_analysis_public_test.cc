// Public tests for lab 7. Run: bazel test //labs/07_head_analysis/...
//
// The reference statistics in labs/07_head_analysis/golden/ are computed with
// NumPy straight from the header's definitions, on random softmax patterns
// (one causal, one unmasked). Next to each one lies what a classic mistake
// computes on the same weights, so a failure can say "looks like <the
// mistake>" (docs/07_head_analysis.md, "Classic mistakes"). The grading tests
// check the same things on other patterns, and more hand-made heads.
#include "labs/07_head_analysis/head_analysis.h"

#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/testing/testing.h"
#include "labs/07_head_analysis/head_analysis_test_util.h"

namespace mha {
namespace {

using testing::kOrder;
using testing::kRuleMistakes;
using testing::Near;
using testing::Quiet;

// The golden set of these tests: a causal (2, 6, 6) and an unmasked (3, 4, 4)
// pattern. The grading tests run the same cases
// (labs/07_head_analysis/head_analysis_test_util.h) on a set of their own.
const std::string kGolden = "labs/07_head_analysis/golden/";

// ---------------------------------------------------------------- profiles

TEST(ProfileHeadsPublic, EntropyMatchesNumpyOnRandomPatterns) {
  testing::ExpectEntropyMatchesGolden(kGolden);
}

TEST(ProfileHeadsPublic, MeanDistanceMatchesNumpyOnRandomPatterns) {
  testing::ExpectStatisticMatchesGolden(kGolden, &HeadProfile::mean_distance, "mean_distance",
                                        {"signed", "signed_reversed"});
}

TEST(ProfileHeadsPublic, PreviousTokenMatchesNumpyOnRandomPatterns) {
  testing::ExpectStatisticMatchesGolden(kGolden, &HeadProfile::previous_token, "previous_token",
                                        {"over_T"});
}

TEST(ProfileHeadsPublic, SelfAndFirstTokenMatchNumpyOnRandomPatterns) {
  testing::ExpectStatisticMatchesGolden(kGolden, &HeadProfile::self, "self");
  testing::ExpectStatisticMatchesGolden(kGolden, &HeadProfile::first_token, "first_token");
}

TEST(ProfileHeadsPublic, SingleTokenHasPreviousTokenZero) {
  const Tensor3 w = xt::ones<float>({1, 1, 1});
  const HeadProfile p = profile_heads(w)[0];
  ASSERT_FALSE(std::isnan(p.previous_token))
      << kRuleMistakes.Named("previous_token_nan_at_T1");
  EXPECT_TRUE(Near(p.previous_token, 0.0)) << "previous_token";
  // The one query attends to itself, which is also key 0.
  EXPECT_TRUE(Near(p.self, 1.0)) << "self";
  EXPECT_TRUE(Near(p.first_token, 1.0)) << "first_token";
}

TEST(ProfileHeadsPublic, RejectsWeightsThatAreNotSquare) {
  testing::ExpectProfileHeadsRejectsWeightsThatAreNotSquare();
}

// ---------------------------------------------------------- induction score

TEST(InductionScorePublic, MatchesNumpyOnARandomPattern) {
  // (6, 6) weights, L = 3.
  testing::ExpectInductionScoreMatchesGolden(kGolden, /*block_len=*/3);
}

TEST(InductionScorePublic, PerfectInductionPatternScoresOne) {
  // Block of L=2 tokens repeated: query 2 attends key 1, query 3 attends key 2.
  Tensor2 w = {{1, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}};
  EXPECT_TRUE(Near(induction_score(w, 2), 1.0));
  // Attending to the previous occurrence itself (key i - L) is no induction:
  // a function that always returns 1 passes the line above alone.
  Tensor2 duplicate = {{1, 0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}};
  EXPECT_TRUE(Near(induction_score(duplicate, 2), 0.0)) << "key i - L holds the same token";
}

// ------------------------------------------------------------- head labels

TEST(ClassifyHeadPublic, RulesApplyInTheDocumentedOrder) {
  testing::ExpectRulesApplyInTheDocumentedOrder();
}

TEST(ClassifyHeadPublic, ThresholdsIncludeTheirBoundary) {
  const testing::MistakeNote why = kRuleMistakes.Named("strict_thresholds");
  HeadProfile p = Quiet();
  p.self = 0.5f;
  EXPECT_EQ(classify_head(p), "self") << why;
  p = Quiet();
  p.mean_distance = 2.0f;
  EXPECT_EQ(classify_head(p), "local") << why;
}

// The rule reads positions only (docs/07_head_analysis.md, "What the labels
// cannot see"): a sharp head that always looks three tokens back has entropy 0
// and is still "diffuse", and a uniform causal head is "self", "local" or
// "diffuse" depending only on its length.
TEST(ClassifyHeadPublic, LooksAtPositionsNotAtEntropy) {
  const std::size_t T = 10;
  Tensor3 three_back = xt::zeros<float>({std::size_t{1}, T, T});
  for (std::size_t i = 0; i < T; ++i) three_back(0, i, i >= 3 ? i - 3 : 0) = 1.0f;
  const HeadProfile sharp = profile_heads(three_back)[0];
  EXPECT_TRUE(Near(sharp.entropy, 0.0)) << "a one-hot row has no entropy";
  EXPECT_EQ(classify_head(sharp), "diffuse") << "mean distance 2.4 > 2, no position >= 0.5";

  // Query i spreads its weight evenly over keys 0..i: mean distance (T - 1) / 4.
  for (const auto& [length, label] : std::vector<std::pair<std::size_t, std::string>>{
           {3, "self"}, {8, "local"}, {12, "diffuse"}}) {
    Tensor3 uniform = xt::zeros<float>({std::size_t{1}, length, length});
    for (std::size_t i = 0; i < length; ++i)
      for (std::size_t j = 0; j <= i; ++j) uniform(0, i, j) = 1.0f / static_cast<float>(i + 1);
    EXPECT_EQ(classify_head(profile_heads(uniform)[0]), label) << "uniform causal, T=" << length;
  }
}

}  // namespace
}  // namespace mha
