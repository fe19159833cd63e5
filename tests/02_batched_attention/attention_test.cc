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
#include <xtensor/xview.hpp>

#include "tests/common/naive.h"
#include "common/testing/testing.h"
#include "labs/02_batched_attention/attention_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::AttentionFn;
using testing::kAttentionMistakes;
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
const std::string kGolden = "tests/02_batched_attention/golden/";
const std::string kSee = "; see docs/02_batched_attention.md, \"Classic mistakes\"";
// What a failed shape check says (the words of kAttentionShapeChecks), named
// as data for the grader (common/testing/misconception.h).
const testing::MistakeTable kShapeMistakes(
    "docs/02_batched_attention.md",
    {{"shapes_unchecked", "mismatched shapes must throw std::invalid_argument naming them"}});
const testing::MistakeNote kAttentionShapeChecks = kShapeMistakes.Named("shapes_unchecked");
// The table's nan_row, worded for softmax_rows alone.
const std::string kNanRow =
    "a fully masked row left as NaN instead of zeros (an all -inf row: -inf - (-inf) is NaN)";
const std::vector<std::string> kWeightAxes = {"head", "query", "key"};
const std::vector<std::string> kOutputAxes = {"head", "query", "column"};
const std::vector<std::string> kRowAxes = {"row", "column"};

// Defines AttentionLoop.<Behaviour> and AttentionBatched.<Behaviour>, both
// running the body that follows with `attend` bound to that version
// (attention_test_util.h).
#define ATTENTION_TEST(Behaviour) ATTENTION_TEST_BOTH(AttentionLoop, AttentionBatched, Behaviour)

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

TEST(SoftmaxRows, MatchesTorchOnRandomRows) {
  const Tensor2 scores = LoadGolden<2>(kGolden + "softmax_random_scores.npy");  // (4, 6)
  EXPECT_TRUE(
      MatchesGolden(softmax_rows(scores), kGolden + "softmax_random_probs.npy", kRowOp, kRowAxes));
}

TEST(SoftmaxRows, StaysFiniteOnLogitsNearOneThousand) {
  // exp(1000) overflows float32: only a softmax that subtracts the row max survives.
  const Tensor2 scores = LoadGolden<2>(kGolden + "softmax_huge_scores.npy");  // (3, 5)
  EXPECT_TRUE(MatchesGolden(
      softmax_rows(scores), kGolden + "softmax_huge_probs.npy", kRowOp, kRowAxes,
      testing::kAttentionMistakes.Of(kGolden + "softmax_huge_probs", {"no_max"})));
}

TEST(SoftmaxRows, EveryRowSumsToOne) {
  // Scores with spread 50, so some rows reach far beyond exp's float range.
  const Tensor2 scores = testing::RandomTensor2(6, 7, /*seed=*/21, /*scale=*/50.0f);
  const Tensor2 p = softmax_rows(scores);
  ASSERT_EQ(p.shape(), scores.shape());
  const Tensor1 sums = xt::sum(p, {1});
  EXPECT_TRUE(AllClose(sums, Tensor1(xt::ones<float>({6})), kRowOp, {"row"}));
  EXPECT_TRUE(xt::all(p >= 0.0f && p <= 1.0f)) << "every probability must lie in [0, 1]";
}

TEST(SoftmaxRows, TurnsAnAllMinusInfinityRowIntoZeros) {
  // Row 1 is entirely -inf; rows 0 and 2 have some -inf entries.
  const Tensor2 scores = LoadGolden<2>(kGolden + "softmax_masked_scores.npy");  // (3, 4)
  EXPECT_TRUE(MatchesGolden(
      softmax_rows(scores), kGolden + "softmax_masked_probs.npy", kRowOp, kRowAxes,
      {{kGolden + "softmax_masked_probs_mistake_nan_row.npy", kNanRow + kSee,
        {"nan_row", kNanRow, "docs/02_batched_attention.md"}}}));
}

// ----------------------------------------------------- attention, both versions

