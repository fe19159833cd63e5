// Hidden tests of lab 6: multi-head latent attention.
//
// Reference numbers come from torch.nn.MultiheadAttention fed the latent as
// its keys and values (tests/06_latent_attention/gen_goldens.py). Shapes keep
// d_model, n_heads, d_head and kv_rank all different, so a scale by the
// wrong size or a block taken along the wrong axis cannot pass by accident.
// The public tests (labs/06_latent_attention) check the same mistakes on
// another layer; the last test here draws a fresh random layer and input on
// every run (testing::FreshSeed) and compares with plain loops in double.
#include "labs/06_latent_attention/latent_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tests/common/naive.h"
#include "tests/common/seeded_weights.h"
#include "common/testing/testing.h"
#include "labs/06_latent_attention/latent_attention_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::ExpectAbsorbedMatchesTorch;
using testing::ExpectForwardMatchesTorch;
using testing::kLatentCheckMistakes;
using testing::kExact;
using testing::kLayer;
using testing::LatentCase;
using testing::LoadGolden;
using testing::MatchesGolden;
using testing::ThrowsInvalidArgument;

// The golden set of the grading tests: the public tests' cases
// (labs/06_latent_attention/latent_attention_test_util.h) run on its cases,
// and the tests below add cases of their own.
const std::string kGolden = "tests/06_latent_attention/golden/";

const LatentCase kCase1{kGolden, "case1", 24, 4, 10, 6, false};  // d_head 6, no mask
const LatentCase kCase2{kGolden, "case2", 12, 3, 5, 62, true};   // d_head 4, causal, scores ~160
const LatentCase kCase3{kGolden, "case3", 20, 2, 7, 63, true};   // d_head 10, query 0 fully masked

// ------------------------------------------------------------- the weights

TEST(LatentAttention, SeededWeightsEqualNumpysDrawInTheDocumentedOrder) {
  testing::ExpectSeededWeightsMatchGolden(MultiHeadLatentAttention(24, 4, 10, /*seed=*/6),
                                          kGolden + "seed6_");
}

// A weight-draw test (tests/rubric.json, "weight_draws"): the sizes alone are
// what any constructor that stores its arguments records.
TEST(LatentAttention, RecordsTheSizesItDrawsItsWeightsFor) {
  const MultiHeadLatentAttention mla(24, 4, 10, /*seed=*/6);
  EXPECT_EQ(mla.d_model, 24);
  EXPECT_EQ(mla.n_heads, 4);
  EXPECT_EQ(mla.kv_rank, 10);
  EXPECT_EQ(mla.d_head, 6);
  EXPECT_TRUE(MatchesGolden(mla.W_DKV, kGolden + "seed6_W_DKV.npy", kExact, {"in", "out"}))
      << "W_DKV: (d_model, kv_rank), the seeded draw";
  EXPECT_TRUE(MatchesGolden(mla.W_UK, kGolden + "seed6_W_UK.npy", kExact, {"in", "out"}))
      << "W_UK: (kv_rank, d_model), the seeded draw";
}

// ------------------------------------------------------------ the cache

TEST(LatentAttention, CompressIsXTimesWDkv) {
  for (const LatentCase& c : {kCase1, kCase2}) testing::ExpectCompressMatchesGolden(c);
}

TEST(LatentAttention, CacheHoldsKvRankFloatsPerToken) {
  const MultiHeadLatentAttention mla(24, 4, 10);
  const Tensor2 c = mla.compress(testing::RandomTensor2(7, 24, /*seed=*/1));
  EXPECT_EQ(c.shape(0), 7u) << "one latent row per token";
  EXPECT_EQ(c.shape(1), 10u) << "each row has kv_rank floats";
  EXPECT_EQ(mla.kv_cache_floats_per_token(), 10u)
      << kLatentCheckMistakes.Named("cache_not_c_only");
}

TEST(LatentAttention, CacheIsBelowAnEighthOfMultiHeadAttentions) {
  // Multi-head attention caches K and V: 2 * d_model floats per token.
  // d_model=64, 4 heads, kv_rank=12: 12 floats against 128, less than 1/8.
  const MultiHeadLatentAttention mla(64, 4, 12);
  const std::size_t mha_floats = 2 * 64;
  EXPECT_EQ(mla.kv_cache_floats_per_token(), 12u)
      << kLatentCheckMistakes.Named("cache_not_c_only");
  EXPECT_LT(8 * mla.kv_cache_floats_per_token(), mha_floats);
}

