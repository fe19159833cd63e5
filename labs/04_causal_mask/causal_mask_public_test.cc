// Public tests for lab 4. Run: bazel test //labs/04_causal_mask/...
// The grading tests check more than these; passing here is a good start.
#include "labs/04_causal_mask/causal_mask.h"

#include <limits>

#include <gtest/gtest.h>

#include "common/testing.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::kExact;

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(CausalMaskPublic, KeepsThePastAndTheDiagonalAndRemovesTheFuture) {
  const Tensor2 expected = {{0, -kInf, -kInf},  //
                            {0, 0, -kInf},      //
                            {0, 0, 0}};
  EXPECT_TRUE(AllClose(causal_mask(3), expected, kExact, {"query", "key"}));
}

TEST(CausalMaskPublic, WithACacheTheNewQueriesAreTheLastPositions) {
  // Two new tokens at positions 2 and 3 of four: the first sees keys 0..2,
  // the second sees all four.
  const Tensor2 expected = {{0, 0, 0, -kInf},  //
                            {0, 0, 0, 0}};
  EXPECT_TRUE(AllClose(causal_mask(2, 4), expected, kExact, {"query", "key"}));
}

TEST(PaddingMaskPublic, RemovesInvalidKeysForEveryQuery) {
  const Tensor2 expected = {{0, -kInf, 0},  //
                            {0, -kInf, 0}};
  EXPECT_TRUE(AllClose(padding_mask(2, {true, false, true}), expected, kExact, {"query", "key"}));
}

TEST(CombineMasksPublic, RemovesWhatEitherMaskRemoves) {
  const Tensor2 combined = combine_masks(causal_mask(3), padding_mask(3, {true, true, false}));
  const Tensor2 expected = {{0, -kInf, -kInf},  //
                            {0, 0, -kInf},      //
                            {0, 0, -kInf}};
  EXPECT_TRUE(AllClose(combined, expected, kExact, {"query", "key"}));
}

}  // namespace
}  // namespace mha
