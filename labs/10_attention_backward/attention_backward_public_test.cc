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
#include <xtensor/xview.hpp>

#include "common/testing/testing.h"
#include "labs/10_attention_backward/attention_backward_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::KnownMistake;
using testing::kAttentionBackwardMistakes;
using testing::LoadGolden;
using testing::MatchesGolden;
using testing::kLayer;

constexpr float kInf = std::numeric_limits<float>::infinity();

const std::string kGolden = "labs/10_attention_backward/golden/";

std::string Golden(const std::string& name) { return kGolden + name + ".npy"; }

// The known mistakes `names` of golden `golden` (attention_backward_test_util.h).
std::vector<KnownMistake> Mistakes(const std::string& golden,
                                   const std::vector<std::string>& names) {
  return kAttentionBackwardMistakes.Of(kGolden + golden, names);
}

// The public attention case: q (2, 3, 5), k and v (2, 4, 5), causal (3, 4) mask.
AttentionGrads PublicAttentionGrads() {
  const testing::AttentionInputs in = testing::LoadAttentionInputs(kGolden, "pub", "pub");
  return attention_backward(in.q, in.k, in.v, in.mask, LoadGolden<3>(Golden("pub_d_output")));
}

MhaGrads PublicLayerGrads() {
  const MultiHeadAttention layer(/*d_model=*/8, /*n_heads=*/2, /*seed=*/3);
  return mha_backward(layer, LoadGolden<2>(Golden("pub_mha_x")),
                      LoadGolden<2>(Golden("pub_mha_mask")), LoadGolden<2>(Golden("pub_mha_d_y")));
}

// ---------------------------------------------------------------- attention_backward

TEST(AttentionBackwardPublic, DqMatchesTorchAutograd) {
  EXPECT_TRUE(MatchesGolden(PublicAttentionGrads().dq, Golden("pub_dq"), kLayer,
                            {"head", "query", "column"},
                            Mistakes("pub_dq", {"no_row_sum", "row_sum_over_queries", "no_scale",
                                                "mask_leak"})));
}

TEST(AttentionBackwardPublic, DkMatchesTorchAutograd) {
  EXPECT_TRUE(MatchesGolden(PublicAttentionGrads().dk, Golden("pub_dk"), kLayer,
                            {"head", "key", "column"},
                            Mistakes("pub_dk", {"no_row_sum", "row_sum_over_queries", "no_scale",
                                                "dk_dv_swapped", "mask_leak"})));
}

TEST(AttentionBackwardPublic, DvMatchesTorchAutograd) {
  EXPECT_TRUE(MatchesGolden(PublicAttentionGrads().dv, Golden("pub_dv"), kLayer,
                            {"head", "key", "column"},
                            Mistakes("pub_dv", {"dk_dv_swapped", "mask_leak"})));
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
  EXPECT_TRUE(MatchesGolden(PublicLayerGrads().dx, Golden("pub_mha_dx"), kLayer,
                            {"token", "column"},
                            Mistakes("pub_mha_dx", {"dx_query_path_only",
                                                    "dx_weights_not_transposed", "no_row_sum",
                                                    "row_sum_over_queries", "no_scale",
                                                    "dk_dv_swapped"})));
}

TEST(MhaBackwardPublic, DWQMatchesTorchAutograd) {
  EXPECT_TRUE(MatchesGolden(PublicLayerGrads().dW_Q, Golden("pub_mha_dW_Q"), kLayer,
                            {"row", "column"},
                            Mistakes("pub_mha_dW_Q",
                                     {"no_row_sum", "row_sum_over_queries", "no_scale"})));
}

TEST(MhaBackwardPublic, DWKMatchesTorchAutograd) {
  EXPECT_TRUE(MatchesGolden(PublicLayerGrads().dW_K, Golden("pub_mha_dW_K"), kLayer,
                            {"row", "column"},
                            Mistakes("pub_mha_dW_K", {"no_row_sum", "row_sum_over_queries",
                                                      "no_scale", "dk_dv_swapped"})));
}

TEST(MhaBackwardPublic, DWVMatchesTorchAutograd) {
  EXPECT_TRUE(MatchesGolden(PublicLayerGrads().dW_V, Golden("pub_mha_dW_V"), kLayer,
                            {"row", "column"}, Mistakes("pub_mha_dW_V", {"dk_dv_swapped"})));
}

TEST(MhaBackwardPublic, DWOMatchesTorchAutograd) {
  EXPECT_TRUE(MatchesGolden(PublicLayerGrads().dW_O, Golden("pub_mha_dW_O"), kLayer,
                            {"row", "column"}, Mistakes("pub_mha_dW_O", {"w_o_grad_transposed"})));
}

}  // namespace
}  // namespace mha
