// Helpers of lab 4's tests: the public tests here and the grading tests (in
// the instructors' repository) name each classic mistake of a mask in the
// same words. The golden generator writes what a mistake builds next to the
// right mask (<case>_mistake_<name>.npy):
//
//   MatchesGolden(causal_mask(5), dir + "causal_T5.npy", kExact, axes,
//                 {MaskMistake(dir + "causal_T5_mistake_strict.npy", kStrictDiagonal)});
#ifndef MHA_LABS_04_CAUSAL_MASK_CAUSAL_MASK_TEST_UTIL_H_
#define MHA_LABS_04_CAUSAL_MASK_CAUSAL_MASK_TEST_UTIL_H_

#include <string>

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

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_04_CAUSAL_MASK_CAUSAL_MASK_TEST_UTIL_H_
