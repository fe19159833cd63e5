// Hidden tests for lab 2: softmax_rows, attention_loop and attention_batched.
//
// Goldens come from PyTorch in float64 (tests/02_batched_attention/gen_goldens.py).
// Every attention behaviour is checked on both implementations: the
// ATTENTION_TEST macro below defines one test in suite AttentionLoop and one
// in suite AttentionBatched from the same body. The public tests
// (labs/02_batched_attention) check the same mistakes on other shapes and
// seeds; the last test here draws fresh random inputs on every run
// (testing::FreshSeed) and compares with plain loops.
#include "labs/02_batched_attention/attention.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xreducer.hpp>
#include <xtensor/xsort.hpp>
#include <xtensor/xview.hpp>

#include "tests/common/naive.h"
#include "common/testing/testing.h"
#include "labs/02_batched_attention/attention_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::AttentionFn;
using testing::AttentionPart;
using testing::kAttention;
using testing::kAttentionMistakes;
using testing::kCrossMaskedMistakes;
using testing::kMaskedMistakes;
using testing::kOutputAxes;
using testing::kRowOp;
using testing::kUnmaskedMistakes;
using testing::kWeightAxes;

constexpr float kInf = std::numeric_limits<float>::infinity();
// The golden set of the grading tests: the public tests' cases
// (labs/02_batched_attention/attention_test_util.h) run on it, and the cases
// below are the grading tests' own.
const std::string kGolden = "tests/02_batched_attention/golden/";

// Defines AttentionLoop.<Behaviour> and AttentionBatched.<Behaviour>, both
// running the body that follows with `attend` bound to that version
// (attention_test_util.h).
#define ATTENTION_TEST(Behaviour) ATTENTION_TEST_BOTH(AttentionLoop, AttentionBatched, Behaviour)

// Each row of `p` (rows, columns) puts its largest probability on the
// column of its largest score, and more there than on its lowest score: a row
// of equal weights sums to one too, but it reads nothing from its scores.
void ExpectEveryRowPeaksAtItsHighestScore(const Tensor2& p, const Tensor2& scores,
                                          const std::string& what) {
  for (std::size_t i = 0; i < scores.shape(0); ++i) {
    const auto row = xt::row(scores, i);
    const std::size_t top = static_cast<std::size_t>(xt::argmax(row)()),
                      low = static_cast<std::size_t>(xt::argmin(row)());
    const std::size_t peak = static_cast<std::size_t>(xt::argmax(xt::row(p, i))());
    EXPECT_TRUE(peak == top && p(i, top) > p(i, low))
        << what << " row " << i << ": its highest score (column " << top
        << ") must get its largest weight, above that of its lowest score (column " << low
        << "); it has " << p(i, top) << " there, " << p(i, low) << " on the lowest and its "
        << "largest on column " << peak;
  }
}

// ---------------------------------------------------------------- softmax_rows

TEST(SoftmaxRows, MatchesTorchOnRandomRows) {
  testing::ExpectSoftmaxRowsMatchesGolden(kGolden, "softmax_random");  // (4, 6)
}

TEST(SoftmaxRows, StaysFiniteOnLogitsNearOneThousand) {
  // (3, 5) scores: exp(1000) overflows float32, only a softmax that subtracts
  // the row max survives.
  testing::ExpectSoftmaxRowsMatchesGolden(
      kGolden, "softmax_huge", kAttentionMistakes.Of(kGolden + "softmax_huge_probs", {"no_max"}));
}

TEST(SoftmaxRows, EveryRowSumsToOne) {
  // Scores with spread 50, so some rows reach far beyond exp's float range.
  const Tensor2 scores = testing::RandomTensor2(6, 7, /*seed=*/21, /*scale=*/50.0f);
  const Tensor2 p = softmax_rows(scores);
  ASSERT_EQ(p.shape(), scores.shape());
  const Tensor1 sums = xt::sum(p, {1});
  EXPECT_TRUE(AllClose(sums, Tensor1(xt::ones<float>({6})), kRowOp, {"row"}));
  EXPECT_TRUE(xt::all(p >= 0.0f && p <= 1.0f)) << "every probability must lie in [0, 1]";
  ExpectEveryRowPeaksAtItsHighestScore(p, scores, "softmax");
}

TEST(SoftmaxRows, TurnsAnAllMinusInfinityRowIntoZeros) {
  // (3, 4) scores: row 1 is entirely -inf; rows 0 and 2 have some -inf entries.
  testing::ExpectSoftmaxRowsTurnsMaskedRowsIntoZeros(kGolden, "softmax_masked");
}

// ----------------------------------------------------- attention, both versions

ATTENTION_TEST(WeightsMatchTorchWithoutMask) {
  // H=2, T=S=4, d_head=3.
  testing::ExpectAttentionMatchesGolden(attend, kGolden, "self", "", "self", kUnmaskedMistakes,
                                        AttentionPart::kWeights);
}

