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
using testing::kLayer;
using testing::LayerGoldens;

// The golden set of these tests: its folder and the layer of its goldens,
// d_model=10, n_heads=2, seed 5. The grading tests run the same cases
// (labs/03_output_projection/multi_head_attention_test_util.h) on a set of
// their own.
const LayerGoldens kGoldens = {"labs/03_output_projection/golden/", /*d_model=*/10,
                               /*n_heads=*/2, /*seed=*/5};

const char kSeeDoc[] = "; see docs/03_output_projection.md, \"Classic mistakes\"";

TEST(MultiHeadAttentionPublic, SeededWeightsEqualNumpysWQWKWVWOInThatOrder) {
  testing::ExpectSeededWeightsMatchGolden(kGoldens, "weights_seed5_d10");
}

TEST(MultiHeadAttentionPublic, ForwardMatchesTorchWithoutMask) {
  // x: (T=4, d_model=10).
  testing::ExpectForwardMatchesGolden(kGoldens, "x", "", "plain_forward");
}

TEST(MultiHeadAttentionPublic, ForwardMatchesTorchWithACausalMask) {
  testing::ExpectForwardMatchesGolden(kGoldens, "x", "mask_causal", "causal_forward");
}

TEST(MultiHeadAttentionPublic, LogitsInTheHundredsStayFiniteAndMatchTorch) {
  // Logits up to ~790.
  testing::ExpectLargeLogitsStayFiniteAndMatchGolden(kGoldens);
}

TEST(MultiHeadAttentionPublic, AttendWeightsMatchTorchInEveryHead) {
  testing::ExpectAttendMatchesGolden(kGoldens, "mask_causal", "attend_causal_weights");
}

TEST(MultiHeadAttentionPublic, ForwardMapsTByDModelToTByDModel) {
  MultiHeadAttention layer(/*d_model=*/8, /*n_heads=*/2, /*seed=*/0);
  Tensor2 x = testing::RandomTensor2(3, 8, /*seed=*/1);  // (T=3, d_model=8)
  Tensor2 y = layer.forward(x);
  ASSERT_EQ(y.shape(0), 3u);
  ASSERT_EQ(y.shape(1), 8u);
  // A new vector per token: not x passed back, not one row for every token.
  EXPECT_FALSE(AllClose(y, x, kLayer)) << "forward returned x itself";
  EXPECT_FALSE(AllClose(xt::view(y, 0, xt::all()), xt::view(y, 1, xt::all()), kLayer))
      << "tokens 0 and 1 got the same output row";
}

TEST(MultiHeadAttentionPublic, IdentityWOLeavesTheConcatenatedHeads) {
  // With W_O = I the last step does nothing, so forward must equal the heads
  // from attend() put side by side again.
  // Two answers that compute nothing agree too: the forward must first be torch's.
  ASSERT_TRUE(testing::MatchesGolden(kGoldens.Layer().forward(testing::LoadGolden<2>(
                                         kGoldens.File("x"))),
                                     kGoldens.File("plain_forward"), kLayer, {"token", "column"}))
      << "precondition: forward must give the golden plain forward";
  MultiHeadAttention layer(8, 2, 0);
  layer.W_O = xt::eye<float>(8);
  Tensor2 x = testing::RandomTensor2(3, 8, /*seed=*/2);
  Tensor2 concat = combine_heads(layer.attend(x).output);  // (T, d_model)
  EXPECT_TRUE(AllClose(layer.forward(x), concat, kLayer, {"token", "column"}));
}

TEST(MultiHeadAttentionPublic, AnOverwrittenWQIsUsedByTheNextForward) {
  testing::ExpectOverwrittenWeightIsUsedByTheNextForward(kGoldens, &MultiHeadAttention::W_Q,
                                                         "w_q");
}

TEST(MultiHeadAttentionPublic, ParameterCountIsFourTimesDModelSquared) {
  EXPECT_EQ(MultiHeadAttention(kGoldens.d_model, kGoldens.n_heads).parameter_count(), 400u)
      << "d_model=10: four (d_model, d_model) matrices, W_O included" << kSeeDoc;
}

TEST(MultiHeadAttentionPublic, RejectsDModelNotDivisibleByNHeads) {
  testing::ExpectRejectsDModelNotDivisibleByNHeads();
}

}  // namespace
}  // namespace mha
