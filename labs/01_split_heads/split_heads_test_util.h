// Helpers of lab 1's tests: the public tests here and the grading tests (in
// the instructors' repository) use the same ones, so that both name a
// classic mistake in the same words.
#ifndef MHA_LABS_01_SPLIT_HEADS_SPLIT_HEADS_TEST_UTIL_H_
#define MHA_LABS_01_SPLIT_HEADS_SPLIT_HEADS_TEST_UTIL_H_

#include <string>
#include <vector>

#include "common/testing/testing.h"

namespace mha {
namespace testing {

// The classic mistakes of docs/01_split_heads.md, by the names the golden
// generator gives what each one computes (<golden>_mistake_<name>.npy), for
// split_heads and for combine_heads.
inline const MistakeTable kSplitHeadsMistakes(
    "docs/01_split_heads.md",
    {
        {"no_transpose", "x reshaped straight to (n_heads, T, d_head) without the transpose"},
        {"interleaved",
         "interleaved columns (head h took columns h, h+n_heads, ...) instead of a contiguous "
         "block"},
        {"last_column_missing",
         "an off-by-one loop bound: the last column of every head was never copied"},
    });
inline const MistakeTable kCombineHeadsMistakes(
    "docs/01_split_heads.md",
    {
        {"no_transpose",
         "heads reshaped straight to (T, d_model) without moving the head axis back"},
        {"interleaved", "interleaved columns (head h written to columns h, h+n_heads, ...)"},
    });

// The mistakes the generator computes for each function, in the tables' order.
inline const std::vector<std::string> kSplitMistakeNames = {"no_transpose", "interleaved",
                                                            "last_column_missing"};
inline const std::vector<std::string> kCombineMistakeNames = {"no_transpose", "interleaved"};

// What a failed argument check says.
inline const char kSplitHeadsArgumentChecks[] =
    "bad arguments must throw std::invalid_argument naming the values; see "
    "docs/01_split_heads.md, \"Classic mistakes\"";

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_01_SPLIT_HEADS_SPLIT_HEADS_TEST_UTIL_H_
