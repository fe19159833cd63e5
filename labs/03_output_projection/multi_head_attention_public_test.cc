// Public tests for lab 3. Run: bazel test //labs/03_output_projection/...
// The grading tests check more than these (NumPy's exact weights, PyTorch's
// numbers, masks, large inputs); passing here is a good start.
#include "labs/03_output_projection/multi_head_attention.h"

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>

#include "common/testing.h"
#include "labs/01_split_heads/split_heads.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::kLayer;

TEST(MultiHeadAttentionPublic, ForwardMapsTByDModelToTByDModel) {
  MultiHeadAttention layer(/*d_model=*/8, /*n_heads=*/2, /*seed=*/0);
  Tensor2 x = testing::RandomTensor2(3, 8, /*seed=*/1);  // (T=3, d_model=8)
  Tensor2 y = layer.forward(x);
  EXPECT_EQ(y.shape(0), 3u);
  EXPECT_EQ(y.shape(1), 8u);
}

TEST(MultiHeadAttentionPublic, IdentityWOLeavesTheConcatenatedHeads) {
  // With W_O = I the last step does nothing, so forward must equal the heads
  // from attend() put side by side again.
  MultiHeadAttention layer(8, 2, 0);
  layer.W_O = xt::eye<float>(8);
  Tensor2 x = testing::RandomTensor2(3, 8, /*seed=*/2);
  Tensor2 concat = combine_heads(layer.attend(x).output);  // (T, d_model)
  EXPECT_TRUE(AllClose(layer.forward(x), concat, kLayer, {"token", "column"}));
}

TEST(MultiHeadAttentionPublic, ParameterCountIsFourTimesDModelSquared) {
  EXPECT_EQ(MultiHeadAttention(8, 2).parameter_count(), 256u);
}

TEST(MultiHeadAttentionPublic, RejectsDModelNotDivisibleByNHeads) {
  EXPECT_TRUE(testing::ThrowsInvalidArgument([] { MultiHeadAttention(10, 4); },
                                             {"d_model=10", "n_heads=4"}));
}

}  // namespace
}  // namespace mha
