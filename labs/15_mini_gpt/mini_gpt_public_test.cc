// Public tests for lab 15. Run: bazel test //labs/15_mini_gpt/...
#include "labs/15_mini_gpt/mini_gpt.h"

#include <gtest/gtest.h>

#include "common/testing/testing.h"
#include "labs/15_mini_gpt/mini_gpt_test_util.h"

namespace mha {
namespace {

TEST(MiniGptPublic, HasTheSeedCoursesParameterCount) {
  EXPECT_EQ(MiniGpt(64, 32, 64, 4, 256, 2).parameter_count(), 103680u);
}

}  // namespace
}  // namespace mha
