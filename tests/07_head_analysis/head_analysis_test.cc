// Hidden tests of lab 7: head profiles, induction score and head labels.
//
// Hand-made patterns whose statistics are known in closed form, plus random
// softmax patterns checked against NumPy (tests/07_head_analysis/gen_goldens.py).
// The public tests (labs/07_head_analysis) check the same mistakes on other
// patterns; the last test here draws a fresh random pattern on every run
// (testing::FreshSeed) and computes the statistics with plain loops in double.
#include "labs/07_head_analysis/head_analysis.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>
#include <xtensor/xview.hpp>

#include "common/testing/testing.h"
#include "labs/07_head_analysis/head_analysis_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::kOrder;
using testing::kRowOp;
using testing::kRuleMistakes;
using testing::LoadGolden;
using testing::Near;
using testing::Quiet;
using testing::ThrowsInvalidArgument;

// The golden set of the grading tests: the public tests' cases
// (labs/07_head_analysis/head_analysis_test_util.h) run on it, and the cases
// below are the grading tests' own.
const std::string kGolden = "tests/07_head_analysis/golden/";

// A one-head (1, T, T) pattern with p[i][j] = f(i, j).
Tensor3 Pattern(std::size_t T, const std::function<float(std::size_t, std::size_t)>& f) {
  Tensor3 w = xt::zeros<float>({std::size_t{1}, T, T});
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = 0; j < T; ++j) w(0, i, j) = f(i, j);
  return w;
}

// Query 0 sees only itself; every later query puts all its mass on i - 1.
Tensor3 PreviousTokenPattern(std::size_t T) {
  return Pattern(
      T, [](std::size_t i, std::size_t j) { return (i == 0 ? j == 0 : j + 1 == i) ? 1.0f : 0.0f; });
}

// ---------------------------------------------------------------- profiles

// Each golden test checks one statistic on two random softmax patterns: a
// causal one (H=3, T=7) and an unmasked one (H=2, T=5).

TEST(ProfileHeads, EntropyMatchesNumpyOnRandomPatterns) {
  testing::ExpectEntropyMatchesGolden(kGolden);
}

TEST(ProfileHeads, MeanDistanceMatchesNumpyOnRandomPatterns) {
  testing::ExpectStatisticMatchesGolden(kGolden, &HeadProfile::mean_distance, "mean_distance",
                                        {"signed", "signed_reversed"});
}

TEST(ProfileHeads, PreviousTokenMatchesNumpyOnRandomPatterns) {
  testing::ExpectStatisticMatchesGolden(kGolden, &HeadProfile::previous_token, "previous_token",
                                        {"over_T"});
}

TEST(ProfileHeads, SelfMatchesNumpyOnRandomPatterns) {
  testing::ExpectStatisticMatchesGolden(kGolden, &HeadProfile::self, "self");
}

TEST(ProfileHeads, FirstTokenMatchesNumpyOnRandomPatterns) {
  testing::ExpectStatisticMatchesGolden(kGolden, &HeadProfile::first_token, "first_token");
}

TEST(ProfileHeads, ReturnsOneProfilePerHeadInHeadOrder) {
  const std::size_t T = 5;
  Tensor3 w = xt::zeros<float>({std::size_t{2}, T, T});
  xt::view(w, 0, xt::all(), xt::all()) = xt::view(PreviousTokenPattern(T), 0, xt::all(), xt::all());
  for (std::size_t i = 0; i < T; ++i) w(1, i, i) = 1.0f;  // head 1: identity
  const std::vector<HeadProfile> p = profile_heads(w);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_TRUE(Near(p[0].previous_token, 1.0, "head 0 previous_token"));
  EXPECT_TRUE(Near(p[1].self, 1.0, "head 1 self"));
  EXPECT_TRUE(Near(p[1].previous_token, 0.0, "head 1 previous_token"));
}

TEST(ProfileHeads, PreviousTokenHeadHasPreviousTokenOneAndNoEntropy) {
  const std::size_t T = 6;
  const HeadProfile p = profile_heads(PreviousTokenPattern(T))[0];
  EXPECT_TRUE(Near(p.previous_token, 1.0, "previous_token"));
  EXPECT_TRUE(Near(p.entropy, 0.0, "entropy"));
  EXPECT_TRUE(Near(p.self, 1.0 / T, "self: only query 0 attends to itself"));
  EXPECT_TRUE(Near(p.first_token, 2.0 / T, "first_token: queries 0 and 1 attend to key 0"));
  EXPECT_TRUE(Near(p.mean_distance, (T - 1.0) / T, "mean_distance: 1 for every query but 0"));
}