TEST(LatentAttention, ParameterCountIsTwoDSquaredPlusThreeDTimesRank) {
  EXPECT_EQ(MultiHeadLatentAttention(24, 4, 10).parameter_count(), 2u * 24 * 24 + 3u * 24 * 10)
      << kLatentCheckMistakes.Named("parameter_count");
  EXPECT_EQ(MultiHeadLatentAttention(64, 4, 12).parameter_count(), 2u * 64 * 64 + 3u * 64 * 12)
      << kLatentCheckMistakes.Named("parameter_count");
}

// ------------------------------------------------------------- the layer

TEST(LatentAttention, ForwardMatchesTorch) { ExpectForwardMatchesTorch(kCase1); }

TEST(LatentAttention, AbsorbedMatchesTorch) { ExpectAbsorbedMatchesTorch(kCase1); }

// The weights are public: the next call must use whatever is in them now.
// These run right after the first golden tests, so that a forward that keeps
// something from its first call still holds the case1 layer's W_UK here.

TEST(LatentAttention, OverwritingWUkChangesBothForwardsIdentically) {
  testing::ExpectOverwrittenWUkIsUsedByBothForwards(kCase1);
}

TEST(LatentAttention, OverwritingWDkvChangesTheCache) {
  MultiHeadLatentAttention mla(24, 4, 10, /*seed=*/6);
  const Tensor2 x = LoadGolden<2>(kGolden + "case1_x.npy");
  mla.compress(x);
  mla.W_DKV = LoadGolden<2>(kGolden + "case1_new_W_DKV.npy");
  EXPECT_TRUE(MatchesGolden(mla.compress(x), kGolden + "case1_latent_new_W_DKV.npy", kLayer,
                            {"token", "latent"}));
}

TEST(LatentAttention, ForwardMatchesTorchWithCausalMaskAndLargeScores) {
  ExpectForwardMatchesTorch(kCase2);
}

TEST(LatentAttention, AbsorbedMatchesTorchWithCausalMaskAndLargeScores) {
  ExpectAbsorbedMatchesTorch(kCase2);
}

TEST(LatentAttention, ForwardGivesAZeroRowForAQueryThatSeesNoKey) {
  ExpectForwardMatchesTorch(kCase3);
}

TEST(LatentAttention, AbsorbedGivesAZeroRowForAQueryThatSeesNoKey) {
  ExpectAbsorbedMatchesTorch(kCase3);
}

struct Shape {
  int d_model, n_heads, kv_rank;
  std::size_t T;
};
// d_head, kv_rank, d_model and T all different in every row.
const Shape kShapes[] = {{24, 4, 10, 7}, {12, 3, 5, 6}, {20, 2, 7, 9}, {32, 8, 3, 5}};

TEST(LatentAttention, AbsorbedAgreesWithNaiveWithoutMask) {
  ASSERT_TRUE(testing::ForwardGivesTheGolden(kCase1))
      << "precondition: forward must give the golden case before forward_absorbed is compared "
         "with it";
  for (const Shape& s : kShapes) {
    const MultiHeadLatentAttention mla(s.d_model, s.n_heads, s.kv_rank, /*seed=*/11);
    const Tensor2 x = testing::RandomTensor2(s.T, s.d_model, /*seed=*/12, /*scale=*/2.0f);
    EXPECT_TRUE(AllClose(mla.forward_absorbed(x), mla.forward(x), kLayer, {"token", "feature"}))
        << "d_model=" << s.d_model << " n_heads=" << s.n_heads << " kv_rank=" << s.kv_rank;
  }
}

TEST(LatentAttention, AbsorbedAgreesWithNaiveWithCausalMask) {
  ASSERT_TRUE(testing::ForwardGivesTheGolden(kCase2))
      << "precondition: forward must give the golden causal case before forward_absorbed is "
         "compared with it";
  for (const Shape& s : kShapes) {
    const MultiHeadLatentAttention mla(s.d_model, s.n_heads, s.kv_rank, /*seed=*/13);
    const Tensor2 x = testing::RandomTensor2(s.T, s.d_model, /*seed=*/14, /*scale=*/2.0f);
    const Tensor2 mask = naive::CausalMask(int(s.T), int(s.T));
    EXPECT_TRUE(
        AllClose(mla.forward_absorbed(x, mask), mla.forward(x, mask), kLayer, {"token", "feature"}))
        << "d_model=" << s.d_model << " n_heads=" << s.n_heads << " kv_rank=" << s.kv_rank;
  }
}

