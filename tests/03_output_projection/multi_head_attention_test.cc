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
#include "common/testing/testing.h"
#include "labs/03_output_projection/multi_head_attention_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::KnownMistake;
using testing::kAttendMistakes;
using testing::kForwardMistakes;
using testing::kMultiHeadAttentionMistakes;
using testing::LoadGolden;
using testing::MatchesGolden;
using testing::StackedWeights;
using testing::ThrowsInvalidArgument;
using testing::kExact;
using testing::kLayer;

constexpr int kDModel = 12;
constexpr int kHeads = 3;
constexpr std::uint64_t kSeed = 7;

const std::string kGolden = "tests/03_output_projection/golden/";

std::string Golden(const std::string& name) { return kGolden + name + ".npy"; }


// The known mistakes `names` of golden `golden` (multi_head_attention_test_util.h).
std::vector<KnownMistake> Mistakes(const std::string& golden,
                                   const std::vector<std::string>& names) {
  return kMultiHeadAttentionMistakes.Of(kGolden + golden, names);
}

// The mistakes these tests name on their own: by another case's golden (what
// the layer computes when it ignores n_heads or caches its weights), a count
// or an exception; as data for the grader (common/testing/misconception.h).
const testing::MistakeTable kOwnMistakes(
    "docs/03_output_projection.md",
    {
        {"n_heads_ignored", "n_heads was ignored: the layer used 3 heads"},
        {"w_o_cached",
         "overwriting W_O had no effect: something derived from the weights was cached"},
        {"parameter_count", "four (d_model, d_model) matrices, W_O included"},
        {"parameter_count_heads", "the head count must not matter"},
        {"indivisible_accepted",
         "the constructor must refuse sizes it cannot split into equal heads"},
        {"w_q_cached",
         "overwriting W_Q had no effect: something derived from the weights (a fused W_QKV?) "
         "was cached"},
    });

// Mistake `name` of kOwnMistakes, recognised by the golden `golden`.
KnownMistake OtherGolden(const std::string& golden, const std::string& name) {
  return {Golden(golden), kOwnMistakes.Message(name), kOwnMistakes.Mistake(name)};
}

// ---------------------------------------------------------------- weights

TEST(MultiHeadAttentionWeights, SeededDrawsEqualNumpysWQWKWVWOInThatOrder) {
  MultiHeadAttention layer(kDModel, kHeads, kSeed);
  EXPECT_TRUE(MatchesGolden(StackedWeights(layer), Golden("weights_seed7_d12"), kExact,
                            {"matrix (0=W_Q 1=W_K 2=W_V 3=W_O)", "row", "column"},
                            Mistakes("weights_seed7_d12", {"w_o_drawn_first", "k_drawn_before_q"})));
}

TEST(MultiHeadAttentionWeights, DefaultSeedIsZero) {
  MultiHeadAttention layer(6, 2);
  EXPECT_TRUE(MatchesGolden(StackedWeights(layer), Golden("weights_seed0_d6"), kExact,
                            {"matrix (0=W_Q 1=W_K 2=W_V 3=W_O)", "row", "column"}));
}

// ---------------------------------------------------------------- forward

TEST(MultiHeadAttentionForward, MatchesTorchMultiheadAttentionWithoutMask) {
  MultiHeadAttention layer(kDModel, kHeads, kSeed);
  const Tensor2 x = LoadGolden<2>(Golden("x"));  // (T, d_model)
  EXPECT_TRUE(MatchesGolden(layer.forward(x), Golden("plain_forward"), kLayer,
                            {"token", "column"}, Mistakes("plain_forward", kForwardMistakes)));
}

TEST(MultiHeadAttentionForward, MatchesTorchWithACausalMask) {
  MultiHeadAttention layer(kDModel, kHeads, kSeed);
  const Tensor2 x = LoadGolden<2>(Golden("x"));              // (T, d_model)
  const Tensor2 mask = LoadGolden<2>(Golden("mask_causal"));  // (T, T)
  EXPECT_TRUE(MatchesGolden(layer.forward(x, mask), Golden("causal_forward"), kLayer,
                            {"token", "column"}, Mistakes("causal_forward", kForwardMistakes)));
}

TEST(MultiHeadAttentionForward, QueryThatSeesNoKeyGivesAZeroRowNotNaN) {
  MultiHeadAttention layer(kDModel, kHeads, kSeed);
  const Tensor2 x = LoadGolden<2>(Golden("x"));                 // (T, d_model)
  const Tensor2 mask = LoadGolden<2>(Golden("mask_empty_row"));  // (T, T), row 0 all -inf
  EXPECT_TRUE(MatchesGolden(layer.forward(x, mask), Golden("empty_row_forward"), kLayer,
                            {"token", "column"},
                            Mistakes("empty_row_forward", kForwardMistakes)));
}

TEST(MultiHeadAttentionForward, LogitsInTheHundredsStayFiniteAndMatchTorch) {
  MultiHeadAttention layer(kDModel, kHeads, kSeed);
  const Tensor2 x = LoadGolden<2>(Golden("x_large"));  // (T, d_model), logits up to ~760
  const Tensor2 y = layer.forward(x);                   // (T, d_model)
  EXPECT_TRUE(xt::all(xt::isfinite(y))) << "forward produced inf or NaN: the softmax must "
                                           "subtract each row's max before exp";
  EXPECT_TRUE(MatchesGolden(y, Golden("large_forward"), kLayer, {"token", "column"},
                            Mistakes("large_forward", kForwardMistakes)));
}