TEST(ProfileHeads, UniformHeadHasEntropyLnTInNats) {
  const std::size_t T = 5;
  const HeadProfile p = profile_heads(Pattern(T, [](std::size_t, std::size_t) { return 0.2f; }))[0];
  EXPECT_TRUE(Near(p.entropy, std::log(5.0), "entropy = ln 5 nats (log2 5 would be bits)"));
  // mean_i (1/T) sum_j |i - j| = (T^2 - 1) / (3T) = 1.6 for T = 5.
  EXPECT_TRUE(Near(p.mean_distance, 1.6, "mean_distance"));
  EXPECT_TRUE(Near(p.self, 0.2, "self"));
  EXPECT_TRUE(Near(p.first_token, 0.2, "first_token"));
  EXPECT_TRUE(Near(p.previous_token, 0.2, "previous_token"));
}

TEST(ProfileHeads, CausalUniformHeadAveragesEntropyAndDistanceOverQueries) {
  // Query i spreads its mass evenly over keys 0..i: entropy ln(i + 1),
  // distance i / 2.
  const std::size_t T = 4;
  const HeadProfile p = profile_heads(Pattern(T, [](std::size_t i, std::size_t j) {
    return j <= i ? 1.0f / static_cast<float>(i + 1) : 0.0f;
  }))[0];
  const double entropy = (0.0 + std::log(2.0) + std::log(3.0) + std::log(4.0)) / 4.0;
  EXPECT_TRUE(Near(p.entropy, entropy, "entropy"));
  EXPECT_TRUE(Near(p.mean_distance, (0.0 + 0.5 + 1.0 + 1.5) / 4.0, "mean_distance"));
  EXPECT_TRUE(Near(p.previous_token, (1.0 / 2 + 1.0 / 3 + 1.0 / 4) / 3.0, "previous_token"));
}

TEST(ProfileHeads, FirstTokenHeadPutsAllItsMassOnKeyZero) {
  const std::size_t T = 5;
  const HeadProfile p =
      profile_heads(Pattern(T, [](std::size_t, std::size_t j) { return j == 0 ? 1.0f : 0.0f; }))[0];
  EXPECT_TRUE(Near(p.first_token, 1.0, "first_token"));
  EXPECT_TRUE(Near(p.entropy, 0.0, "entropy"));
  EXPECT_TRUE(Near(p.mean_distance, 2.0, "mean_distance: (0+1+2+3+4)/5"));
  EXPECT_TRUE(Near(p.self, 0.2, "self: only query 0"));
  EXPECT_TRUE(Near(p.previous_token, 0.25, "previous_token: only query 1 of the 4 with i >= 1"));
}

TEST(ProfileHeads, IdentityHeadHasSelfOneAndDistanceZero) {
  const std::size_t T = 4;
  const HeadProfile p = profile_heads(
      Pattern(T, [](std::size_t i, std::size_t j) { return i == j ? 1.0f : 0.0f; }))[0];
  EXPECT_TRUE(Near(p.self, 1.0, "self"));
  EXPECT_TRUE(Near(p.mean_distance, 0.0, "mean_distance"));
  EXPECT_TRUE(Near(p.entropy, 0.0, "entropy"));
  EXPECT_TRUE(Near(p.previous_token, 0.0, "previous_token"));
  EXPECT_TRUE(Near(p.first_token, 0.25, "first_token: only query 0"));
}

TEST(ProfileHeads, ZeroWeightsContributeNoEntropy) {
  // Every query splits its mass 50/50 between key 0 and itself (query 0:
  // all on key 0). The zeros elsewhere must count as 0 ln 0 = 0, not NaN.
  const std::size_t T = 5;
  const HeadProfile p = profile_heads(Pattern(T, [](std::size_t i, std::size_t j) {
    if (i == 0) return j == 0 ? 1.0f : 0.0f;
    return (j == 0 || j == i) ? 0.5f : 0.0f;
  }))[0];
  ASSERT_FALSE(std::isnan(p.entropy)) << "0 * ln 0 must be taken as 0";
  EXPECT_TRUE(Near(p.entropy, 4.0 * std::log(2.0) / 5.0, "entropy"));
}

