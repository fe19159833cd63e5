// Hidden tests for lab 15: other shapes and seeds than the public ones,
// and fresh random inputs on every run.
#include "labs/15_mini_gpt/mini_gpt.h"

#include <gtest/gtest.h>

#include "common/testing/testing.h"
#include "labs/15_mini_gpt/mini_gpt_test_util.h"

namespace mha {
namespace {

TEST(MiniGpt, CountsTheParametersOfAnotherSize) {
  // 16 * 8 + 3 * (4 * 8^2 + 2 * 8 * 24 + 24 + 5 * 8) + 2 * 8
  EXPECT_EQ(MiniGpt(16, 10, 8, 2, 24, 3, 5).parameter_count(), 2256u);
}

}  // namespace
}  // namespace mha
