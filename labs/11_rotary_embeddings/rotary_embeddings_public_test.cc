// Public tests for lab 11. Run: bazel test //labs/11_rotary_embeddings/...
#include "labs/11_rotary_embeddings/rotary_embeddings.h"

#include <string>

#include <gtest/gtest.h>

#include "common/testing.h"

namespace mha {
namespace {

const std::string kSee = "; see docs/11_rotary_embeddings.md, \"Classic mistakes\"";

TEST(RotaryEmbeddingsPublic, DoublesEveryElement) {
  const Tensor2 x = testing::RandomTensor2(3, 5, /*seed=*/7);
  const Tensor2 y = rotary_embeddings(x);
  EXPECT_TRUE(testing::AllClose(y, x * 2.0f, testing::kExact, {"row", "column"}))
      << (testing::AllClose(y, x * 4.0f, testing::kExact)
              ? "looks like every element was doubled twice" + kSee
              : std::string("every element must be doubled") + kSee);
}

TEST(RotaryEmbeddingsPublic, RejectsAnEmptyInputNamingItsShape) {
  EXPECT_TRUE(testing::ThrowsInvalidArgument(
      [] { rotary_embeddings(Tensor2(xt::zeros<float>({0, 4}))); }, {"(0, 4)"}));
}

}  // namespace
}  // namespace mha