TEST(ProfileHeads, MeanDistanceWeighsEachKeyByItsAttention) {
  // Query i: w on key 0, the rest on itself, so its distance is w * i; two
  // weights w, so that no constant answer fits both.
  const std::size_t T = 5;
  for (const float w : {0.25f, 0.5f}) {
    const HeadProfile p = profile_heads(Pattern(T, [w](std::size_t i, std::size_t j) {
      if (i == 0) return j == 0 ? 1.0f : 0.0f;
      return j == i ? 1.0f - w : (j == 0 ? w : 0.0f);
    }))[0];
    EXPECT_TRUE(Near(p.mean_distance, w * (0 + 1 + 2 + 3 + 4) / 5.0,
                     "mean_distance with " + std::to_string(w) + " on key 0"));
  }
}

TEST(ProfileHeads, MeanDistanceCountsKeysAfterTheQueryAsPositive) {
  // Unmasked: every query looks only at the last key, T - 1 - i ahead.
  const std::size_t T = 4;
  const HeadProfile p =
      profile_heads(Pattern(T, [](std::size_t, std::size_t j) { return j == 3 ? 1.0f : 0.0f; }))[0];
  EXPECT_TRUE(Near(p.mean_distance, (3.0 + 2.0 + 1.0 + 0.0) / 4.0, "mean_distance uses |i - j|"));
}

TEST(ProfileHeads, SingleTokenHasPreviousTokenZero) {
  const Tensor3 w = xt::ones<float>({1, 1, 1});
  const HeadProfile p = profile_heads(w)[0];
  ASSERT_FALSE(std::isnan(p.previous_token))
      << kRuleMistakes.Named("previous_token_nan_at_T1");
  EXPECT_TRUE(Near(p.previous_token, 0.0, "previous_token"));
  EXPECT_TRUE(Near(p.self, 1.0, "self"));
  EXPECT_TRUE(Near(p.first_token, 1.0, "first_token"));
  EXPECT_TRUE(Near(p.entropy, 0.0, "entropy"));
  EXPECT_TRUE(Near(p.mean_distance, 0.0, "mean_distance"));
}

TEST(ProfileHeads, RejectsWeightsThatAreNotSquare) {
  testing::ExpectProfileHeadsRejectsWeightsThatAreNotSquare();
}

TEST(ProfileHeads, RejectsWeightsWithNoHeads) {
  const Tensor3 w = xt::zeros<float>({0, 3, 3});
  EXPECT_TRUE(ThrowsInvalidArgument([&] { profile_heads(w); }, {"(0, 3, 3)"}));
}

// ---------------------------------------------------------- induction score

// (2L, 2L): the first copy attends to key 0; query i >= L attends to key(i).
Tensor2 RepeatPattern(std::size_t L, const std::function<std::size_t(std::size_t)>& key) {
  Tensor2 w = xt::zeros<float>({2 * L, 2 * L});
  for (std::size_t i = 0; i < L; ++i) w(i, 0) = 1.0f;
  for (std::size_t i = L; i < 2 * L; ++i) w(i, key(i)) = 1.0f;
  return w;
}

// A precondition of the tests below, each of whose answers a constant also
// gives: the perfect induction pattern scores 1 and the duplicate-token one
// (key i - L, the same token, not the one after it) scores 0.
::testing::AssertionResult TellsInductionFromDuplicateTokens() {
  const std::size_t L = 3;
  const double perfect = induction_score(RepeatPattern(L, [&](std::size_t i) { return i - L + 1; }), 3);
  const double duplicate = induction_score(RepeatPattern(L, [&](std::size_t i) { return i - L; }), 3);
  if (Near(perfect, 1.0, "") && Near(duplicate, 0.0, "")) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "precondition: with L=3, the perfect induction pattern must score 1 (got " << perfect
         << ") and attending to the previous occurrence itself 0 (got " << duplicate << ")";
}

