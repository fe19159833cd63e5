// Helpers and shared cases of lab 4's tests: the public tests here and the
// grading tests (in the instructors' repository) run the same checks, each on
// its own golden set (a folder of .npy files written by a golden generator),
// and name each classic mistake of a mask in the same words. The generator
// writes what a mistake builds next to the right mask
// (<case>_mistake_<name>.npy):
//
//   MatchesGolden(causal_mask(5), dir + "causal_T5.npy", kExact, axes,
//                 {MaskMistake(dir + "causal_T5_mistake_strict.npy", kStrictDiagonal)});
//
// The grading tests add cases of their own on top.
#ifndef MHA_LABS_04_CAUSAL_MASK_CAUSAL_MASK_TEST_UTIL_H_
#define MHA_LABS_04_CAUSAL_MASK_CAUSAL_MASK_TEST_UTIL_H_

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/testing/testing.h"
#include "labs/04_causal_mask/causal_mask.h"

namespace mha {
namespace testing {

// The mistake whose mask the generator wrote to `golden`, in `words`; the
// message sends the reader to the lesson.
inline KnownMistake MaskMistake(const std::string& golden, const std::string& words) {
  return {golden, words + "; see docs/04_causal_mask.md, \"Classic mistakes\"",
          {"", words, "docs/04_causal_mask.md"}};
}

// causal_mask(T)
inline const char kStrictDiagonal[] = "the diagonal is removed (j < i instead of j <= i)";
inline const char kTransposedMask[] =
    "a transposed mask: -inf below the diagonal (the past) instead of above it";
inline const char kMultiplicativeMask[] =
    "a multiplicative 0/1 mask (1 keeps, 0 removes) instead of an additive 0/-inf one";
inline const char kFiniteMask[] =
    "a large finite negative (-1e9) where the API asks for exactly -inf";

// causal_mask(T, S)
inline const char kTopLeftMask[] =
    "a top-left aligned mask: the new queries were treated as positions 0..T-1 instead of the "
    "last T of S positions";
inline const char kStrictDiagonalWithCache[] =
    "the diagonal is removed (each new token cannot see itself)";

// padding_mask and combine_masks
inline const char kInvertedPadding[] =
    "key_valid read backwards: the valid keys are removed and the padding kept";
inline const char kCombinedWithMax[] =
    "masks combined with max (a key survives unless both masks remove it) instead of a sum";
inline const char kCombinedWithMin[] =
    "masks combined with min instead of a sum (min agrees with the sum on 0/-inf masks only)";

// What a test names by an exception, as data for the grader
// (common/testing/misconception.h).
inline const MistakeTable kMaskCheckMistakes(
    "docs/04_causal_mask.md",
    {{"fewer_keys_accepted",
      "causal_mask(T, S) must reject S < T: 5 new queries cannot be the last 5 of 3 positions"}});

inline const std::vector<std::string> kMaskAxes = {"query", "key"};

// Shared cases. `golden` is a golden set's folder ("labs/04_causal_mask/golden/");
// its masks are named by their sizes (causal_T5.npy, causal_T2_S5.npy, ...).

inline std::string MaskSizes(int T) { return "_T" + std::to_string(T); }
inline std::string MaskSizes(int T, std::size_t S) {
  return MaskSizes(T) + "_S" + std::to_string(S);
}

// `mask` (causal_mask(T), or causal_mask(T, T)) equals causal_T<T>.npy.
inline void ExpectIsTheSquareCausalGolden(const Tensor2& mask, const std::string& golden, int T) {
  const std::string name = golden + "causal" + MaskSizes(T);
  EXPECT_TRUE(MatchesGolden(mask, name + ".npy", kExact, kMaskAxes,
                            {MaskMistake(name + "_mistake_strict.npy", kStrictDiagonal),
                             MaskMistake(name + "_mistake_transposed.npy", kTransposedMask),
                             MaskMistake(name + "_mistake_multiplicative.npy",
                                         kMultiplicativeMask),
                             MaskMistake(name + "_mistake_finite.npy", kFiniteMask)}));
}

// causal_mask(T, S) equals causal_T<T>_S<S>.npy (aligned to the bottom-right corner).
inline void ExpectCausalMaskWithCacheMatchesGolden(const std::string& golden, int T, int S) {
  const std::string name = golden + "causal" + MaskSizes(T, static_cast<std::size_t>(S));
  EXPECT_TRUE(MatchesGolden(causal_mask(T, S), name + ".npy", kExact, kMaskAxes,
                            {MaskMistake(name + "_mistake_top_left.npy", kTopLeftMask),
                             MaskMistake(name + "_mistake_strict.npy", kStrictDiagonalWithCache),
                             MaskMistake(name + "_mistake_finite.npy", kFiniteMask)}));
}

inline void ExpectCausalMaskRejectsFewerKeysThanQueries() {
  EXPECT_TRUE(ThrowsInvalidArgument([] { causal_mask(5, 3); }, {"T=5", "S=3"}))
      << kMaskCheckMistakes.Named("fewer_keys_accepted");
}

// padding_mask(T, key_valid) equals padding_T<T>_S<S>.npy.
inline void ExpectPaddingMaskMatchesGolden(const std::string& golden, int T,
                                           const std::vector<bool>& key_valid) {
  const std::string name = golden + "padding" + MaskSizes(T, key_valid.size());
  EXPECT_TRUE(MatchesGolden(padding_mask(T, key_valid), name + ".npy", kExact, kMaskAxes,
                            {MaskMistake(name + "_mistake_inverted.npy", kInvertedPadding)}));
}

// combine_masks(causal_mask(T, S), padding_mask(T, key_valid)) equals
// combined_T<T>_S<S>.npy.
inline void ExpectCombinedCausalAndPaddingMatchesGolden(const std::string& golden, int T,
                                                        const std::vector<bool>& key_valid) {
  const int S = static_cast<int>(key_valid.size());
  const Tensor2 combined = combine_masks(causal_mask(T, S), padding_mask(T, key_valid));
  const std::string name = golden + "combined" + MaskSizes(T, key_valid.size());
  EXPECT_TRUE(MatchesGolden(combined, name + ".npy", kExact, kMaskAxes,
                            {MaskMistake(name + "_mistake_max.npy", kCombinedWithMax)}));
}

// combine_masks of the finite masks combined_finite_a/_b.npy is their sum,
// combined_finite.npy (a learned bias is finite: there min and max differ
// from the sum).
inline void ExpectCombineMasksAddsFiniteMasks(const std::string& golden) {
  const Tensor2 a = LoadGolden<2>(golden + "combined_finite_a.npy");  // (T, S)
  const Tensor2 b = LoadGolden<2>(golden + "combined_finite_b.npy");  // (T, S)
  const std::string name = golden + "combined_finite";
  EXPECT_TRUE(MatchesGolden(combine_masks(a, b), name + ".npy", kExact, kMaskAxes,
                            {MaskMistake(name + "_mistake_max.npy", kCombinedWithMax),
                             MaskMistake(name + "_mistake_min.npy", kCombinedWithMin)}));
}

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_04_CAUSAL_MASK_CAUSAL_MASK_TEST_UTIL_H_
