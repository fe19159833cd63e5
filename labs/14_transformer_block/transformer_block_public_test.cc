// Public tests for lab 14. Run: bazel test //labs/14_transformer_block/...
#include "labs/14_transformer_block/transformer_block.h"

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>

#include "common/testing/testing.h"
#include "labs/14_transformer_block/transformer_block_test_util.h"

namespace mha {
namespace {

TEST(TransformerBlockPublic, IsTheIdentityWithItsOutputWeightsZeroed) {
  TransformerBlock block(8, 2, 16, 3);
  block.attn.W_O = xt::zeros<float>({8, 8});
  block.ffn.W_2 = xt::zeros<float>({16, 8});
  const Tensor2 x = testing::RandomTensor2(5, 8, 11);
  EXPECT_TRUE(testing::AllClose(block.forward(x), x, testing::kExact));
}

}  // namespace
}  // namespace mha