ATTENTION_TEST(WeightsMatchTorchWithoutMask) {
  const Inputs in = LoadInputs("self");  // H=2, T=S=4, d_head=3
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

ATTENTION_TEST(WeightsMatchTorchWithMask) {
  const Inputs in = LoadInputs("self", "masked");  // query 0 sees no key
  EXPECT_TRUE(MatchesGolden(attend(in.q, in.k, in.v, in.mask).weights,
                            kGolden + "masked_weights.npy", kAttention, kWeightAxes,
                            Mistakes("masked", "weights", kMaskedMistakes)));
}

ATTENTION_TEST(OutputMatchesTorchWithMask) {
  const Inputs in = LoadInputs("self", "masked");
  EXPECT_TRUE(MatchesGolden(attend(in.q, in.k, in.v, in.mask).output, kGolden + "masked_output.npy",
                            kAttention, kOutputAxes,
                            Mistakes("masked", "output", kMaskedMistakes)));
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
}

ATTENTION_TEST(EveryWeightRowSumsToOne) {
  const Tensor3 q = testing::RandomTensor3(3, 5, 4, /*seed=*/41, /*scale=*/3.0f);  // (3, 5, 4)
  const Tensor3 k = testing::RandomTensor3(3, 6, 4, /*seed=*/42, /*scale=*/3.0f);  // (3, 6, 4)
  const Tensor3 v = testing::RandomTensor3(3, 6, 4, /*seed=*/43);
  const AttentionResult r = attend(q, k, v, std::nullopt);
  ASSERT_EQ(r.weights.shape(), (std::array<std::size_t, 3>{3, 5, 6}));
  const Tensor2 sums = xt::sum(r.weights, {2});  // (H, T)
  EXPECT_TRUE(AllClose(sums, Tensor2(xt::ones<float>({3, 5})), kAttention, {"head", "query"}));
}

ATTENTION_TEST(MatchesTorchWhenKeysOutnumberQueries) {
  const Inputs in = LoadInputs("cross");  // H=3, T=3, S=5, d_head=2
  const AttentionResult r = attend(in.q, in.k, in.v, std::nullopt);
  EXPECT_TRUE(MatchesGolden(r.weights, kGolden + "cross_weights.npy", kAttention, kWeightAxes,
                            Mistakes("cross", "weights", kUnmaskedMistakes)));
  EXPECT_TRUE(MatchesGolden(r.output, kGolden + "cross_output.npy", kAttention, kOutputAxes,
                            Mistakes("cross", "output", kUnmaskedMistakes)));
}

ATTENTION_TEST(AppliesATBySMaskWhenKeysOutnumberQueries) {
  // causal_mask(3, 5): the 3 queries are the last 3 of 5 positions.
  const Inputs in = LoadInputs("cross", "cross_masked");
  const AttentionResult r = attend(in.q, in.k, in.v, in.mask);
  EXPECT_TRUE(MatchesGolden(r.weights, kGolden + "cross_masked_weights.npy", kAttention,
                            kWeightAxes,
                            Mistakes("cross_masked", "weights", kCrossMaskedMistakes)));
  EXPECT_TRUE(MatchesGolden(r.output, kGolden + "cross_masked_output.npy", kAttention, kOutputAxes,
                            Mistakes("cross_masked", "output", kCrossMaskedMistakes)));
}

ATTENTION_TEST(StaysFiniteWhenScoresReachHundreds) {
  const Inputs in = LoadInputs("overflow");  // scores up to several hundred
  const AttentionResult r = attend(in.q, in.k, in.v, std::nullopt);
  EXPECT_TRUE(MatchesGolden(r.weights, kGolden + "overflow_weights.npy", kAttention, kWeightAxes,
                            Mistakes("overflow", "weights", {"no_max"})));
  EXPECT_TRUE(MatchesGolden(r.output, kGolden + "overflow_output.npy", kAttention, kOutputAxes,
                            Mistakes("overflow", "output", {"no_max"})));
}

ATTENTION_TEST(MaskedKeyWithHugeValueDoesNotLeak) {
  // Key 2 is masked for every query and its value is 1e30: any weight on it,
  // however small, would dominate the output.
  const Inputs in = LoadInputs("leak", "leak");  // H=2, T=4, S=5, d_head=3
  EXPECT_TRUE(MatchesGolden(attend(in.q, in.k, in.v, in.mask).output, kGolden + "leak_output.npy",
                            kAttention, kOutputAxes));
}

ATTENTION_TEST(RejectsHeadCountMismatch) {
  const Tensor3 q = xt::zeros<float>({2, 4, 3});
  const Tensor3 kv = xt::zeros<float>({3, 4, 3});
  EXPECT_TRUE(
      ThrowsInvalidArgument([&] { attend(q, kv, kv, std::nullopt); }, {"(2, 4, 3)", "(3, 4, 3)"}))
      << kAttentionShapeChecks;
}

ATTENTION_TEST(RejectsDHeadMismatch) {
  const Tensor3 q = xt::zeros<float>({2, 4, 3});
  const Tensor3 k = xt::zeros<float>({2, 4, 5});
  const Tensor3 v = xt::zeros<float>({2, 4, 3});
  EXPECT_TRUE(
      ThrowsInvalidArgument([&] { attend(q, k, v, std::nullopt); }, {"(2, 4, 3)", "(2, 4, 5)"}))
      << kAttentionShapeChecks;
}

ATTENTION_TEST(RejectsKeysAndValuesOfDifferentLengths) {
  const Tensor3 q = xt::zeros<float>({2, 4, 3});
  const Tensor3 k = xt::zeros<float>({2, 5, 3});
  const Tensor3 v = xt::zeros<float>({2, 6, 3});
  EXPECT_TRUE(
      ThrowsInvalidArgument([&] { attend(q, k, v, std::nullopt); }, {"(2, 5, 3)", "(2, 6, 3)"}))
      << kAttentionShapeChecks;
}

ATTENTION_TEST(RejectsMaskOfWrongShape) {
  const Tensor3 q = xt::zeros<float>({2, 4, 3});   // T=4
  const Tensor3 kv = xt::zeros<float>({2, 5, 3});  // S=5
  const Tensor2 mask = xt::zeros<float>({5, 4});   // transposed: must be (4, 5)
  EXPECT_TRUE(ThrowsInvalidArgument([&] { attend(q, kv, kv, mask); }, {"(5, 4)", "(4, 5)"}))
      << kAttentionShapeChecks;
}

// ------------------------------------------------------------ loop vs batched

TEST(AttentionBatched, MatchesAttentionLoopOnRandomInputs) {
  const Tensor3 q = testing::RandomTensor3(4, 6, 5, /*seed=*/51);  // (H=4, T=6, d_head=5)
  const Tensor3 k = testing::RandomTensor3(4, 7, 5, /*seed=*/52);  // (H=4, S=7, d_head=5)
  const Tensor3 v = testing::RandomTensor3(4, 7, 5, /*seed=*/53);
  const AttentionResult loop = attention_loop(q, k, v);
  const AttentionResult batched = attention_batched(q, k, v);
  EXPECT_TRUE(AllClose(batched.weights, loop.weights, kAttention, kWeightAxes));
  EXPECT_TRUE(AllClose(batched.output, loop.output, kAttention, kOutputAxes));
}

TEST(AttentionBatched, MatchesAttentionLoopWithAMask) {
  const Tensor3 q = testing::RandomTensor3(4, 6, 5, /*seed=*/54);
  const Tensor3 k = testing::RandomTensor3(4, 7, 5, /*seed=*/55);
  const Tensor3 v = testing::RandomTensor3(4, 7, 5, /*seed=*/56);
  Tensor2 mask = xt::zeros<float>({6, 7});  // query i sees keys j <= i + 1
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t j = i + 2; j < 7; ++j) mask(i, j) = -kInf;
  const AttentionResult loop = attention_loop(q, k, v, mask);
  const AttentionResult batched = attention_batched(q, k, v, mask);
  EXPECT_TRUE(AllClose(batched.weights, loop.weights, kAttention, kWeightAxes));
  EXPECT_TRUE(AllClose(batched.output, loop.output, kAttention, kOutputAxes));
}

// Last, so that a known mistake is named by the golden tests above first:
// sizes, inputs and a mask no committed file can predict (some keys hidden,
// sometimes a whole query row), both versions against plain loops in double
// (tests/common/naive.h). Replay a failure with MHA_TEST_SEED=<the printed seed>.
TEST(FreshRandomInputs, BothVersionsMatchPlainLoops) {
  const auto seed = testing::FreshSeed();
  SCOPED_TRACE("MHA_TEST_SEED=" + std::to_string(seed));
  std::mt19937_64 gen(seed);
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
