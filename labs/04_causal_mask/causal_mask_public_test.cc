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
using testing::KnownMistake;
using testing::kCombinedWithMax;
using testing::kCombinedWithMin;
using testing::kFiniteMask;
using testing::kInvertedPadding;
using testing::kMultiplicativeMask;
using testing::kStrictDiagonal;
using testing::kStrictDiagonalWithCache;
using testing::kTopLeftMask;
using testing::kTransposedMask;
using testing::LoadGolden;
using testing::MatchesGolden;
using testing::ThrowsInvalidArgument;

constexpr float kInf = std::numeric_limits<float>::infinity();
const std::string kGolden = "labs/04_causal_mask/golden/";
const std::vector<std::string> kMaskAxes = {"query", "key"};

// The mistake whose mask the generator wrote to `file` (causal_mask_test_util.h).
KnownMistake Mistake(const std::string& file, const std::string& words) {
  return testing::MaskMistake(kGolden + file, words);
}

// ---------------------------------------------------------------- causal_mask(T)

TEST(CausalMaskPublic, MatchesNumpyTriuWithMinusInfinityAboveTheDiagonal) {
  EXPECT_TRUE(MatchesGolden(
      causal_mask(5), kGolden + "causal_T5.npy", kExact, kMaskAxes,
      {Mistake("causal_T5_mistake_strict.npy", kStrictDiagonal),
       Mistake("causal_T5_mistake_transposed.npy", kTransposedMask),
       Mistake("causal_T5_mistake_multiplicative.npy", kMultiplicativeMask),
       Mistake("causal_T5_mistake_finite.npy", kFiniteMask)}));
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
  EXPECT_TRUE(MatchesGolden(
      causal_mask(2, 5), kGolden + "causal_T2_S5.npy", kExact, kMaskAxes,
      {Mistake("causal_T2_S5_mistake_top_left.npy", kTopLeftMask),
       Mistake("causal_T2_S5_mistake_strict.npy", kStrictDiagonalWithCache),
       Mistake("causal_T2_S5_mistake_finite.npy", kFiniteMask)}));
}

TEST(CausalMaskWithCachePublic, TheNewQueriesAreTheLastPositions) {
  // Two new tokens at positions 2 and 3 of four: the first sees keys 0..2,
  // the second sees all four.
  const Tensor2 expected = {{0, 0, 0, -kInf},  //
                            {0, 0, 0, 0}};
  EXPECT_TRUE(AllClose(causal_mask(2, 4), expected, kExact, kMaskAxes));
}

TEST(CausalMaskWithCachePublic, RejectsFewerKeysThanQueries) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { causal_mask(5, 3); }, {"T=5", "S=3"}))
      << "causal_mask(T, S) must reject S < T: 5 new queries cannot be the last 5 of 3 "
         "positions; see docs/04_causal_mask.md, \"Classic mistakes\"";
}

// ------------------------------------------------------------------ padding_mask

TEST(PaddingMaskPublic, RemovesTheColumnOfEveryInvalidKey) {
  EXPECT_TRUE(MatchesGolden(
      padding_mask(2, {false, true, true, false}), kGolden + "padding_T2_S4.npy", kExact,
      kMaskAxes,
      {Mistake("padding_T2_S4_mistake_inverted.npy", kInvertedPadding)}));
}

// ----------------------------------------------------------------- combine_masks

TEST(CombineMasksPublic, OfCausalAndPaddingRemovesWhatEitherRemoves) {
  const Tensor2 combined =
      combine_masks(causal_mask(3, 5), padding_mask(3, {true, false, true, true, true}));
  EXPECT_TRUE(MatchesGolden(
      combined, kGolden + "combined_T3_S5.npy", kExact, kMaskAxes,
      {Mistake("combined_T3_S5_mistake_max.npy", kCombinedWithMax)}));
}

TEST(CombineMasksPublic, AddsFiniteMasksAsASum) {
  // Additive masks need not be 0/-inf (a learned bias is finite): on these a
  // min or a max differs from the sum.
  const Tensor2 a = LoadGolden<2>(kGolden + "combined_finite_a.npy");  // (2, 3)
  const Tensor2 b = LoadGolden<2>(kGolden + "combined_finite_b.npy");
  EXPECT_TRUE(MatchesGolden(
      combine_masks(a, b), kGolden + "combined_finite.npy", kExact, kMaskAxes,
      {Mistake("combined_finite_mistake_max.npy", kCombinedWithMax),
       Mistake("combined_finite_mistake_min.npy", kCombinedWithMin)}));
}

}  // namespace
}  // namespace mha