TEST(MultiHeadAttentionForward, OneHeadIsPlainAttentionFollowedByWO) {
  MultiHeadAttention layer(kDModel, 1, kSeed);  // same seed: same four matrices
  const Tensor2 x = LoadGolden<2>(Golden("x"));
  EXPECT_TRUE(MatchesGolden(layer.forward(x), Golden("single_head_forward"), kLayer,
                            {"token", "column"},
                            {OtherGolden("plain_forward", "n_heads_ignored")}));
}

// ---------------------------------------------------------------- attend

TEST(MultiHeadAttentionAttend, WeightsMatchTorchInEveryHead) {
  MultiHeadAttention layer(kDModel, kHeads, kSeed);
  const Tensor2 x = LoadGolden<2>(Golden("x"));
  EXPECT_TRUE(MatchesGolden(layer.attend(x).weights, Golden("attend_weights"), kLayer,
                            {"head", "query", "key"},
                            Mistakes("attend_weights", kAttendMistakes)));
}

TEST(MultiHeadAttentionAttend, OutputIsThePerHeadResultBeforeCombineAndWO) {
  MultiHeadAttention layer(kDModel, kHeads, kSeed);
  const Tensor2 x = LoadGolden<2>(Golden("x"));
  EXPECT_TRUE(MatchesGolden(layer.attend(x).output, Golden("attend_output"), kLayer,
                            {"head", "token", "column"},
                            Mistakes("attend_output", kAttendMistakes)));
}

TEST(MultiHeadAttentionAttend, QueryThatSeesNoKeyHasAllZeroWeightsInEveryHead) {
  MultiHeadAttention layer(kDModel, kHeads, kSeed);
  const Tensor2 x = LoadGolden<2>(Golden("x"));
  const Tensor2 mask = LoadGolden<2>(Golden("mask_empty_row"));  // (T, T), row 0 all -inf
  EXPECT_TRUE(MatchesGolden(layer.attend(x, mask).weights, Golden("attend_empty_row_weights"),
                            kLayer, {"head", "query", "key"},
                            Mistakes("attend_empty_row_weights", kAttendMistakes)));
}

// ---------------------------------------------------------------- overwritten weights

TEST(MultiHeadAttentionOverwrittenWeights, WOIsUsedByTheNextForward) {
  MultiHeadAttention layer(kDModel, kHeads, kSeed);
  const Tensor2 x = LoadGolden<2>(Golden("x"));  // (T, d_model)
  layer.forward(x);  // a first call, so caching on first use is caught too
  layer.W_O = LoadGolden<2>(Golden("new_w_o"));
  EXPECT_TRUE(MatchesGolden(
      layer.forward(x), Golden("overwrite_w_o_forward"), kLayer, {"token", "column"},
      {OtherGolden("plain_forward", "w_o_cached")}));
}

TEST(MultiHeadAttentionOverwrittenWeights, WQIsUsedByTheNextForward) {
  MultiHeadAttention layer(kDModel, kHeads, kSeed);
  const Tensor2 x = LoadGolden<2>(Golden("x"));  // (T, d_model)
  layer.forward(x);
  layer.W_Q = LoadGolden<2>(Golden("new_w_q"));
  EXPECT_TRUE(MatchesGolden(
      layer.forward(x), Golden("overwrite_w_q_forward"), kLayer, {"token", "column"},
      {OtherGolden("plain_forward", "w_q_cached")}));
}

// ---------------------------------------------------------------- parameter_count

TEST(MultiHeadAttentionParameterCount, IsFourTimesDModelSquared) {
  for (const auto& [d_model, n_heads] :
       std::vector<std::pair<int, int>>{{12, 3}, {8, 2}, {6, 6}, {64, 8}, {5, 1}}) {
    const std::size_t d = static_cast<std::size_t>(d_model);
    EXPECT_EQ(MultiHeadAttention(d_model, n_heads).parameter_count(), 4 * d * d)
        << "d_model=" << d_model << ", n_heads=" << n_heads
        << ": " << kOwnMistakes.Named("parameter_count");
  }
}

TEST(MultiHeadAttentionParameterCount, DoesNotDependOnTheNumberOfHeads) {
  for (int n_heads : {1, 2, 3, 4, 6, 12}) {
    EXPECT_EQ(MultiHeadAttention(12, n_heads).parameter_count(), 576u)
        << "d_model=12, n_heads=" << n_heads << ": "
        << kOwnMistakes.Named("parameter_count_heads");
  }
}

// ---------------------------------------------------------------- bad arguments

TEST(MultiHeadAttentionArguments, RejectsDModelNotDivisibleByNHeads) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { MultiHeadAttention(10, 4); },
                                    {"d_model=10", "n_heads=4"}))
      << kOwnMistakes.Named("indivisible_accepted");
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
// loops in double on the layer's own weights (tests/common/naive.h). Replay a
// failure with MHA_TEST_SEED=<the printed seed>.
TEST(FreshRandomInputs, ForwardAndAttendMatchPlainLoops) {
  const auto seed = testing::FreshSeed();
  SCOPED_TRACE("MHA_TEST_SEED=" + std::to_string(seed));
  std::mt19937_64 gen(seed);
  const int n_heads = 1 + static_cast<int>(gen() % 4);
  const int d_model = n_heads * (1 + static_cast<int>(gen() % 6));
  const std::size_t T = 1 + gen() % 7;
  SCOPED_TRACE("d_model=" + std::to_string(d_model) + " n_heads=" + std::to_string(n_heads) +
               " T=" + std::to_string(T));
  const MultiHeadAttention layer(d_model, n_heads, gen());
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