ATTENTION_TEST(OutputMatchesTorchWithoutMask) {
  testing::ExpectAttentionMatchesGolden(attend, kGolden, "self", "", "self", kUnmaskedMistakes,
                                        AttentionPart::kOutput);
}

ATTENTION_TEST(WeightsMatchTorchWithMask) {
  // Query 0 sees no key.
  testing::ExpectAttentionMatchesGolden(attend, kGolden, "self", "masked", "masked",
                                        kMaskedMistakes, AttentionPart::kWeights);
}

ATTENTION_TEST(OutputMatchesTorchWithMask) {
  testing::ExpectAttentionMatchesGolden(attend, kGolden, "self", "masked", "masked",
                                        kMaskedMistakes, AttentionPart::kOutput);
}

ATTENTION_TEST(FullyMaskedQueryGetsZerosWhileOtherQueriesStayFinite) {
  const Tensor3 q = testing::RandomTensor3(3, 4, 2, /*seed=*/31);  // (H=3, T=4, d_head=2)
  const Tensor3 k = testing::RandomTensor3(3, 5, 2, /*seed=*/32);  // (H=3, S=5, d_head=2)
  const Tensor3 v = testing::RandomTensor3(3, 5, 2, /*seed=*/33);
  Tensor2 mask = xt::zeros<float>({4, 5});
  xt::view(mask, 2, xt::all()) = -kInf;  // query 2 may see no key
  mask(0, 4) = -kInf;
  const AttentionResult r = attend(q, k, v, mask);
  const Tensor3 zero_weights = xt::zeros<float>({3, 1, 5});
  const Tensor3 zero_output = xt::zeros<float>({3, 1, 2});
  EXPECT_TRUE(AllClose(xt::view(r.weights, xt::all(), xt::range(2, 3), xt::all()), zero_weights,
                       kAttention, kWeightAxes))
      << "weights of the fully masked query 2";
  EXPECT_TRUE(AllClose(xt::view(r.output, xt::all(), xt::range(2, 3), xt::all()), zero_output,
                       kAttention, kOutputAxes))
      << "output of the fully masked query 2";
  EXPECT_TRUE(xt::all(xt::isfinite(r.weights))) << "no weight may be NaN or inf";
  EXPECT_TRUE(xt::all(xt::isfinite(r.output))) << "no output may be NaN or inf";
  // Zeros everywhere would pass the checks above: the other queries must be right too.
  const naive::Attention expected = naive::ScaledDotProduct(q, k, v, mask);
  EXPECT_TRUE(AllClose(r.weights, expected.weights, kAttention, kWeightAxes))
      << "the weights of every query, against plain loops";
  EXPECT_TRUE(AllClose(r.output, expected.output, kAttention, kOutputAxes))
      << "the output of every query, against plain loops";
}

ATTENTION_TEST(EveryWeightRowSumsToOne) {
  const Tensor3 q = testing::RandomTensor3(3, 5, 4, /*seed=*/41, /*scale=*/3.0f);  // (3, 5, 4)
  const Tensor3 k = testing::RandomTensor3(3, 6, 4, /*seed=*/42, /*scale=*/3.0f);  // (3, 6, 4)
  const Tensor3 v = testing::RandomTensor3(3, 6, 4, /*seed=*/43);
  const AttentionResult r = attend(q, k, v, std::nullopt);
  ASSERT_EQ(r.weights.shape(), (std::array<std::size_t, 3>{3, 5, 6}));
  const Tensor2 sums = xt::sum(r.weights, {2});  // (H, T)
  EXPECT_TRUE(AllClose(sums, Tensor2(xt::ones<float>({3, 5})), kAttention, {"head", "query"}));
  for (std::size_t h = 0; h < 3; ++h) {
    const Tensor2 qh = xt::view(q, h, xt::all(), xt::all());                     // (T, d_head)
    const Tensor2 kh_t = xt::transpose(xt::view(k, h, xt::all(), xt::all()));  // (d_head, S)
    const Tensor2 weights = xt::view(r.weights, h, xt::all(), xt::all());        // (T, S)
    // Unscaled scores: the same order in each row.
    ExpectEveryRowPeaksAtItsHighestScore(weights, naive::MatMul(qh, kh_t),
                                         "head " + std::to_string(h) + " weights");
  }
}

ATTENTION_TEST(MatchesTorchWhenKeysOutnumberQueries) {
  // H=3, T=3, S=5, d_head=2.
  testing::ExpectAttentionMatchesGolden(attend, kGolden, "cross", "", "cross", kUnmaskedMistakes);
}

ATTENTION_TEST(AppliesATBySMaskWhenKeysOutnumberQueries) {
  // causal_mask(3, 5): the 3 queries are the last 3 of 5 positions.
  testing::ExpectAttentionMatchesGolden(attend, kGolden, "cross", "cross_masked", "cross_masked",
                                        kCrossMaskedMistakes);
}

