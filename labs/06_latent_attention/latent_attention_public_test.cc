// Public tests for lab 6. Run: bazel test //labs/06_latent_attention/...
// The grading tests check more than these; passing here is a good start.
#include "labs/06_latent_attention/latent_attention.h"

#include <gtest/gtest.h>

#include "common/testing.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::kLayer;

TEST(LatentAttentionPublic, CompressKeepsKvRankFloatsPerToken) {
  const MultiHeadLatentAttention mla(/*d_model=*/24, /*n_heads=*/4, /*kv_rank=*/10);
  const Tensor2 c = mla.compress(testing::RandomTensor2(7, 24, /*seed=*/1));
  EXPECT_EQ(c.shape(0), 7u);
  EXPECT_EQ(c.shape(1), 10u);
  EXPECT_EQ(mla.kv_cache_floats_per_token(), 10u);
}

TEST(LatentAttentionPublic, ForwardKeepsTheShapeOfX) {
  const MultiHeadLatentAttention mla(24, 4, 10);
  const Tensor2 y = mla.forward(testing::RandomTensor2(7, 24, /*seed=*/2));
  EXPECT_EQ(y.shape(0), 7u);
  EXPECT_EQ(y.shape(1), 24u);
}

TEST(LatentAttentionPublic, AbsorbedGivesTheSameNumbersAsNaive) {
  // d_model=24, d_head=6, kv_rank=10: three different sizes.
  const MultiHeadLatentAttention mla(24, 4, 10, /*seed=*/3);
  const Tensor2 x = testing::RandomTensor2(7, 24, /*seed=*/4);
  EXPECT_TRUE(AllClose(mla.forward_absorbed(x), mla.forward(x), kLayer, {"token", "feature"}));
}

TEST(LatentAttentionPublic, ParameterCountIsTwoDSquaredPlusThreeDTimesRank) {
  EXPECT_EQ(MultiHeadLatentAttention(24, 4, 10).parameter_count(), 2u * 24 * 24 + 3u * 24 * 10);
}

}  // namespace
}  // namespace mha
