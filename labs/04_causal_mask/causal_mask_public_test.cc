// Public tests for lab 4. Run: bazel test //labs/04_causal_mask/...
//
// The reference masks in labs/04_causal_mask/golden/ come from NumPy
// (np.triu, np.where). Next to each one lies the mask a classic mistake
// builds, so a failure can say "looks like <the mistake>"
// (docs/04_causal_mask.md, "Classic mistakes"). Masks are compared bit for
// bit: -inf must be exactly -inf. The grading tests check the same things on
// other sizes, and the masks inside lab 3's layer.
#include "labs/04_causal_mask/causal_mask.h"

#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/testing/testing.h"
#include "labs/04_causal_mask/causal_mask_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::kExact;
using testing::kMaskAxes;

constexpr float kInf = std::numeric_limits<float>::infinity();
// The golden set of these tests; the grading tests run the same cases
// (labs/04_causal_mask/causal_mask_test_util.h) on a set of their own.
const std::string kGolden = "labs/04_causal_mask/golden/";

// ---------------------------------------------------------------- causal_mask(T)

TEST(CausalMaskPublic, MatchesNumpyTriuWithMinusInfinityAboveTheDiagonal) {
  testing::ExpectIsTheSquareCausalGolden(causal_mask(5), kGolden, /*T=*/5);
}

TEST(CausalMaskPublic, KeepsThePastAndTheDiagonalAndRemovesTheFuture) {
  const Tensor2 expected = {{0, -kInf, -kInf},  //
                            {0, 0, -kInf},      //
                            {0, 0, 0}};
  EXPECT_TRUE(AllClose(causal_mask(3), expected, kExact, kMaskAxes));
}

// ------------------------------------------------------------- causal_mask(T, S)

TEST(CausalMaskWithCachePublic, IsAlignedToTheBottomRightCorner) {
  // Two new tokens at positions 3 and 4 of five.
  testing::ExpectCausalMaskWithCacheMatchesGolden(kGolden, /*T=*/2, /*S=*/5);
}

TEST(CausalMaskWithCachePublic, TheNewQueriesAreTheLastPositions) {
  // Two new tokens at positions 2 and 3 of four: the first sees keys 0..2,
  // the second sees all four.
  const Tensor2 expected = {{0, 0, 0, -kInf},  //
                            {0, 0, 0, 0}};
  EXPECT_TRUE(AllClose(causal_mask(2, 4), expected, kExact, kMaskAxes));
}

TEST(CausalMaskWithCachePublic, RejectsFewerKeysThanQueries) {
  testing::ExpectCausalMaskRejectsFewerKeysThanQueries();
}

// ------------------------------------------------------------------ padding_mask

TEST(PaddingMaskPublic, RemovesTheColumnOfEveryInvalidKey) {
  testing::ExpectPaddingMaskMatchesGolden(kGolden, /*T=*/2, {false, true, true, false});
}

// ----------------------------------------------------------------- combine_masks

TEST(CombineMasksPublic, OfCausalAndPaddingRemovesWhatEitherRemoves) {
  testing::ExpectCombinedCausalAndPaddingMatchesGolden(kGolden, /*T=*/3,
                                                       {true, false, true, true, true});
}

TEST(CombineMasksPublic, AddsFiniteMasksAsASum) {
  // Additive masks need not be 0/-inf (a learned bias is finite): on these
  // (2, 3) masks a min or a max differs from the sum.
  testing::ExpectCombineMasksAddsFiniteMasks(kGolden);
}

}  // namespace
}  // namespace mha