TEST(InductionScore, MatchesNumpyOnARandomPattern) {
  testing::ExpectInductionScoreMatchesGolden(kGolden, /*block_len=*/4);
}

TEST(InductionScore, PerfectInductionPatternScoresOne) {
  ASSERT_TRUE(TellsInductionFromDuplicateTokens());
  const std::size_t L = 4;
  const Tensor2 w = RepeatPattern(L, [&](std::size_t i) { return i - L + 1; });
  EXPECT_TRUE(Near(induction_score(w, 4), 1.0, "induction score"));
}

TEST(InductionScore, AttendingToThePreviousOccurrenceItselfScoresZero) {
  ASSERT_TRUE(TellsInductionFromDuplicateTokens());
  // Key i - L holds the same token as query i (a "duplicate-token" head):
  // not the token that followed it.
  const std::size_t L = 4;
  const Tensor2 w = RepeatPattern(L, [&](std::size_t i) { return i - L; });
  EXPECT_TRUE(Near(induction_score(w, 4), 0.0, "induction score of key i - L"));
}

TEST(InductionScore, AveragesOverTheSecondCopyOnly) {
  ASSERT_TRUE(TellsInductionFromDuplicateTokens());
  // Half of the second copy attends the induction target, half key 0; the
  // first copy's rows must not enter the mean.
  const std::size_t L = 4;
  const Tensor2 w = RepeatPattern(L, [&](std::size_t i) { return i % 2 == 0 ? i - L + 1 : 0; });
  EXPECT_TRUE(Near(induction_score(w, 4), 0.5, "induction score"));
}

TEST(InductionScore, RejectsWeightsThatAreNotTwiceTheBlock) {
  const Tensor2 w = xt::zeros<float>({6, 6});
  EXPECT_TRUE(ThrowsInvalidArgument([&] { induction_score(w, 4); }, {"(6, 6)", "block_len=4"}));
}

TEST(InductionScore, RejectsNonPositiveBlockLen) {
  const Tensor2 w = xt::zeros<float>({2, 2});
  EXPECT_TRUE(ThrowsInvalidArgument([&] { induction_score(w, 0); }, {"block_len=0"}));
}

// ------------------------------------------------------------- head labels

TEST(ClassifyHead, InductionWinsOverEveryOtherRule) {
  const HeadProfile all_high{0.0f, 1.0f, 0.9f, 0.9f, 0.9f};
  EXPECT_EQ(classify_head(all_high, 0.9f), "induction") << kOrder;
  // ... when it reaches its threshold: below it, the next rule wins (a
  // function that always says "induction" passes the line above alone).
  EXPECT_EQ(classify_head(all_high, 0.4f), "previous-token") << kOrder;
}

TEST(ClassifyHead, RulesApplyInTheDocumentedOrder) {
  testing::ExpectRulesApplyInTheDocumentedOrder();
}

TEST(ClassifyHead, ThresholdsIncludeTheirBoundary) {
  const testing::MistakeNote why = kRuleMistakes.Named("strict_thresholds");
  HeadProfile p = Quiet();
  EXPECT_EQ(classify_head(p, 0.5f), "induction") << why;
  p.previous_token = 0.5f;
  EXPECT_EQ(classify_head(p), "previous-token") << why;
  p = Quiet();
  p.self = 0.5f;
  EXPECT_EQ(classify_head(p), "self") << why;
  p = Quiet();
  p.first_token = 0.5f;
  EXPECT_EQ(classify_head(p), "first-token") << why;
  p = Quiet();
  p.mean_distance = 2.0f;
  EXPECT_EQ(classify_head(p), "local") << why;
}

TEST(ClassifyHead, JustBelowEveryThresholdIsDiffuse) {
  const HeadProfile p{1.0f, 2.01f, 0.49f, 0.49f, 0.49f};
  EXPECT_EQ(classify_head(p, 0.49f), "diffuse") << kOrder;
  // ... and just above the last one it is not (a function that always says
  // "diffuse" passes the line above alone).
  EXPECT_EQ(classify_head(HeadProfile{1.0f, 1.99f, 0.49f, 0.49f, 0.49f}, 0.49f), "local")
      << kOrder;
}

