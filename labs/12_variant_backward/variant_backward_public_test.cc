// Public tests for lab 12. Run: bazel test //labs/12_variant_backward/...
#include "labs/12_variant_backward/variant_backward.h"

#include <string>

#include <gtest/gtest.h>

#include "common/testing.h"

namespace mha {
namespace {

const std::string kSee = "; see docs/12_variant_backward.md, \"Classic mistakes\"";

TEST(VariantBackwardPublic, DoublesEveryElement) {
  const Tensor2 x = testing::RandomTensor2(3, 5, /*seed=*/7);
  const Tensor2 y = variant_backward(x);
  EXPECT_TRUE(testing::AllClose(y, x * 2.0f, testing::kExact, {"row", "column"}))
      << (testing::AllClose(y, x * 4.0f, testing::kExact)
              ? "looks like every element was doubled twice" + kSee
              : std::string("every element must be doubled") + kSee);
}

TEST(VariantBackwardPublic, RejectsAnEmptyInputNamingItsShape) {
  EXPECT_TRUE(testing::ThrowsInvalidArgument(
      [] { variant_backward(Tensor2(xt::zeros<float>({0, 4}))); }, {"(0, 4)"}));
}

}  // namespace
}  // namespace mha
