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
using testing::kExact;
using testing::KnownMistake;
using testing::kLayer;
using testing::LoadGolden;
using testing::MatchesGolden;
using testing::ThrowsInvalidArgument;

const std::string kGolden = "labs/06_latent_attention/golden/";
const std::string kSeeDoc = "; see docs/06_latent_attention.md, \"Classic mistakes\"";
const std::vector<std::string> kAxes = {"token", "feature"};

constexpr int kDModel = 18, kHeads = 3, kRank = 4;
constexpr std::uint64_t kSeed = 7;

MultiHeadLatentAttention Layer() { return MultiHeadLatentAttention(kDModel, kHeads, kRank, kSeed); }

// Mistakes that either forward can make on golden case `name`, and those of
// the absorbed order besides (latent_attention_test_util.h).
std::vector<KnownMistake> CommonMistakes(const std::string& name, bool masked) {
  return testing::LatentForwardMistakes(kGolden + name + "_output", masked);
}

std::vector<KnownMistake> AbsorbedMistakes(const std::string& name, bool masked) {
  return testing::LatentAbsorbedMistakes(kGolden + name + "_output", masked);
}

std::optional<Tensor2> MaskOf(const std::string& name, bool masked) {
  if (!masked) return std::nullopt;
  return LoadGolden<2>(kGolden + name + "_mask.npy");
}

TEST(LatentAttentionPublic, SeededWeightsEqualNumpysDrawInTheDocumentedOrder) {
  const MultiHeadLatentAttention mla = Layer();
  const std::string g = kGolden + "seed7_";
  EXPECT_TRUE(MatchesGolden(mla.W_Q, g + "W_Q.npy", kExact, {"in", "out"},
                            {{g + "W_Q_mistake_drawn_after_w_dkv.npy",
                              "W_DKV drawn before W_Q: the order is W_Q, W_DKV, W_UK, W_UV, "
                              "W_O" + kSeeDoc}}))
      << "W_Q, drawn 1st";
  EXPECT_TRUE(MatchesGolden(mla.W_DKV, g + "W_DKV.npy", kExact, {"in", "out"}))
      << "W_DKV, drawn 2nd, fan-in d_model";
  EXPECT_TRUE(MatchesGolden(mla.W_UK, g + "W_UK.npy", kExact, {"in", "out"},
                            {{g + "W_UK_mistake_fan_in_d_model.npy",
                              "W_UK drawn with fan-in d_model instead of kv_rank" + kSeeDoc}}))
      << "W_UK, drawn 3rd, fan-in kv_rank";
  EXPECT_TRUE(MatchesGolden(mla.W_UV, g + "W_UV.npy", kExact, {"in", "out"},
                            {{g + "W_UV_mistake_fan_in_d_model.npy",
                              "W_UV drawn with fan-in d_model instead of kv_rank" + kSeeDoc}}))
      << "W_UV, drawn 4th, fan-in kv_rank";
  EXPECT_TRUE(MatchesGolden(mla.W_O, g + "W_O.npy", kExact, {"in", "out"})) << "W_O, drawn 5th";
}

TEST(LatentAttentionPublic, CompressIsXTimesWDkv) {
  const Tensor2 x = LoadGolden<2>(kGolden + "case1_x.npy");  // (T=6, d_model=18)
  EXPECT_TRUE(MatchesGolden(Layer().compress(x), kGolden + "case1_latent.npy", kLayer,
                            {"token", "latent"}));
}

TEST(LatentAttentionPublic, ForwardMatchesTorch) {
  const Tensor2 x = LoadGolden<2>(kGolden + "case1_x.npy");
  EXPECT_TRUE(MatchesGolden(Layer().forward(x), kGolden + "case1_output.npy", kLayer, kAxes,
                            CommonMistakes("case1", false)));
}

TEST(LatentAttentionPublic, AbsorbedMatchesTorch) {
  const Tensor2 x = LoadGolden<2>(kGolden + "case1_x.npy");
  EXPECT_TRUE(MatchesGolden(Layer().forward_absorbed(x), kGolden + "case1_output.npy", kLayer,
                            kAxes, AbsorbedMistakes("case1", false)));
}

// Right after the first calls above: anything kept from them still holds the
// old W_UK here.
TEST(LatentAttentionPublic, AnOverwrittenWUkIsUsedByBothForwards) {
  MultiHeadLatentAttention mla = Layer();
  const Tensor2 x = LoadGolden<2>(kGolden + "case1_x.npy");
  mla.forward_absorbed(x);
  mla.W_UK = LoadGolden<2>(kGolden + "case1_new_W_UK.npy");
  const std::vector<KnownMistake> stale = {
      {kGolden + "case1_output.npy",
       "the old W_UK is still in use: do not keep matrices derived from the public weights "
       "between calls" +
           kSeeDoc}};
  const std::string expected = kGolden + "case1_output_new_W_UK.npy";
  EXPECT_TRUE(MatchesGolden(mla.forward(x), expected, kLayer, kAxes, stale)) << "forward";
  EXPECT_TRUE(MatchesGolden(mla.forward_absorbed(x), expected, kLayer, kAxes, stale))
      << "forward_absorbed";
}

TEST(LatentAttentionPublic, ForwardMatchesTorchWithAMaskThatHidesEveryKeyFromQueryZero) {
  const Tensor2 x = LoadGolden<2>(kGolden + "case2_x.npy");
  EXPECT_TRUE(MatchesGolden(Layer().forward(x, MaskOf("case2", true)),
                            kGolden + "case2_output.npy", kLayer, kAxes,
                            CommonMistakes("case2", true)));
}

TEST(LatentAttentionPublic, AbsorbedMatchesTorchWithAMaskThatHidesEveryKeyFromQueryZero) {
  const Tensor2 x = LoadGolden<2>(kGolden + "case2_x.npy");
  EXPECT_TRUE(MatchesGolden(Layer().forward_absorbed(x, MaskOf("case2", true)),
                            kGolden + "case2_output.npy", kLayer, kAxes,
                            AbsorbedMistakes("case2", true)));
}

TEST(LatentAttentionPublic, AbsorbedGivesTheSameNumbersAsNaive) {
  const MultiHeadLatentAttention mla = Layer();
  const Tensor2 x = testing::RandomTensor2(5, kDModel, /*seed=*/4, /*scale=*/2.0f);
  EXPECT_TRUE(AllClose(mla.forward_absorbed(x), mla.forward(x), kLayer, kAxes));
}

TEST(LatentAttentionPublic, CacheHoldsKvRankFloatsPerToken) {
  const MultiHeadLatentAttention mla = Layer();
  EXPECT_EQ(mla.compress(testing::RandomTensor2(7, kDModel, /*seed=*/1)).shape(1), 4u);
  EXPECT_EQ(mla.kv_cache_floats_per_token(), 4u)
      << "the cache holds c only: kv_rank floats per token" << kSeeDoc;
}

TEST(LatentAttentionPublic, ParameterCountIsTwoDSquaredPlusThreeDTimesRank) {
  EXPECT_EQ(Layer().parameter_count(), 2u * 18 * 18 + 3u * 18 * 4)
      << "2*d_model^2 (W_Q, W_O) + 3*d_model*kv_rank (W_DKV, W_UK, W_UV)" << kSeeDoc;
}

TEST(LatentAttentionPublic, RejectsDModelNotDivisibleByHeads) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { MultiHeadLatentAttention(10, 4, 3); },
                                    {"d_model=10", "n_heads=4"}));
}

}  // namespace
}  // namespace mha
