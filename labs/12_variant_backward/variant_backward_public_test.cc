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
using testing::ExpectGqaGradMatchesTorch;
using testing::ExpectMlaGradMatchesTorch;
using testing::GoldenFile;
using testing::kLayer;
using testing::kTokenAxes;
using testing::kWeightAxes;
using testing::LoadGolden;
using testing::VariantCase;

const std::string kGolden = "labs/12_variant_backward/golden/";

// The golden cases of these tests: both layers on pub_x.npy with the mask
// pub_mask.npy. The grading tests run the same cases
// (labs/12_variant_backward/variant_backward_test_util.h) on cases of their own.
const VariantCase kGqaCase{kGolden, "pub_x", "pub_d_y", "pub_mask", "pub_gqa"};
const VariantCase kMlaCase{kGolden, "pub_x", "pub_d_y", "pub_mask", "pub_mla"};

GroupedQueryAttention PublicGqaLayer() {
  return GroupedQueryAttention(/*d_model=*/8, /*n_heads=*/4, /*n_kv_heads=*/2, /*seed=*/3);
}

MultiHeadLatentAttention PublicMlaLayer() {
  return MultiHeadLatentAttention(/*d_model=*/8, /*n_heads=*/2, /*kv_rank=*/3, /*seed=*/3);
}

// ---------------------------------------------------------------- gqa_backward

TEST(GqaBackwardPublic, DxMatchesTorchAutograd) {
  ExpectGqaGradMatchesTorch(kGqaCase, PublicGqaLayer(), "dx");
}

TEST(GqaBackwardPublic, DWQMatchesTorchAutograd) {
  ExpectGqaGradMatchesTorch(kGqaCase, PublicGqaLayer(), "dW_Q");
}

TEST(GqaBackwardPublic, DWKIsTheSumOverTheQueryHeadsThatReadEachKvHead) {
  ExpectGqaGradMatchesTorch(kGqaCase, PublicGqaLayer(), "dW_K");
}

TEST(GqaBackwardPublic, DWVIsTheSumOverTheQueryHeadsThatReadEachKvHead) {
  ExpectGqaGradMatchesTorch(kGqaCase, PublicGqaLayer(), "dW_V");
}

TEST(GqaBackwardPublic, DWOMatchesTorchAutograd) {
  ExpectGqaGradMatchesTorch(kGqaCase, PublicGqaLayer(), "dW_O");
}

TEST(GqaBackwardPublic, WithAsManyKvHeadsAsQueryHeadsItEqualsLab10sMhaBackward) {
  // Same seed, same draws: GroupedQueryAttention(8, 2, 2, 3) is MultiHeadAttention(8, 2, 3).
  const GroupedQueryAttention gqa(/*d_model=*/8, /*n_heads=*/2, /*n_kv_heads=*/2, /*seed=*/3);
  const MultiHeadAttention mha(/*d_model=*/8, /*n_heads=*/2, /*seed=*/3);
  const Tensor2 x = LoadGolden<2>(GoldenFile(kGolden, "pub_x")),
                d_y = LoadGolden<2>(GoldenFile(kGolden, "pub_d_y"));
  const Tensor2 mask = LoadGolden<2>(GoldenFile(kGolden, "pub_mask"));
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
  ExpectMlaGradMatchesTorch(kMlaCase, PublicMlaLayer(), "dx");
}

TEST(MlaBackwardPublic, DWQMatchesTorchAutograd) {
  ExpectMlaGradMatchesTorch(kMlaCase, PublicMlaLayer(), "dW_Q");
}

TEST(MlaBackwardPublic, DWDKVGetsBothTheKeyAndTheValuePath) {
  ExpectMlaGradMatchesTorch(kMlaCase, PublicMlaLayer(), "dW_DKV");
}

TEST(MlaBackwardPublic, DWUKMatchesTorchAutograd) {
  ExpectMlaGradMatchesTorch(kMlaCase, PublicMlaLayer(), "dW_UK");
}

TEST(MlaBackwardPublic, DWUVMatchesTorchAutograd) {
  ExpectMlaGradMatchesTorch(kMlaCase, PublicMlaLayer(), "dW_UV");
}

TEST(MlaBackwardPublic, DWOMatchesTorchAutograd) {
  ExpectMlaGradMatchesTorch(kMlaCase, PublicMlaLayer(), "dW_O");
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
