// Hidden tests for lab 3: MultiHeadAttention, the full layer with W_O.
//
// Layer under test unless said otherwise: d_model=12, n_heads=3 (d_head=4),
// seed 7, on T=5 tokens, so d_head != n_heads and T != d_head. Expected
// numbers come from NumPy's default_rng and torch.nn.MultiheadAttention
// (tests/03_output_projection/gen_goldens.py); the *_mistake_* goldens hold
// what a classic mistake computes, so a failure can name it. The public tests
// (labs/03_output_projection) check the same mistakes on another layer; the
// last test here draws a fresh random layer and input on every run
// (testing::FreshSeed) and compares with plain loops in double.
#include "labs/03_output_projection/multi_head_attention.h"

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>

#include "tests/common/naive.h"
#include "tests/common/seeded_weights.h"
#include "common/testing/testing.h"
#include "labs/03_output_projection/multi_head_attention_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::kExact;
using testing::kLayer;
using testing::kLayerCheckMistakes;
using testing::kStackedWeightAxes;
using testing::LayerGoldens;
using testing::LoadGolden;
using testing::MatchesGolden;
using testing::StackedWeights;
using testing::ThrowsInvalidArgument;

constexpr int kDModel = 12;
constexpr int kHeads = 3;
constexpr std::uint64_t kSeed = 7;

// The golden set of the grading tests (d_model=12, n_heads=3, seed 7): the
// public tests' cases (labs/03_output_projection/multi_head_attention_test_util.h)
// run on it, and the cases below are the grading tests' own.
const LayerGoldens kGoldens = {"tests/03_output_projection/golden/", kDModel, kHeads, kSeed};

std::string Golden(const std::string& name) { return kGoldens.File(name); }

// ---------------------------------------------------------------- weights

TEST(MultiHeadAttentionWeights, SeededDrawsEqualNumpysWQWKWVWOInThatOrder) {
  testing::ExpectSeededWeightsMatchGolden(kGoldens, "weights_seed7_d12");
}

TEST(MultiHeadAttentionWeights, DefaultSeedIsZero) {
  MultiHeadAttention layer(6, 2);
  EXPECT_TRUE(
      MatchesGolden(StackedWeights(layer), Golden("weights_seed0_d6"), kExact, kStackedWeightAxes));
}

// ---------------------------------------------------------------- forward

TEST(MultiHeadAttentionForward, MatchesTorchMultiheadAttentionWithoutMask) {
  testing::ExpectForwardMatchesGolden(kGoldens, "x", "", "plain_forward");
}

TEST(MultiHeadAttentionForward, MatchesTorchWithACausalMask) {
  testing::ExpectForwardMatchesGolden(kGoldens, "x", "mask_causal", "causal_forward");
}

TEST(MultiHeadAttentionForward, QueryThatSeesNoKeyGivesAZeroRowNotNaN) {
  // mask_empty_row: (T, T), row 0 all -inf.
  testing::ExpectForwardMatchesGolden(kGoldens, "x", "mask_empty_row", "empty_row_forward");
}

TEST(MultiHeadAttentionForward, LogitsInTheHundredsStayFiniteAndMatchTorch) {
  // Logits up to ~760.
  testing::ExpectLargeLogitsStayFiniteAndMatchGolden(kGoldens);
}

TEST(MultiHeadAttentionForward, OneHeadIsPlainAttentionFollowedByWO) {
  MultiHeadAttention layer(kDModel, 1, kSeed);  // same seed: same four matrices
  const Tensor2 x = LoadGolden<2>(Golden("x"));
  EXPECT_TRUE(MatchesGolden(layer.forward(x), Golden("single_head_forward"), kLayer,
                            {"token", "column"},
                            {kGoldens.OtherGolden("plain_forward", "n_heads_ignored")}));
}

// ---------------------------------------------------------------- attend

TEST(MultiHeadAttentionAttend, WeightsMatchTorchInEveryHead) {
  testing::ExpectAttendMatchesGolden(kGoldens, "", "attend_weights");
}

TEST(MultiHeadAttentionAttend, OutputIsThePerHeadResultBeforeCombineAndWO) {
  testing::ExpectAttendMatchesGolden(kGoldens, "", "attend_output", /*output=*/true);
}

TEST(MultiHeadAttentionAttend, QueryThatSeesNoKeyHasAllZeroWeightsInEveryHead) {
  // mask_empty_row: (T, T), row 0 all -inf.
  testing::ExpectAttendMatchesGolden(kGoldens, "mask_empty_row", "attend_empty_row_weights");
}

// ---------------------------------------------------------------- overwritten weights

TEST(MultiHeadAttentionOverwrittenWeights, WOIsUsedByTheNextForward) {
  testing::ExpectOverwrittenWeightIsUsedByTheNextForward(kGoldens, &MultiHeadAttention::W_O,
                                                         "w_o");
}

TEST(MultiHeadAttentionOverwrittenWeights, WQIsUsedByTheNextForward) {
  testing::ExpectOverwrittenWeightIsUsedByTheNextForward(kGoldens, &MultiHeadAttention::W_Q,
                                                         "w_q");
}

