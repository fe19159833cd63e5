// Public tests for lab 14. Run: bazel test //labs/14_transformer_block/...
//
// Each test compares your numbers with PyTorch's (torch.nn.LayerNorm,
// torch.nn.functional.gelu, autograd for every gradient), computed in float64
// on the inputs in golden/ (by a golden generator in the instructors'
// repository). When a number matches what a classic mistake computes instead,
// the failure names it ("looks like ...; see docs/14_transformer_block.md").
#include <gtest/gtest.h>

#include <xtensor/xbuilder.hpp>

#include "common/testing/testing.h"
#include "labs/14_transformer_block/transformer_block.h"
#include "labs/14_transformer_block/transformer_block_test_util.h"

namespace mha {
namespace {

const std::string kGolden = "labs/14_transformer_block/golden/";
// d_model 16, 2 heads of d_head 8, d_ff 32, seed 1407, T = 6.
const testing::BlockCase kBlockCase{kGolden, "block", 16, 2, 32, 1407, 10000.0};

TEST(LayerNormPublic, MatchesTorchForwardAndBackward) {
  testing::ExpectLayerNormMatchesTorch(kGolden, "ln");
}

TEST(LayerNormPublic, HoldsItsDigitsOnRowsOffsetByAThousand) {
  testing::ExpectLayerNormHoldsItsDigitsOnOffsetRows(kGolden, "ln_offset", 1000.0f);
}

TEST(GeluPublic, MatchesTorchExactGeluAndItsGradient) {
  testing::ExpectGeluMatchesTorch(kGolden, "gelu");
}

TEST(FeedForwardPublic, DrawsItsWeightsAndMatchesTorchForwardAndBackward) {
  testing::ExpectFeedForwardMatchesTorch(kGolden, "ffn", 8, 16, 1404);
}

TEST(RopeBackwardPublic, MatchesTorchAutogradThroughTheRotation) {
  testing::ExpectRopeBackwardMatchesTorch(kGolden, "rope", /*start=*/3, /*base=*/10000.0);
}

TEST(RotaryAttentionBackwardPublic, MatchesTorchAutograd) {
  testing::ExpectRotaryBackwardMatchesTorch(kGolden, "attn", 16, 2, 10000.0);
}

TEST(TransformerBlockPublic, DrawsAttentionFromSeedAndTheFfnFromSeedPlusOne) {
  testing::ExpectBlockDrawsItsWeights(kBlockCase);
}

TEST(TransformerBlockPublic, ForwardMatchesTorch) {
  testing::ExpectBlockForwardMatchesTorch(kBlockCase);
}

TEST(TransformerBlockPublic, BackwardMatchesTorchAutograd) {
  testing::ExpectBlockBackwardMatchesTorch(kBlockCase);
}

TEST(TransformerBlockPublic, CountsTheSeedCoursesBlockAs49728Parameters) {
  // 4 * 64^2 + 2 * 64 * 256 + 256 + 64 + 4 * 64 = 16,384 + 32,768 + 320 + 256.
  EXPECT_EQ(TransformerBlock(64, 4, 256).parameter_count(), 49728u);
  EXPECT_EQ(FeedForward(64, 256).parameter_count(), 33088u);
}

TEST(TransformerBlockPublic, IsTheIdentityWithWOAndTheFfnOutputZeroed) {
  TransformerBlock block = testing::CaseBlock(kBlockCase);
  const Tensor2 x = testing::Golden<2>(kGolden, "block", "x");
  // x passed back is the identity everywhere: the block as loaded must add something.
  ASSERT_TRUE(testing::MatchesCase(block.forward(x), kGolden, "block", "y", testing::kBlock,
                                   testing::kTokenFeature))
      << "precondition: before anything is zeroed, the block's forward must be torch's";
  block.attn.W_O = xt::zeros<float>({16, 16});
  block.ffn.W_2 = xt::zeros<float>({32, 16});
  block.ffn.b_2 = xt::zeros<float>({16});
  EXPECT_TRUE(testing::AllClose(block.forward(x), x, testing::kExact))
      << "each sub-layer only adds to the stream: with nothing to add, y = x";
}

TEST(LayerNormPublic, RejectsAGammaOfTheWrongSizeNamingBothSizes) {
  const Tensor2 x = xt::ones<float>({2, 4});
  EXPECT_TRUE(testing::ThrowsInvalidArgument(
      [&] { layer_norm(x, xt::ones<float>({3}), xt::zeros<float>({4})); }, {"3", "4"}));
  EXPECT_TRUE(testing::ThrowsInvalidArgument(
      [&] { layer_norm(x, xt::ones<float>({4}), xt::zeros<float>({4}), 0.0f); }, {"eps"}));
}

TEST(TransformerBlockPublic, RejectsAnInputOfTheWrongWidthNamingIt) {
  const TransformerBlock block(8, 2, 16);
  EXPECT_TRUE(testing::ThrowsInvalidArgument(
      [&] {
        block.forward(xt::ones<float>({3, 6}));
      },
      {"(3, 6)", "8"}));
}

}  // namespace
}  // namespace mha
