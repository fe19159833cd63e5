// Public tests for lab 3. Run: bazel test //labs/03_output_projection/...
//
// The reference numbers in labs/03_output_projection/golden/ come from
// NumPy's default_rng (the seeded weights) and torch.nn.MultiheadAttention
// (the layer). Next to each one lies what a classic mistake computes on the
// same input, so a failure can say "looks like <the mistake>"
// (docs/03_output_projection.md, "Classic mistakes"). The layer has two heads
// of d_head = 5 (d_model = 10, T = 4 tokens), a random W_O, a causal mask
// and, in one case, logits in the hundreds. The grading tests check the same
// things on another layer and seed, and more.
#include "labs/03_output_projection/multi_head_attention.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>

#include "common/testing/testing.h"
#include "labs/01_split_heads/split_heads.h"
#include "labs/03_output_projection/multi_head_attention_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::KnownMistake;
using testing::kAttendMistakes;
using testing::kForwardMistakes;
using testing::kMultiHeadAttentionMistakes;
using testing::kExact;
using testing::kLayer;
using testing::LoadGolden;
using testing::MatchesGolden;
using testing::StackedWeights;
using testing::ThrowsInvalidArgument;

constexpr int kDModel = 10;
constexpr int kHeads = 2;
constexpr std::uint64_t kSeed = 5;

const std::string kGolden = "labs/03_output_projection/golden/";

std::string Golden(const std::string& name) { return kGolden + name + ".npy"; }

const char kSeeDoc[] = "; see docs/03_output_projection.md, \"Classic mistakes\"";

// The known mistakes `names` of golden `golden` (multi_head_attention_test_util.h).
std::vector<KnownMistake> Mistakes(const std::string& golden,
                                   const std::vector<std::string>& names) {
  return kMultiHeadAttentionMistakes.Of(kGolden + golden, names);
}

TEST(MultiHeadAttentionPublic, SeededWeightsEqualNumpysWQWKWVWOInThatOrder) {
  MultiHeadAttention layer(kDModel, kHeads, kSeed);
  EXPECT_TRUE(
      MatchesGolden(StackedWeights(layer), Golden("weights_seed5_d10"), kExact,
                    {"matrix (0=W_Q 1=W_K 2=W_V 3=W_O)", "row", "column"},
                    Mistakes("weights_seed5_d10", {"w_o_drawn_first", "k_drawn_before_q"})));
}

TEST(MultiHeadAttentionPublic, ForwardMatchesTorchWithoutMask) {
  MultiHeadAttention layer(kDModel, kHeads, kSeed);
  const Tensor2 x = LoadGolden<2>(Golden("x"));  // (T=4, d_model=10)
  EXPECT_TRUE(MatchesGolden(layer.forward(x), Golden("plain_forward"), kLayer,
                            {"token", "column"}, Mistakes("plain_forward", kForwardMistakes)));
}

TEST(MultiHeadAttentionPublic, ForwardMatchesTorchWithACausalMask) {
  MultiHeadAttention layer(kDModel, kHeads, kSeed);
  const Tensor2 x = LoadGolden<2>(Golden("x"));
  const Tensor2 mask = LoadGolden<2>(Golden("mask_causal"));  // (T, T)
  EXPECT_TRUE(MatchesGolden(layer.forward(x, mask), Golden("causal_forward"), kLayer,
                            {"token", "column"}, Mistakes("causal_forward", kForwardMistakes)));
}

TEST(MultiHeadAttentionPublic, LogitsInTheHundredsStayFiniteAndMatchTorch) {
  MultiHeadAttention layer(kDModel, kHeads, kSeed);
  const Tensor2 x = LoadGolden<2>(Golden("x_large"));  // (T, d_model), logits up to ~790
  const Tensor2 y = layer.forward(x);
  EXPECT_TRUE(xt::all(xt::isfinite(y))) << "forward produced inf or NaN: the softmax must "
                                           "subtract each row's max before exp";
  EXPECT_TRUE(MatchesGolden(y, Golden("large_forward"), kLayer, {"token", "column"},
                            Mistakes("large_forward", kForwardMistakes)));
}

TEST(MultiHeadAttentionPublic, AttendWeightsMatchTorchInEveryHead) {
  MultiHeadAttention layer(kDModel, kHeads, kSeed);
  const Tensor2 x = LoadGolden<2>(Golden("x"));
  const Tensor2 mask = LoadGolden<2>(Golden("mask_causal"));
  EXPECT_TRUE(MatchesGolden(layer.attend(x, mask).weights, Golden("attend_causal_weights"),
                            kLayer, {"head", "query", "key"},
                            Mistakes("attend_causal_weights", kAttendMistakes)));
}

TEST(MultiHeadAttentionPublic, ForwardMapsTByDModelToTByDModel) {
  MultiHeadAttention layer(/*d_model=*/8, /*n_heads=*/2, /*seed=*/0);
  Tensor2 x = testing::RandomTensor2(3, 8, /*seed=*/1);  // (T=3, d_model=8)
  Tensor2 y = layer.forward(x);
  EXPECT_EQ(y.shape(0), 3u);
  EXPECT_EQ(y.shape(1), 8u);
}

TEST(MultiHeadAttentionPublic, IdentityWOLeavesTheConcatenatedHeads) {
  // With W_O = I the last step does nothing, so forward must equal the heads
  // from attend() put side by side again.
  MultiHeadAttention layer(8, 2, 0);
  layer.W_O = xt::eye<float>(8);
  Tensor2 x = testing::RandomTensor2(3, 8, /*seed=*/2);
  Tensor2 concat = combine_heads(layer.attend(x).output);  // (T, d_model)
  EXPECT_TRUE(AllClose(layer.forward(x), concat, kLayer, {"token", "column"}));
}

TEST(MultiHeadAttentionPublic, AnOverwrittenWQIsUsedByTheNextForward) {
  MultiHeadAttention layer(kDModel, kHeads, kSeed);
  const Tensor2 x = LoadGolden<2>(Golden("x"));
  layer.forward(x);  // a first call, so caching on first use is caught too
  layer.W_Q = LoadGolden<2>(Golden("new_w_q"));
  EXPECT_TRUE(MatchesGolden(
      layer.forward(x), Golden("overwrite_w_q_forward"), kLayer, {"token", "column"},
      {{Golden("plain_forward"),
        std::string("overwriting W_Q had no effect: something derived from the weights (a "
                    "fused W_QKV?) was cached") + kSeeDoc}}));
}

TEST(MultiHeadAttentionPublic, ParameterCountIsFourTimesDModelSquared) {
  EXPECT_EQ(MultiHeadAttention(kDModel, kHeads).parameter_count(), 400u)
      << "d_model=10: four (d_model, d_model) matrices, W_O included" << kSeeDoc;
}

TEST(MultiHeadAttentionPublic, RejectsDModelNotDivisibleByNHeads) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { MultiHeadAttention(10, 4); },
                                    {"d_model=10", "n_heads=4"}))
      << "the constructor must refuse sizes it cannot split into equal heads" << kSeeDoc;
}

}  // namespace
}  // namespace mha