// ---------------------------------------------------------------- parameter_count

TEST(MultiHeadAttentionParameterCount, IsFourTimesDModelSquared) {
  for (const auto& [d_model, n_heads] :
       std::vector<std::pair<int, int>>{{12, 3}, {8, 2}, {6, 6}, {64, 8}, {5, 1}}) {
    const std::size_t d = static_cast<std::size_t>(d_model);
    EXPECT_EQ(MultiHeadAttention(d_model, n_heads).parameter_count(), 4 * d * d)
        << "d_model=" << d_model << ", n_heads=" << n_heads
        << ": " << kLayerCheckMistakes.Named("parameter_count");
  }
}

TEST(MultiHeadAttentionParameterCount, DoesNotDependOnTheNumberOfHeads) {
  for (int n_heads : {1, 2, 3, 4, 6, 12}) {
    EXPECT_EQ(MultiHeadAttention(12, n_heads).parameter_count(), 576u)
        << "d_model=12, n_heads=" << n_heads << ": "
        << kLayerCheckMistakes.Named("parameter_count_heads");
  }
}

// ---------------------------------------------------------------- bad arguments

TEST(MultiHeadAttentionArguments, RejectsDModelNotDivisibleByNHeads) {
  testing::ExpectRejectsDModelNotDivisibleByNHeads();
}

TEST(MultiHeadAttentionArguments, RejectsNonPositiveNHeads) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { MultiHeadAttention(12, 0); }, {"n_heads=0"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { MultiHeadAttention(12, -3); }, {"n_heads=-3"}));
}

TEST(MultiHeadAttentionArguments, RejectsNonPositiveDModel) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { MultiHeadAttention(0, 1); }, {"d_model=0"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { MultiHeadAttention(-12, 3); }, {"d_model=-12"}));
}

TEST(MultiHeadAttentionArguments, RejectsAnInputWhoseWidthIsNotDModel) {
  EXPECT_TRUE(ThrowsInvalidArgument(
      [] {
        MultiHeadAttention layer(kDModel, kHeads, kSeed);
        layer.forward(xt::zeros<float>({5, 10}));
      },
      {"10", "12"}));
  EXPECT_TRUE(ThrowsInvalidArgument(
      [] {
        MultiHeadAttention layer(kDModel, kHeads, kSeed);
        layer.attend(xt::zeros<float>({5, 10}));
      },
      {"10", "12"}));
}

TEST(MultiHeadAttentionArguments, RejectsAMaskThatIsNotTByT) {
  EXPECT_TRUE(ThrowsInvalidArgument(
      [] {
        MultiHeadAttention layer(kDModel, kHeads, kSeed);
        const Tensor2 x = LoadGolden<2>(Golden("x"));  // T = 5
        layer.forward(x, Tensor2(xt::zeros<float>({5, 4})));
      },
      {"(5, 4)"}));
}

// Last, so that a known mistake is named by the golden tests above first: a
// layer, input and causal mask no committed file can predict, against plain
// loops in double on the layer's weights (tests/common/naive.h), which the
// test installs itself (tests/common/seeded_weights.h). Replay a failure with
// MHA_TEST_SEED=<the printed seed>.
TEST(FreshRandomInputs, ForwardAndAttendMatchPlainLoops) {
  testing::FreshDraws gen;
  const int n_heads = 1 + static_cast<int>(gen() % 4);
  const int d_model = n_heads * (1 + static_cast<int>(gen() % 6));
  const std::size_t T = 1 + gen() % 7;
  SCOPED_TRACE("d_model=" + std::to_string(d_model) + " n_heads=" + std::to_string(n_heads) +
               " T=" + std::to_string(T));
  const std::uint64_t seed = gen();
  MultiHeadAttention layer(d_model, n_heads, seed);
  seeded::InstallMha(layer, d_model, n_heads, seed);  // not the constructor's choice
  const Tensor2 x = testing::RandomTensor2(T, static_cast<std::size_t>(d_model),
                                           static_cast<std::uint32_t>(gen()), /*scale=*/2.0f);
  const Tensor2 mask = naive::CausalMask(static_cast<int>(T), static_cast<int>(T));
  EXPECT_TRUE(AllClose(layer.forward(x, mask),
                       naive::MultiHeadForward(x, layer.W_Q, layer.W_K, layer.W_V, layer.W_O,
                                               n_heads, mask),
                       kLayer, {"token", "column"}))
      << "forward";
  const naive::Attention expected = naive::ScaledDotProduct(
      naive::SplitHeads(naive::MatMul(x, layer.W_Q), n_heads),
      naive::SplitHeads(naive::MatMul(x, layer.W_K), n_heads),
      naive::SplitHeads(naive::MatMul(x, layer.W_V), n_heads), mask);
  EXPECT_TRUE(AllClose(layer.attend(x, mask).weights, expected.weights, kLayer,
                       {"head", "query", "key"}))
      << "attend";
}

}  // namespace
}  // namespace mha
