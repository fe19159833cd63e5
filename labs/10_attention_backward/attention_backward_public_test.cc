// Public tests for lab 10. Run: bazel test //labs/10_attention_backward/...
// The grading tests check more than these (other shapes, fully masked rows,
// huge scores, one head, finite differences, fresh random inputs); passing
// here is a good start.
//
// Expected gradients come from PyTorch's autograd in float64
// (tests/10_attention_backward/gen_goldens.py, in the instructors' repository):
// attention with H=2 heads, T=3 queries, S=4 keys, d_head=5 and a causal mask,
// and the layer
// MultiHeadAttention(d_model=8, n_heads=2, seed=3) on T=4 tokens, causal.
// The *_mistake_* files hold what a classic mistake computes, so a failure
// can name it.
#include "labs/10_attention_backward/attention_backward.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xoperation.hpp>
#include <xtensor/xview.hpp>

#include "common/testing/testing.h"
#include "labs/10_attention_backward/attention_backward_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::AttentionCase;
using testing::AttentionGradChecks;
using testing::ExpectGradMatchesTorch;
using testing::kLayer;
using testing::LayerCase;
using testing::LayerGradChecks;
using testing::LoadGolden;

constexpr float kInf = std::numeric_limits<float>::infinity();

// The golden set of these tests; the grading tests run the same cases
// (labs/10_attention_backward/attention_backward_test_util.h) on a set of
// their own.
const std::string kGolden = "labs/10_attention_backward/golden/";

// The public attention case: q (2, 3, 5), k and v (2, 4, 5), causal (3, 4) mask.
const AttentionCase kAttentionCase{kGolden, "pub", /*masked=*/true};

// The public layer case: MultiHeadAttention(d_model=8, n_heads=2, seed=3) on
// pub_mha_x.npy with the mask pub_mha_mask.npy.
const LayerCase kLayerCase{kGolden, "pub_mha", "pub_mha", /*masked=*/true};

MhaGrads PublicLayerGrads() {
  const MultiHeadAttention layer(/*d_model=*/8, /*n_heads=*/2, /*seed=*/3);
  return kLayerCase.Grads(layer, LoadGolden<2>(kGolden + "pub_mha_mask.npy"));
}

// ---------------------------------------------------------------- attention_backward

TEST(AttentionBackwardPublic, DqMatchesTorchAutograd) {
  ExpectGradMatchesTorch(kAttentionCase, kAttentionCase.Grads(), AttentionGradChecks()[0]);
}

TEST(AttentionBackwardPublic, DkMatchesTorchAutograd) {
  ExpectGradMatchesTorch(kAttentionCase, kAttentionCase.Grads(), AttentionGradChecks()[1]);
}

TEST(AttentionBackwardPublic, DvMatchesTorchAutograd) {
  ExpectGradMatchesTorch(kAttentionCase, kAttentionCase.Grads(), AttentionGradChecks()[2]);
}

TEST(AttentionBackwardPublic, AQueryThatSeesNoKeyGetsNoGradientAndPassesNone) {
  const Tensor3 q = testing::RandomTensor3(2, 3, 4, /*seed=*/1);  // (H=2, T=3, d_head=4)
  const Tensor3 k = testing::RandomTensor3(2, 3, 4, /*seed=*/2);  // (H=2, S=3, d_head=4)
  const Tensor3 v = testing::RandomTensor3(2, 3, 4, /*seed=*/3);
  const Tensor3 d_out = testing::RandomTensor3(2, 3, 4, /*seed=*/4);
  const Tensor2 mask = {{-kInf, -kInf, -kInf}, {0, 0, -kInf}, {0, 0, 0}};  // query 0: no key
  const AttentionGrads g = attention_backward(q, k, v, mask, d_out);
  // Query 0's output is 0 whatever q, k, v are: its dq row is zero, not NaN...
  const Tensor3 zero_row = xt::zeros<float>({2, 1, 4});
  EXPECT_TRUE(AllClose(xt::view(g.dq, xt::all(), xt::range(0, 1), xt::all()), zero_row, kLayer,
                       {"head", "query", "column"}))
      << "a query whose mask row is all -inf must get dq = 0 (P is all zero there)";
  // ...and its upstream gradient reaches no key: zeroing it changes nothing.
  Tensor3 d_out_without_0 = d_out;
  xt::view(d_out_without_0, xt::all(), 0, xt::all()) = 0.0f;
  const AttentionGrads g0 = attention_backward(q, k, v, mask, d_out_without_0);
  EXPECT_TRUE(AllClose(g.dk, g0.dk, kLayer, {"head", "key", "column"}))
      << "d_output of a query that sees no key leaked into dk";
  EXPECT_TRUE(AllClose(g.dv, g0.dv, kLayer, {"head", "key", "column"}))
      << "d_output of a query that sees no key leaked into dv";
  // Zero gradients everywhere pass the checks above: queries 1 and 2 see keys,
  // so the gradient must reach those keys' values.
  EXPECT_TRUE(xt::any(xt::not_equal(xt::view(g.dv, xt::all(), xt::range(0, 2), xt::all()), 0.0f)))
      << "dv of keys 0 and 1, which queries 1 and 2 see, is all zero";
}

TEST(AttentionBackwardPublic, RejectsADOutputNotShapedLikeQ) {
  const Tensor3 q = testing::RandomTensor3(2, 3, 4, 1);  // (2, 3, 4)
  const Tensor3 kv = testing::RandomTensor3(2, 5, 4, 2);  // (2, 5, 4)
  EXPECT_TRUE(testing::ThrowsInvalidArgument(
      [&] { attention_backward(q, kv, kv, std::nullopt, testing::RandomTensor3(2, 5, 4, 3)); },
      {"(2, 5, 4)", "(2, 3, 4)"}))
      << "d_output is the gradient of the output, so it has q's shape (H, T, d_head)";
}

// ---------------------------------------------------------------- mha_backward

TEST(MhaBackwardPublic, DxMatchesTorchAutograd) {
  ExpectGradMatchesTorch(kLayerCase, PublicLayerGrads(), LayerGradChecks()[0]);
}

TEST(MhaBackwardPublic, DWQMatchesTorchAutograd) {
  ExpectGradMatchesTorch(kLayerCase, PublicLayerGrads(), LayerGradChecks()[1]);
}

TEST(MhaBackwardPublic, DWKMatchesTorchAutograd) {
  ExpectGradMatchesTorch(kLayerCase, PublicLayerGrads(), LayerGradChecks()[2]);
}

TEST(MhaBackwardPublic, DWVMatchesTorchAutograd) {
  ExpectGradMatchesTorch(kLayerCase, PublicLayerGrads(), LayerGradChecks()[3]);
}

TEST(MhaBackwardPublic, DWOMatchesTorchAutograd) {
  ExpectGradMatchesTorch(kLayerCase, PublicLayerGrads(), LayerGradChecks()[4]);
}

}  // namespace
}  // namespace mha
