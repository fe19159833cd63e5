// Hidden tests for lab 13: other shapes and seeds than the public ones,
// and fresh random inputs on every run.
#include "labs/13_induction_heads/induction_heads.h"

#include <string>

#include <gtest/gtest.h>

#include "common/testing.h"

namespace mha {
namespace {

const std::string kSee = "; see docs/13_induction_heads.md, \"Classic mistakes\"";

void ExpectDoubled(const Tensor2& x) {
  const Tensor2 y = induction_heads(x);
  EXPECT_TRUE(testing::AllClose(y, x * 2.0f, testing::kExact, {"row", "column"}))
      << (testing::AllClose(y, x * 4.0f, testing::kExact)
              ? "looks like every element was doubled twice" + kSee
              : std::string("every element must be doubled") + kSee);
}

TEST(InductionHeads, DoublesEveryElementOfATallInput) {
  ExpectDoubled(testing::RandomTensor2(9, 2, /*seed=*/21));
}

TEST(InductionHeads, RejectsAnEmptyInputNamingItsShape) {
  EXPECT_TRUE(testing::ThrowsInvalidArgument(
      [] { induction_heads(Tensor2(xt::zeros<float>({3, 0}))); }, {"(3, 0)"}));
}

TEST(FreshRandomInputs, InductionHeadsDoublesThem) {
  const auto seed = testing::FreshSeed();
  SCOPED_TRACE("MHA_TEST_SEED=" + std::to_string(seed));
  ExpectDoubled(testing::RandomTensor2(4, 6, static_cast<std::uint32_t>(seed)));
}

}  // namespace
}  // namespace mha
