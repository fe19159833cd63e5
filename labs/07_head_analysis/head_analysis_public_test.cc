// Public tests for lab 7. Run: bazel test //labs/07_head_analysis/...
// The grading tests check more than these; passing here is a good start.
#include <gtest/gtest.h>

#include <cmath>

#include "common/testing.h"
#include "labs/07_head_analysis/head_analysis.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::kRowOp;

TEST(ProfileHeadsPublic, PreviousTokenHeadScoresOneOnPreviousToken) {
  // One head, T=4: query 0 sees itself, every later query looks one step back.
  Tensor3 w = {{{1, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}}};
  const HeadProfile p = profile_heads(w)[0];
  EXPECT_TRUE(AllClose(Tensor1{p.previous_token}, Tensor1{1.0f}, kRowOp)) << "previous_token";
  EXPECT_TRUE(AllClose(Tensor1{p.entropy}, Tensor1{0.0f}, kRowOp)) << "entropy";
}

TEST(ProfileHeadsPublic, UniformHeadHasEntropyLnTNats) {
  Tensor3 w = xt::ones<float>({1, 4, 4}) * 0.25f;
  const HeadProfile p = profile_heads(w)[0];
  EXPECT_TRUE(AllClose(Tensor1{p.entropy}, Tensor1{std::log(4.0f)}, kRowOp)) << "entropy";
}

TEST(InductionScorePublic, PerfectInductionPatternScoresOne) {
  // Block of L=2 tokens repeated: query 2 attends key 1, query 3 attends key 2.
  Tensor2 w = {{1, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}};
  EXPECT_TRUE(AllClose(Tensor1{induction_score(w, 2)}, Tensor1{1.0f}, kRowOp));
}

TEST(ClassifyHeadPublic, FirstRuleThatHoldsWins) {
  // previous_token and self are both high: previous-token comes first.
  const HeadProfile p{0.5f, 1.0f, 0.8f, 0.6f, 0.1f};
  EXPECT_EQ(classify_head(p), "previous-token");
}

}  // namespace
}  // namespace mha
