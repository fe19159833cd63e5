// Public tests for lab 12. Run: bazel test //labs/12_variant_backward/...
// The grading tests check more than these (other shapes, no mask, a query
// that sees no key, multi-query, rank 1, overwritten weights, finite
// differences, fresh random inputs); passing here is a good start.
//
// Expected gradients come from PyTorch's autograd in float64
// (tests/12_variant_backward/gen_goldens.py, in the instructors' repository)
// on T=4 tokens with a causal mask, for GroupedQueryAttention(d_model=8,
// n_heads=4, n_kv_heads=2, seed=3) and MultiHeadLatentAttention(d_model=8,
// n_heads=2, kv_rank=3, seed=3). The *_mistake_* files hold what a classic
// mistake computes, so a failure can name it.
#include "labs/12_variant_backward/variant_backward.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/testing/testing.h"
#include "labs/10_attention_backward/attention_backward.h"
#include "labs/12_variant_backward/variant_backward_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::KnownMistake;
using testing::kLayer;
using testing::kVariantBackwardMistakes;
using testing::LoadGolden;
using testing::MatchesGolden;

const std::string kGolden = "labs/12_variant_backward/golden/";

std::string Golden(const std::string& name) { return kGolden + name + ".npy"; }

// The known mistakes `names` of golden `golden` (variant_backward_test_util.h).
std::vector<KnownMistake> Mistakes(const std::string& golden,
                                   const std::vector<std::string>& names) {
  return kVariantBackwardMistakes.Of(kGolden + golden, names);
}

const std::vector<std::string> kTokenAxes = {"token", "column"};
const std::vector<std::string> kWeightAxes = {"row", "column"};

GqaGrads PublicGqaGrads() {
  const GroupedQueryAttention layer(/*d_model=*/8, /*n_heads=*/4, /*n_kv_heads=*/2, /*seed=*/3);
  return gqa_backward(layer, LoadGolden<2>(Golden("pub_x")), LoadGolden<2>(Golden("pub_mask")),
                      LoadGolden<2>(Golden("pub_d_y")));
}

MlaGrads PublicMlaGrads() {
  const MultiHeadLatentAttention layer(/*d_model=*/8, /*n_heads=*/2, /*kv_rank=*/3, /*seed=*/3);
  return mla_backward(layer, LoadGolden<2>(Golden("pub_x")), LoadGolden<2>(Golden("pub_mask")),
                      LoadGolden<2>(Golden("pub_d_y")));
}

// ---------------------------------------------------------------- gqa_backward

TEST(GqaBackwardPublic, DxMatchesTorchAutograd) {
  EXPECT_TRUE(MatchesGolden(PublicGqaGrads().dx, Golden("pub_gqa_dx"), kLayer, kTokenAxes,
                            Mistakes("pub_gqa_dx", {"kv_grad_one_query_head", "kv_grad_tiled",
                                                    "no_scale"})));
}

TEST(GqaBackwardPublic, DWQMatchesTorchAutograd) {
  EXPECT_TRUE(MatchesGolden(PublicGqaGrads().dW_Q, Golden("pub_gqa_dW_Q"), kLayer, kWeightAxes,
                            Mistakes("pub_gqa_dW_Q", {"no_scale"})));
}

TEST(GqaBackwardPublic, DWKIsTheSumOverTheQueryHeadsThatReadEachKvHead) {
  EXPECT_TRUE(MatchesGolden(PublicGqaGrads().dW_K, Golden("pub_gqa_dW_K"), kLayer, kWeightAxes,
                            Mistakes("pub_gqa_dW_K", {"kv_grad_one_query_head", "kv_grad_tiled",
                                                      "no_scale"})));
}

TEST(GqaBackwardPublic, DWVIsTheSumOverTheQueryHeadsThatReadEachKvHead) {
  EXPECT_TRUE(MatchesGolden(PublicGqaGrads().dW_V, Golden("pub_gqa_dW_V"), kLayer, kWeightAxes,
                            Mistakes("pub_gqa_dW_V",
                                     {"kv_grad_one_query_head", "kv_grad_tiled"})));
}

TEST(GqaBackwardPublic, DWOMatchesTorchAutograd) {
  EXPECT_TRUE(
      MatchesGolden(PublicGqaGrads().dW_O, Golden("pub_gqa_dW_O"), kLayer, kWeightAxes, {}));
}

