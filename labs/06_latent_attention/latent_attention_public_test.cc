// Public tests for lab 6. Run: bazel test //labs/06_latent_attention/...
//
// The reference numbers in labs/06_latent_attention/golden/ come from NumPy's
// default_rng (the seeded weights) and torch.nn.MultiheadAttention fed the
// latent c as its keys and values (the layer). Next to each one lies what a
// classic mistake computes on the same input, so a failure can say "looks
// like <the mistake>" (docs/06_latent_attention.md, "Classic mistakes"). The
// layer keeps every size different: d_model = 18, 3 heads of d_head = 6,
// kv_rank = 4. The grading tests check the same things on other layers, and more.
#include "labs/06_latent_attention/latent_attention.h"

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/testing/testing.h"
#include "labs/06_latent_attention/latent_attention_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::kLatentCheckMistakes;
using testing::kLayer;
using testing::LatentCase;

const std::string kGolden = "labs/06_latent_attention/golden/";
const std::vector<std::string> kAxes = {"token", "feature"};

constexpr int kDModel = 18, kHeads = 3, kRank = 4;
constexpr std::uint64_t kSeed = 7;

// The golden cases of these tests, both of one layer (d_head 6): case1 has no
// mask, case2's mask hides every key from query 0. The grading tests run the
// same cases (labs/06_latent_attention/latent_attention_test_util.h) on cases
// of their own.
const LatentCase kCase1{kGolden, "case1", kDModel, kHeads, kRank, kSeed, /*masked=*/false};
const LatentCase kCase2{kGolden, "case2", kDModel, kHeads, kRank, kSeed, /*masked=*/true};

MultiHeadLatentAttention Layer() { return kCase1.Layer(); }

TEST(LatentAttentionPublic, SeededWeightsEqualNumpysDrawInTheDocumentedOrder) {
  testing::ExpectSeededWeightsMatchGolden(Layer(), kGolden + "seed7_");
}

TEST(LatentAttentionPublic, CompressIsXTimesWDkv) {
  // case1_x: (T=6, d_model=18).
  testing::ExpectCompressMatchesGolden(kCase1);
}

TEST(LatentAttentionPublic, ForwardMatchesTorch) { testing::ExpectForwardMatchesTorch(kCase1); }

TEST(LatentAttentionPublic, AbsorbedMatchesTorch) { testing::ExpectAbsorbedMatchesTorch(kCase1); }

// Right after the first calls above: anything kept from them still holds the
// old W_UK here.
TEST(LatentAttentionPublic, AnOverwrittenWUkIsUsedByBothForwards) {
  testing::ExpectOverwrittenWUkIsUsedByBothForwards(kCase1);
}

TEST(LatentAttentionPublic, ForwardMatchesTorchWithAMaskThatHidesEveryKeyFromQueryZero) {
  testing::ExpectForwardMatchesTorch(kCase2);
}

TEST(LatentAttentionPublic, AbsorbedMatchesTorchWithAMaskThatHidesEveryKeyFromQueryZero) {
  testing::ExpectAbsorbedMatchesTorch(kCase2);
}

TEST(LatentAttentionPublic, AbsorbedGivesTheSameNumbersAsNaive) {
  ASSERT_TRUE(testing::ForwardGivesTheGolden(kCase1))
      << "precondition: forward must give the golden case before forward_absorbed is compared "
         "with it";
  const MultiHeadLatentAttention mla = Layer();
  const Tensor2 x = testing::RandomTensor2(5, kDModel, /*seed=*/4, /*scale=*/2.0f);
  EXPECT_TRUE(AllClose(mla.forward_absorbed(x), mla.forward(x), kLayer, kAxes));
}

TEST(LatentAttentionPublic, CacheHoldsKvRankFloatsPerToken) {
  const MultiHeadLatentAttention mla = Layer();
  EXPECT_EQ(mla.compress(testing::RandomTensor2(7, kDModel, /*seed=*/1)).shape(1), 4u);
  EXPECT_EQ(mla.kv_cache_floats_per_token(), 4u)
      << kLatentCheckMistakes.Named("cache_not_c_only");
}

TEST(LatentAttentionPublic, ParameterCountIsTwoDSquaredPlusThreeDTimesRank) {
  EXPECT_EQ(Layer().parameter_count(), 2u * 18 * 18 + 3u * 18 * 4)
      << kLatentCheckMistakes.Named("parameter_count");
}

TEST(LatentAttentionPublic, RejectsDModelNotDivisibleByHeads) {
  testing::ExpectRejectsDModelNotDivisibleByHeads();
}

}  // namespace
}  // namespace mha