ATTENTION_TEST(StaysFiniteWhenScoresReachHundreds) {
  // Scores up to several hundred.
  testing::ExpectAttentionMatchesGolden(attend, kGolden, "overflow", "", "overflow", {"no_max"});
}

ATTENTION_TEST(MaskedKeyWithHugeValueDoesNotLeak) {
  // Key 2 is masked for every query and its value is 1e30: any weight on it,
  // however small, would dominate the output. H=2, T=4, S=5, d_head=3.
  testing::ExpectAttentionMatchesGolden(attend, kGolden, "leak", "leak", "leak", {},
                                        AttentionPart::kOutput);
}

ATTENTION_TEST(RejectsHeadCountMismatch) {
  testing::ExpectAttentionRejectsKeysWithAnotherHeadCount(attend);
}

ATTENTION_TEST(RejectsDHeadMismatch) {
  testing::ExpectAttentionRejectsShapes(attend, {2, 4, 3}, {2, 4, 5}, {2, 4, 3},
                                        {"(2, 4, 3)", "(2, 4, 5)"});
}

ATTENTION_TEST(RejectsKeysAndValuesOfDifferentLengths) {
  testing::ExpectAttentionRejectsShapes(attend, {2, 4, 3}, {2, 5, 3}, {2, 6, 3},
                                        {"(2, 5, 3)", "(2, 6, 3)"});
}

ATTENTION_TEST(RejectsMaskOfWrongShape) {
  testing::ExpectAttentionRejectsATransposedMask(attend, /*T=*/4, /*S=*/5, /*d_head=*/3);
}

// ------------------------------------------------------------ loop vs batched

TEST(AttentionBatched, MatchesAttentionLoopOnRandomInputs) {
  const Tensor3 q = testing::RandomTensor3(4, 6, 5, /*seed=*/51);  // (H=4, T=6, d_head=5)
  const Tensor3 k = testing::RandomTensor3(4, 7, 5, /*seed=*/52);  // (H=4, S=7, d_head=5)
  const Tensor3 v = testing::RandomTensor3(4, 7, 5, /*seed=*/53);
  testing::ExpectBatchedMatchesLoop(kGolden, q, k, v, std::nullopt);
}

TEST(AttentionBatched, MatchesAttentionLoopWithAMask) {
  const Tensor3 q = testing::RandomTensor3(4, 6, 5, /*seed=*/54);
  const Tensor3 k = testing::RandomTensor3(4, 7, 5, /*seed=*/55);
  const Tensor3 v = testing::RandomTensor3(4, 7, 5, /*seed=*/56);
  Tensor2 mask = xt::zeros<float>({6, 7});  // query i sees keys j <= i + 1
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t j = i + 2; j < 7; ++j) mask(i, j) = -kInf;
  testing::ExpectBatchedMatchesLoop(kGolden, q, k, v, mask);
}

// Last, so that a known mistake is named by the golden tests above first:
// sizes, inputs and a mask no committed file can predict (some keys hidden,
// sometimes a whole query row), both versions against plain loops in double
// (tests/common/naive.h). Replay a failure with MHA_TEST_SEED=<the printed seed>.
TEST(FreshRandomInputs, BothVersionsMatchPlainLoops) {
  testing::FreshDraws gen;
  const std::size_t H = 1 + gen() % 4, T = 1 + gen() % 7, S = T + gen() % 4;
  const std::size_t d_head = 1 + gen() % 8;
  SCOPED_TRACE("H=" + std::to_string(H) + " T=" + std::to_string(T) + " S=" +
               std::to_string(S) + " d_head=" + std::to_string(d_head));
  const auto next_seed = [&] { return static_cast<std::uint32_t>(gen()); };
  const Tensor3 q = testing::RandomTensor3(H, T, d_head, next_seed(), /*scale=*/2.0f);
  const Tensor3 k = testing::RandomTensor3(H, S, d_head, next_seed(), /*scale=*/2.0f);
  const Tensor3 v = testing::RandomTensor3(H, S, d_head, next_seed());
  Tensor2 mask = xt::zeros<float>({T, S});
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = 0; j < S; ++j)
      if (gen() % 3 == 0) mask(i, j) = -kInf;
  const naive::Attention expected = naive::ScaledDotProduct(q, k, v, mask);
  const std::vector<std::pair<std::string, AttentionFn>> versions = {
      {"attention_loop", &attention_loop}, {"attention_batched", &attention_batched}};
  for (const auto& [name, attend] : versions) {
    const AttentionResult r = attend(q, k, v, mask);
    EXPECT_TRUE(AllClose(r.weights, expected.weights, kAttention, kWeightAxes)) << name;
    EXPECT_TRUE(AllClose(r.output, expected.output, kAttention, kOutputAxes)) << name;
  }
}

}  // namespace
}  // namespace mha
