// Hidden tests for lab 14: other shapes and seeds than the public ones,
// and fresh random inputs on every run.
#include "labs/14_transformer_block/transformer_block.h"

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>

#include "common/testing/testing.h"
#include "labs/14_transformer_block/transformer_block_test_util.h"

namespace mha {
namespace {

TEST(TransformerBlock, CountsItsParameters) {
  EXPECT_EQ(TransformerBlock(64, 4, 256, 0).parameter_count(), 49728u);
}

}  // namespace
}  // namespace mha