TEST(GqaBackwardPublic, WithAsManyKvHeadsAsQueryHeadsItEqualsLab10sMhaBackward) {
  // Same seed, same draws: GroupedQueryAttention(8, 2, 2, 3) is MultiHeadAttention(8, 2, 3).
  const GroupedQueryAttention gqa(/*d_model=*/8, /*n_heads=*/2, /*n_kv_heads=*/2, /*seed=*/3);
  const MultiHeadAttention mha(/*d_model=*/8, /*n_heads=*/2, /*seed=*/3);
  const Tensor2 x = LoadGolden<2>(Golden("pub_x")), d_y = LoadGolden<2>(Golden("pub_d_y"));
  const Tensor2 mask = LoadGolden<2>(Golden("pub_mask"));
  const GqaGrads g = gqa_backward(gqa, x, mask, d_y);
  const MhaGrads m = mha_backward(mha, x, mask, d_y);
  const char kWhy[] = " differs from lab 10's mha_backward with n_kv_heads == n_heads";
  EXPECT_TRUE(AllClose(g.dx, m.dx, kLayer, kTokenAxes)) << "dx" << kWhy;
  EXPECT_TRUE(AllClose(g.dW_Q, m.dW_Q, kLayer, kWeightAxes)) << "dW_Q" << kWhy;
  EXPECT_TRUE(AllClose(g.dW_K, m.dW_K, kLayer, kWeightAxes)) << "dW_K" << kWhy;
  EXPECT_TRUE(AllClose(g.dW_V, m.dW_V, kLayer, kWeightAxes)) << "dW_V" << kWhy;
  EXPECT_TRUE(AllClose(g.dW_O, m.dW_O, kLayer, kWeightAxes)) << "dW_O" << kWhy;
}

TEST(GqaBackwardPublic, RejectsADYNotShapedLikeX) {
  const GroupedQueryAttention layer(8, 4, 2, 3);
  EXPECT_TRUE(testing::ThrowsInvalidArgument(
      [&] {
        gqa_backward(layer, testing::RandomTensor2(4, 8, 1), std::nullopt,
                     testing::RandomTensor2(3, 8, 2));
      },
      {"(3, 8)", "(4, 8)"}))
      << "d_y is the gradient of the output, so it has x's shape (T, d_model)";
}

// ---------------------------------------------------------------- mla_backward

TEST(MlaBackwardPublic, DxHasTheQueryPathAndTheLatentPath) {
  EXPECT_TRUE(MatchesGolden(PublicMlaGrads().dx, Golden("pub_mla_dx"), kLayer, kTokenAxes,
                            Mistakes("pub_mla_dx", {"dx_no_latent_path", "mla_no_w_uk_path",
                                                    "no_scale"})));
}

TEST(MlaBackwardPublic, DWQMatchesTorchAutograd) {
  EXPECT_TRUE(MatchesGolden(PublicMlaGrads().dW_Q, Golden("pub_mla_dW_Q"), kLayer, kWeightAxes,
                            Mistakes("pub_mla_dW_Q", {"no_scale"})));
}

TEST(MlaBackwardPublic, DWDKVGetsBothTheKeyAndTheValuePath) {
  EXPECT_TRUE(MatchesGolden(PublicMlaGrads().dW_DKV, Golden("pub_mla_dW_DKV"), kLayer,
                            kWeightAxes,
                            Mistakes("pub_mla_dW_DKV", {"mla_no_w_uk_path", "no_scale"})));
}

TEST(MlaBackwardPublic, DWUKMatchesTorchAutograd) {
  EXPECT_TRUE(MatchesGolden(PublicMlaGrads().dW_UK, Golden("pub_mla_dW_UK"), kLayer, kWeightAxes,
                            Mistakes("pub_mla_dW_UK", {"no_scale"})));
}

TEST(MlaBackwardPublic, DWUVMatchesTorchAutograd) {
  EXPECT_TRUE(
      MatchesGolden(PublicMlaGrads().dW_UV, Golden("pub_mla_dW_UV"), kLayer, kWeightAxes, {}));
}

TEST(MlaBackwardPublic, DWOMatchesTorchAutograd) {
  EXPECT_TRUE(
      MatchesGolden(PublicMlaGrads().dW_O, Golden("pub_mla_dW_O"), kLayer, kWeightAxes, {}));
}

TEST(MlaBackwardPublic, RejectsAMaskThatIsNotTByT) {
  const MultiHeadLatentAttention layer(8, 2, 3, 3);
  EXPECT_TRUE(testing::ThrowsInvalidArgument(
      [&] {
        mla_backward(layer, testing::RandomTensor2(4, 8, 1), testing::RandomTensor2(4, 5, 2),
                     testing::RandomTensor2(4, 8, 3));
      },
      {"(4, 5)", "(4, 4)"}))
      << "the layer attends over its own T tokens, so the mask is (T, T)";
}

}  // namespace
}  // namespace mha
