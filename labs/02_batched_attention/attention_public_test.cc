// Public tests for lab 2. Run: bazel test //labs/02_batched_attention/...
//
// The reference numbers in labs/02_batched_attention/golden/ come from
// PyTorch in float64. Next to each one lies what a classic mistake computes
// on the same inputs, so a failure can say "looks like <the mistake>"
// (docs/02_batched_attention.md, "Classic mistakes"). The cases have three
// heads (so 1/sqrt(d_model) and 1/sqrt(d_head) differ), a mask with a query
// that sees no key, fewer queries than keys, and scores in the hundreds.
// Every attention test runs on both versions: ATTENTION_TEST below defines
// AttentionLoopPublic.<Behaviour> and AttentionBatchedPublic.<Behaviour>.
// The grading tests check the same things on other shapes and seeds, and more.
#include "labs/02_batched_attention/attention.h"

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xview.hpp>

#include "common/testing/testing.h"
#include "labs/02_batched_attention/attention_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::AttentionPart;
using testing::kAttention;
using testing::kAttentionMistakes;
using testing::kCrossMaskedMistakes;
using testing::kMaskedMistakes;
using testing::kOutputAxes;
using testing::kRowOp;
using testing::kSoftmaxAxes;
using testing::kUnmaskedMistakes;
using testing::kWeightAxes;

constexpr float kInf = std::numeric_limits<float>::infinity();
// The golden set of these tests; the grading tests run the same cases
// (labs/02_batched_attention/attention_test_util.h) on a set of their own.
const std::string kGolden = "labs/02_batched_attention/golden/";

// Defines AttentionLoopPublic.<Behaviour> and AttentionBatchedPublic.<Behaviour>,
// both running the body that follows with `attend` bound to that version
// (attention_test_util.h).
#define ATTENTION_TEST(Behaviour) \
  ATTENTION_TEST_BOTH(AttentionLoopPublic, AttentionBatchedPublic, Behaviour)

// ---------------------------------------------------------------- softmax_rows

TEST(SoftmaxRowsPublic, MatchesHandComputedValues) {
  const Tensor2 scores = {{1.0f, 2.0f, 3.0f}, {5.0f, 5.0f, 5.0f}};
  // exp(k) / (e + e^2 + e^3) for k = 1, 2, 3; a constant row is uniform.
  const Tensor2 expected = {{0.09003057f, 0.24472847f, 0.66524096f},
                            {1.0f / 3, 1.0f / 3, 1.0f / 3}};
  EXPECT_TRUE(AllClose(softmax_rows(scores), expected, kRowOp, kSoftmaxAxes));
}

TEST(SoftmaxRowsPublic, StaysFiniteOnLogitsInTheHundreds) {
  // (3, 4) scores: exp(500) overflows float32, only a softmax that subtracts
  // the row max survives.
  testing::ExpectSoftmaxRowsMatchesGolden(
      kGolden, "softmax_huge", kAttentionMistakes.Of(kGolden + "softmax_huge_probs", {"no_max"}));
}

TEST(SoftmaxRowsPublic, TurnsAFullyMaskedRowIntoZeros) {
  // (2, 5) scores: row 0 is entirely -inf; row 1 has some -inf entries.
  testing::ExpectSoftmaxRowsTurnsMaskedRowsIntoZeros(kGolden, "softmax_masked");
}

// ----------------------------------------------------- attention, both versions

ATTENTION_TEST(WeightsMatchTorchWithoutMask) {
  // H=3, T=S=5, d_head=4.
  testing::ExpectAttentionMatchesGolden(attend, kGolden, "self", "", "self", kUnmaskedMistakes,
                                        AttentionPart::kWeights);
}

ATTENTION_TEST(OutputMatchesTorchWithoutMask) {
  testing::ExpectAttentionMatchesGolden(attend, kGolden, "self", "", "self", kUnmaskedMistakes,
                                        AttentionPart::kOutput);
}

ATTENTION_TEST(WeightsMatchTorchWithAMaskAndAQueryThatSeesNoKey) {
  // Query 2 sees no key.
  testing::ExpectAttentionMatchesGolden(attend, kGolden, "self", "masked", "masked",
                                        kMaskedMistakes, AttentionPart::kWeights);
}

ATTENTION_TEST(OutputMatchesTorchWithAMaskAndAQueryThatSeesNoKey) {
  testing::ExpectAttentionMatchesGolden(attend, kGolden, "self", "masked", "masked",
                                        kMaskedMistakes, AttentionPart::kOutput);
}

ATTENTION_TEST(MatchesTorchWhenThreeQueriesAttendOverSixKeys) {
  // H=2, T=3 new queries, S=6 keys, d_head=4, causal_mask(3, 6).
  testing::ExpectAttentionMatchesGolden(attend, kGolden, "cross", "cross", "cross",
                                        kCrossMaskedMistakes);
}

ATTENTION_TEST(StaysFiniteWhenScoresReachHundreds) {
  // H=2, T=S=4, d_head=5, scores up to ~1000.
  testing::ExpectAttentionMatchesGolden(attend, kGolden, "overflow", "", "overflow", {"no_max"});
}

ATTENTION_TEST(RejectsAMaskOfTheWrongShape) {
  testing::ExpectAttentionRejectsATransposedMask(attend, /*T=*/3, /*S=*/6, /*d_head=*/4);
}

ATTENTION_TEST(RejectsKeysWithAnotherHeadCount) {
  testing::ExpectAttentionRejectsKeysWithAnotherHeadCount(attend);
}

// ------------------------------------------------------------ loop vs batched

TEST(AttentionBatchedPublic, GivesTheSameNumbersAsAttentionLoopWithAMask) {
  const Tensor3 q = testing::RandomTensor3(2, 3, 5, /*seed=*/4);  // (H=2, T=3, d_head=5)
  const Tensor3 k = testing::RandomTensor3(2, 4, 5, /*seed=*/5);  // (H=2, S=4, d_head=5)
  const Tensor3 v = testing::RandomTensor3(2, 4, 5, /*seed=*/6);
  const Tensor2 mask = {{0.0f, 0.0f, -kInf, -kInf},  // (T=3, S=4)
                        {0.0f, -kInf, 0.0f, -kInf},
                        {0.0f, 0.0f, 0.0f, 0.0f}};
  testing::ExpectBatchedMatchesLoop(kGolden, q, k, v, mask);
}

}  // namespace
}  // namespace mha