// ------------------------------------------------------------ bad arguments

TEST(LatentAttention, RejectsDModelNotDivisibleByHeads) {
  testing::ExpectRejectsDModelNotDivisibleByHeads();
}

TEST(LatentAttention, RejectsNonPositiveSizes) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { MultiHeadLatentAttention(12, 3, 0); }, {"kv_rank=0"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { MultiHeadLatentAttention(12, 0, 4); }, {"n_heads=0"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { MultiHeadLatentAttention(-12, 3, 4); }, {"d_model=-12"}));
}

TEST(LatentAttention, RejectsInputOfTheWrongWidth) {
  const MultiHeadLatentAttention mla(12, 3, 5);
  const Tensor2 x = xt::zeros<float>({4, 10});
  EXPECT_TRUE(ThrowsInvalidArgument([&] { mla.compress(x); }, {"(4, 10)"})) << "compress";
  EXPECT_TRUE(ThrowsInvalidArgument([&] { mla.forward(x); }, {"(4, 10)"})) << "forward";
  EXPECT_TRUE(ThrowsInvalidArgument([&] { mla.forward_absorbed(x); }, {"(4, 10)"}))
      << "forward_absorbed";
}

TEST(LatentAttention, RejectsAMaskOfTheWrongShape) {
  const MultiHeadLatentAttention mla(12, 3, 5);
  const Tensor2 x = xt::zeros<float>({4, 12});
  const Tensor2 mask = xt::zeros<float>({4, 5});
  EXPECT_TRUE(ThrowsInvalidArgument([&] { mla.forward(x, mask); }, {"(4, 5)"})) << "forward";
  EXPECT_TRUE(ThrowsInvalidArgument([&] { mla.forward_absorbed(x, mask); }, {"(4, 5)"}))
      << "forward_absorbed";
}

// Last, so that a known mistake is named by the golden tests above first: a
// latent layer, input and causal mask no committed file can predict. The
// reference follows the definition with plain loops in double
// (tests/common/naive.h): c = x W_DKV, K = c W_UK, V = c W_UV, attention per head,
// then W_O, on weights the test installs itself (tests/common/seeded_weights.h).
// Replay a failure with MHA_TEST_SEED=<the printed seed>.
TEST(FreshRandomInputs, BothForwardsMatchPlainLoops) {
  testing::FreshDraws gen;
  const int n_heads = 1 + static_cast<int>(gen() % 4);
  const int d_model = n_heads * (1 + static_cast<int>(gen() % 6));
  const int kv_rank = 1 + static_cast<int>(gen() % 9);
  const std::size_t T = 1 + gen() % 7;
  SCOPED_TRACE("d_model=" + std::to_string(d_model) + " n_heads=" + std::to_string(n_heads) +
               " kv_rank=" + std::to_string(kv_rank) + " T=" + std::to_string(T));
  const std::uint64_t seed = gen();
  MultiHeadLatentAttention mla(d_model, n_heads, kv_rank, seed);
  seeded::InstallMla(mla, d_model, n_heads, kv_rank, seed);  // not the constructor's choice
  const Tensor2 x = testing::RandomTensor2(T, static_cast<std::size_t>(d_model),
                                           static_cast<std::uint32_t>(gen()), /*scale=*/2.0f);
  const Tensor2 mask = naive::CausalMask(int(T), int(T));
  const Tensor2 c = naive::MatMul(x, mla.W_DKV);  // (T, kv_rank)
  const naive::Attention heads = naive::ScaledDotProduct(
      naive::SplitHeads(naive::MatMul(x, mla.W_Q), n_heads),
      naive::SplitHeads(naive::MatMul(c, mla.W_UK), n_heads),
      naive::SplitHeads(naive::MatMul(c, mla.W_UV), n_heads), mask);
  const Tensor2 expected = naive::MatMul(naive::CombineHeads(heads.output), mla.W_O);
  EXPECT_TRUE(AllClose(mla.compress(x), c, kLayer, {"token", "latent"})) << "compress";
  EXPECT_TRUE(AllClose(mla.forward(x, mask), expected, kLayer, {"token", "feature"}))
      << "forward";
  EXPECT_TRUE(AllClose(mla.forward_absorbed(x, mask), expected, kLayer, {"token", "feature"}))
      << "forward_absorbed";
}

}  // namespace
}  // namespace mha
