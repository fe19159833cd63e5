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
using testing::AttentionFn;
using testing::kAttentionMistakes;
using testing::kAttentionShapeChecks;
using testing::kCrossMaskedMistakes;
using testing::kMaskedMistakes;
using testing::kUnmaskedMistakes;
using testing::kAttention;
using testing::KnownMistake;
using testing::kRowOp;
using testing::LoadGolden;
using testing::MatchesGolden;
using testing::ThrowsInvalidArgument;
using Inputs = testing::AttentionInputs;

constexpr float kInf = std::numeric_limits<float>::infinity();
const std::string kGolden = "labs/02_batched_attention/golden/";
const std::string kSee = "; see docs/02_batched_attention.md, \"Classic mistakes\"";
const std::vector<std::string> kWeightAxes = {"head", "query", "key"};
const std::vector<std::string> kOutputAxes = {"head", "query", "column"};
const std::vector<std::string> kRowAxes = {"row", "column"};

// Defines AttentionLoopPublic.<Behaviour> and AttentionBatchedPublic.<Behaviour>,
// both running the body that follows with `attend` bound to that version
// (attention_test_util.h).
#define ATTENTION_TEST(Behaviour) \
  ATTENTION_TEST_BOTH(AttentionLoopPublic, AttentionBatchedPublic, Behaviour)

// q, k, v (and the mask, if the case has one) of a golden case.
Inputs LoadInputs(const std::string& qkv, const std::string& mask = "") {
  return testing::LoadAttentionInputs(kGolden, qkv, mask);
}

// The known mistakes `names` of golden case `name`, for "weights" or "output".
std::vector<KnownMistake> Mistakes(const std::string& name, const std::string& what,
                                   const std::vector<std::string>& names) {
  return kAttentionMistakes.Of(kGolden + name + "_" + what, names);
}

// ---------------------------------------------------------------- softmax_rows

TEST(SoftmaxRowsPublic, MatchesHandComputedValues) {
  const Tensor2 scores = {{1.0f, 2.0f, 3.0f}, {5.0f, 5.0f, 5.0f}};
  // exp(k) / (e + e^2 + e^3) for k = 1, 2, 3; a constant row is uniform.
  const Tensor2 expected = {{0.09003057f, 0.24472847f, 0.66524096f},
                            {1.0f / 3, 1.0f / 3, 1.0f / 3}};
  EXPECT_TRUE(AllClose(softmax_rows(scores), expected, kRowOp, kRowAxes));
}

TEST(SoftmaxRowsPublic, StaysFiniteOnLogitsInTheHundreds) {
  // exp(500) overflows float32: only a softmax that subtracts the row max survives.
  const Tensor2 scores = LoadGolden<2>(kGolden + "softmax_huge_scores.npy");  // (3, 4)
  EXPECT_TRUE(MatchesGolden(
      softmax_rows(scores), kGolden + "softmax_huge_probs.npy", kRowOp, kRowAxes,
      testing::kAttentionMistakes.Of(kGolden + "softmax_huge_probs", {"no_max"})));
}

TEST(SoftmaxRowsPublic, TurnsAFullyMaskedRowIntoZeros) {
  // Row 0 is entirely -inf; row 1 has some -inf entries.
  const Tensor2 scores = LoadGolden<2>(kGolden + "softmax_masked_scores.npy");  // (2, 5)
  EXPECT_TRUE(MatchesGolden(
      softmax_rows(scores), kGolden + "softmax_masked_probs.npy", kRowOp, kRowAxes,
      {{kGolden + "softmax_masked_probs_mistake_nan_row.npy",
        "a fully masked row left as NaN instead of zeros (an all -inf row: -inf - (-inf) is "
        "NaN)" + kSee}}));
}

// ----------------------------------------------------- attention, both versions

ATTENTION_TEST(WeightsMatchTorchWithoutMask) {
  const Inputs in = LoadInputs("self");  // H=3, T=S=5, d_head=4
  EXPECT_TRUE(MatchesGolden(attend(in.q, in.k, in.v, std::nullopt).weights,
                            kGolden + "self_weights.npy", kAttention, kWeightAxes,
                            Mistakes("self", "weights", kUnmaskedMistakes)));
}

ATTENTION_TEST(OutputMatchesTorchWithoutMask) {
  const Inputs in = LoadInputs("self");
  EXPECT_TRUE(MatchesGolden(attend(in.q, in.k, in.v, std::nullopt).output,
                            kGolden + "self_output.npy", kAttention, kOutputAxes,
                            Mistakes("self", "output", kUnmaskedMistakes)));
}