// The rule reads positions only: a sharp head three tokens back is "diffuse"
// with entropy 0, and a uniform causal head's label depends on its length.
TEST(ClassifyHead, LooksAtPositionsNotAtEntropy) {
  const std::size_t T = 9;
  const HeadProfile sharp = profile_heads(Pattern(T, [](std::size_t i, std::size_t j) {
    return j == (i >= 3 ? i - 3 : 0) ? 1.0f : 0.0f;
  }))[0];
  EXPECT_TRUE(Near(sharp.entropy, 0.0, "entropy of a one-hot head"));
  EXPECT_EQ(classify_head(sharp), "diffuse") << "mean distance 21/9 > 2, no position >= 0.5";
  for (const auto& [length, label] : std::vector<std::pair<std::size_t, std::string>>{
           {1, "self"}, {4, "self"}, {5, "local"}, {9, "local"}, {10, "diffuse"}}) {
    const HeadProfile uniform = profile_heads(Pattern(length, [](std::size_t i, std::size_t j) {
      return j <= i ? 1.0f / static_cast<float>(i + 1) : 0.0f;
    }))[0];
    EXPECT_EQ(classify_head(uniform), label) << "uniform causal head, T=" << length;
  }
}

// Last, so that a known mistake is named by the golden tests above first: a
// pattern no committed file can predict (softmax rows of random logits, with
// or without a causal mask), its statistics computed here from the header's
// definitions with plain loops in double. Replay a failure with
// MHA_TEST_SEED=<the printed seed>.
TEST(FreshRandomInputs, ProfilesAndInductionScoreMatchTheDefinitions) {
  testing::FreshDraws gen;
  const std::size_t H = 1 + gen() % 3, L = 1 + gen() % 4, T = 2 * L;
  const bool causal = gen() % 2 == 0;
  SCOPED_TRACE("H=" + std::to_string(H) + " T=" + std::to_string(T) +
               (causal ? " causal" : " unmasked"));
  const Tensor3 logits = testing::RandomTensor3(H, T, T, static_cast<std::uint32_t>(gen()),
                                                /*scale=*/3.0f);
  Tensor3 w = xt::zeros<float>({H, T, T});
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t i = 0; i < T; ++i) {
      const std::size_t keys = causal ? i + 1 : T;  // masked keys keep weight 0
      double max = logits(h, i, 0), sum = 0.0;
      for (std::size_t j = 0; j < keys; ++j) max = std::max(max, double(logits(h, i, j)));
      for (std::size_t j = 0; j < keys; ++j) sum += std::exp(logits(h, i, j) - max);
      for (std::size_t j = 0; j < keys; ++j)
        w(h, i, j) = static_cast<float>(std::exp(logits(h, i, j) - max) / sum);
    }
  }
  const std::vector<HeadProfile> profiles = profile_heads(w);
  ASSERT_EQ(profiles.size(), H);
  for (std::size_t h = 0; h < H; ++h) {
    double entropy = 0, distance = 0, previous = 0, self = 0, first = 0;
    for (std::size_t i = 0; i < T; ++i) {
      for (std::size_t j = 0; j < T; ++j) {
        const double p = w(h, i, j);
        if (p > 0) entropy -= p * std::log(p);
        distance += p * std::fabs(double(i) - double(j));
      }
      self += w(h, i, i);
      first += w(h, i, 0);
      if (i >= 1) previous += w(h, i, i - 1);
    }
    const std::string head = "head " + std::to_string(h);
    EXPECT_TRUE(Near(profiles[h].entropy, entropy / T, head + " entropy"));
    EXPECT_TRUE(Near(profiles[h].mean_distance, distance / T, head + " mean_distance"));
    EXPECT_TRUE(Near(profiles[h].previous_token, T > 1 ? previous / (T - 1) : 0.0,
                     head + " previous_token"));
    EXPECT_TRUE(Near(profiles[h].self, self / T, head + " self"));
    EXPECT_TRUE(Near(profiles[h].first_token, first / T, head + " first_token"));
  }
  const Tensor2 head0 = xt::view(w, 0, xt::all(), xt::all());
  double induction = 0;
  for (std::size_t i = L; i < 2 * L; ++i) induction += head0(i, i - L + 1);
  EXPECT_TRUE(Near(induction_score(head0, static_cast<int>(L)), induction / L, "induction"));
}

}  // namespace
}  // namespace mha
