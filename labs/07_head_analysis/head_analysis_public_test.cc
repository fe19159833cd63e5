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

using testing::AllClose;
using testing::Field;
using testing::kHeadAnalysisMistakes;
using testing::kOrder;
using testing::kRowOp;
using testing::LoadGolden;
using testing::MatchesGolden;
using testing::Quiet;
using testing::ThrowsInvalidArgument;

const std::string kGolden = "labs/07_head_analysis/golden/";
const std::string kSeeDoc = "; see docs/07_head_analysis.md, \"Classic mistakes\"";
const char* const kCases[] = {"causal", "full"};  // (2, 6, 6) causal, (3, 4, 4) unmasked

std::vector<HeadProfile> Profiles(const std::string& c) {
  return profile_heads(LoadGolden<3>(kGolden + c + "_weights.npy"));
}

::testing::AssertionResult Near(float actual, double expected) {
  return AllClose(Tensor1{actual}, Tensor1{static_cast<float>(expected)}, kRowOp);
}

// ---------------------------------------------------------------- profiles

TEST(ProfileHeadsPublic, EntropyMatchesNumpyOnRandomPatterns) {
  for (const std::string c : kCases) {
    const std::vector<HeadProfile> p = Profiles(c);
    for (const HeadProfile& h : p) {
      ASSERT_FALSE(std::isnan(h.entropy))
          << c << ": entropy is NaN; a weight of 0 must add 0 ln 0 = 0, not 0 * -inf" << kSeeDoc;
    }
    EXPECT_TRUE(MatchesGolden(
        Field(p, &HeadProfile::entropy), kGolden + c + "_entropy.npy", kRowOp, {"head"},
        kHeadAnalysisMistakes.Of(kGolden + c + "_entropy", {"bits"})))
        << c;
  }
}

TEST(ProfileHeadsPublic, MeanDistanceMatchesNumpyOnRandomPatterns) {
  for (const std::string c : kCases) {
    EXPECT_TRUE(MatchesGolden(
        Field(Profiles(c), &HeadProfile::mean_distance), kGolden + c + "_mean_distance.npy",
        kRowOp, {"head"},
        kHeadAnalysisMistakes.Of(kGolden + c + "_mean_distance",
                                 {"signed", "signed_reversed"})))
        << c;
  }
}

TEST(ProfileHeadsPublic, PreviousTokenMatchesNumpyOnRandomPatterns) {
  for (const std::string c : kCases) {
    EXPECT_TRUE(MatchesGolden(
        Field(Profiles(c), &HeadProfile::previous_token), kGolden + c + "_previous_token.npy",
        kRowOp, {"head"},
        kHeadAnalysisMistakes.Of(kGolden + c + "_previous_token", {"over_T"})))
        << c;
  }
}

TEST(ProfileHeadsPublic, SelfAndFirstTokenMatchNumpyOnRandomPatterns) {
  for (const std::string c : kCases) {
    const std::vector<HeadProfile> p = Profiles(c);
    EXPECT_TRUE(
        MatchesGolden(Field(p, &HeadProfile::self), kGolden + c + "_self.npy", kRowOp, {"head"}))
        << c;
    EXPECT_TRUE(MatchesGolden(Field(p, &HeadProfile::first_token),
                              kGolden + c + "_first_token.npy", kRowOp, {"head"}))
        << c;
  }
}

TEST(ProfileHeadsPublic, SingleTokenHasPreviousTokenZero) {
  const Tensor3 w = xt::ones<float>({1, 1, 1});
  const HeadProfile p = profile_heads(w)[0];
  ASSERT_FALSE(std::isnan(p.previous_token))
      << "T == 1 has no query with i >= 1: 0, not 0/0" << kSeeDoc;
  EXPECT_TRUE(Near(p.previous_token, 0.0)) << "previous_token";
}

TEST(ProfileHeadsPublic, RejectsWeightsThatAreNotSquare) {
  const Tensor3 w = xt::zeros<float>({2, 3, 4});
  EXPECT_TRUE(ThrowsInvalidArgument([&] { profile_heads(w); }, {"(2, 3, 4)"}))
      << "weights must be (H, T, T)" << kSeeDoc;
}

// ---------------------------------------------------------- induction score

TEST(InductionScorePublic, MatchesNumpyOnARandomPattern) {
  const Tensor2 w = LoadGolden<2>(kGolden + "induction_weights.npy");  // (6, 6), L = 3
  EXPECT_TRUE(MatchesGolden(
      Tensor1{induction_score(w, 3)}, kGolden + "induction_score.npy", kRowOp, {"score"},
      kHeadAnalysisMistakes.Of(kGolden + "induction_score",
                               {"key_i_minus_L", "key_i_minus_L_plus_2", "over_2L"})));
}

TEST(InductionScorePublic, PerfectInductionPatternScoresOne) {
  // Block of L=2 tokens repeated: query 2 attends key 1, query 3 attends key 2.
  Tensor2 w = {{1, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}};
  EXPECT_TRUE(Near(induction_score(w, 2), 1.0));
}

// ------------------------------------------------------------- head labels

TEST(ClassifyHeadPublic, RulesApplyInTheDocumentedOrder) {
  // Switch the rules on from the last to the first: each new one must win.
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

TEST(ClassifyHeadPublic, ThresholdsIncludeTheirBoundary) {
  const std::string why = "a statistic exactly at its threshold passes (>= 0.5, <= 2.0)" + kSeeDoc;
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