ATTENTION_TEST(WeightsMatchTorchWithAMaskAndAQueryThatSeesNoKey) {
  const Inputs in = LoadInputs("self", "masked");  // query 2 sees no key
  EXPECT_TRUE(MatchesGolden(attend(in.q, in.k, in.v, in.mask).weights,
                            kGolden + "masked_weights.npy", kAttention, kWeightAxes,
                            Mistakes("masked", "weights", kMaskedMistakes)));
}

ATTENTION_TEST(OutputMatchesTorchWithAMaskAndAQueryThatSeesNoKey) {
  const Inputs in = LoadInputs("self", "masked");
  EXPECT_TRUE(MatchesGolden(attend(in.q, in.k, in.v, in.mask).output,
                            kGolden + "masked_output.npy", kAttention, kOutputAxes,
                            Mistakes("masked", "output", kMaskedMistakes)));
}

ATTENTION_TEST(MatchesTorchWhenThreeQueriesAttendOverSixKeys) {
  // H=2, T=3 new queries, S=6 keys, d_head=4, causal_mask(3, 6).
  const Inputs in = LoadInputs("cross", "cross");
  const AttentionResult r = attend(in.q, in.k, in.v, in.mask);
  EXPECT_TRUE(MatchesGolden(r.weights, kGolden + "cross_weights.npy", kAttention, kWeightAxes,
                            Mistakes("cross", "weights", kCrossMaskedMistakes)));
  EXPECT_TRUE(MatchesGolden(r.output, kGolden + "cross_output.npy", kAttention, kOutputAxes,
                            Mistakes("cross", "output", kCrossMaskedMistakes)));
}

ATTENTION_TEST(StaysFiniteWhenScoresReachHundreds) {
  const Inputs in = LoadInputs("overflow");  // H=2, T=S=4, d_head=5, scores up to ~1000
  const AttentionResult r = attend(in.q, in.k, in.v, std::nullopt);
  EXPECT_TRUE(MatchesGolden(r.weights, kGolden + "overflow_weights.npy", kAttention, kWeightAxes,
                            Mistakes("overflow", "weights", {"no_max"})));
  EXPECT_TRUE(MatchesGolden(r.output, kGolden + "overflow_output.npy", kAttention, kOutputAxes,
                            Mistakes("overflow", "output", {"no_max"})));
}

ATTENTION_TEST(RejectsAMaskOfTheWrongShape) {
  const Tensor3 q = xt::zeros<float>({2, 3, 4});   // T=3
  const Tensor3 kv = xt::zeros<float>({2, 6, 4});  // S=6
  const Tensor2 mask = xt::zeros<float>({6, 3});   // transposed: must be (3, 6)
  EXPECT_TRUE(ThrowsInvalidArgument([&] { attend(q, kv, kv, mask); }, {"(6, 3)", "(3, 6)"}))
      << kAttentionShapeChecks;
}

ATTENTION_TEST(RejectsKeysWithAnotherHeadCount) {
  const Tensor3 q = xt::zeros<float>({2, 4, 3});
  const Tensor3 kv = xt::zeros<float>({3, 4, 3});
  EXPECT_TRUE(
      ThrowsInvalidArgument([&] { attend(q, kv, kv, std::nullopt); }, {"(2, 4, 3)", "(3, 4, 3)"}))
      << kAttentionShapeChecks;
}

// ------------------------------------------------------------ loop vs batched

TEST(AttentionBatchedPublic, GivesTheSameNumbersAsAttentionLoopWithAMask) {
  const Tensor3 q = testing::RandomTensor3(2, 3, 5, /*seed=*/4);  // (H=2, T=3, d_head=5)
  const Tensor3 k = testing::RandomTensor3(2, 4, 5, /*seed=*/5);  // (H=2, S=4, d_head=5)
  const Tensor3 v = testing::RandomTensor3(2, 4, 5, /*seed=*/6);
  const Tensor2 mask = {{0.0f, 0.0f, -kInf, -kInf},  // (T=3, S=4)
                        {0.0f, -kInf, 0.0f, -kInf},
                        {0.0f, 0.0f, 0.0f, 0.0f}};
  const AttentionResult loop = attention_loop(q, k, v, mask);
  const AttentionResult batched = attention_batched(q, k, v, mask);
  EXPECT_TRUE(AllClose(batched.weights, loop.weights, kAttention, kWeightAxes));
  EXPECT_TRUE(AllClose(batched.output, loop.output, kAttention, kOutputAxes));
}

}  // namespace
}  // namespace mha
