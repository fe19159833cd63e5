// Helpers and shared cases of lab 1's tests: the public tests here and the
// grading tests (in the instructors' repository) run the same checks, each on
// its own golden set (a folder of .npy files written by a golden generator),
// so that both name a classic mistake in the same words. The grading tests
// add cases of their own on top.
#ifndef MHA_LABS_01_SPLIT_HEADS_SPLIT_HEADS_TEST_UTIL_H_
#define MHA_LABS_01_SPLIT_HEADS_SPLIT_HEADS_TEST_UTIL_H_

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>

#include "common/testing/testing.h"
#include "labs/01_split_heads/split_heads.h"

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

// What a failed argument check says, named as data for the grader
// (common/testing/misconception.h): "bad arguments must throw ...; see
// docs/01_split_heads.md, "Classic mistakes"".
inline const MistakeTable kSplitHeadsArgumentMistakes(
    "docs/01_split_heads.md",
    {{"argument_checks", "bad arguments must throw std::invalid_argument naming the values"}});
inline const MistakeNote kSplitHeadsArgumentChecks =
    kSplitHeadsArgumentMistakes.Named("argument_checks");

// The axes of split_heads' result and of combine_heads' result, for messages.
inline const std::vector<std::string> kHeadAxes = {"head", "token", "column"};
inline const std::vector<std::string> kRowAxes = {"token", "column"};

// Shared cases. `golden` is a golden set's folder ("labs/01_split_heads/golden/").

// split_heads(<golden><name>_x.npy, n_heads) equals <name>_heads.npy (NumPy's
// reshape then transpose), or the failure names the mistake it looks like.
inline void ExpectSplitHeadsMatchesGolden(const std::string& golden, const std::string& name,
                                          int n_heads) {
  const Tensor2 x = LoadGolden<2>(golden + name + "_x.npy");  // (T, d_model)
  EXPECT_TRUE(MatchesGolden(split_heads(x, n_heads), golden + name + "_heads.npy", kExact,
                            kHeadAxes,
                            kSplitHeadsMistakes.Of(golden + name + "_heads", kSplitMistakeNames)));
}

// combine_heads(<golden>combine_heads_in.npy) equals combine_x.npy (NumPy's
// transpose then reshape).
inline void ExpectCombineHeadsMatchesGolden(const std::string& golden) {
  const Tensor3 heads = LoadGolden<3>(golden + "combine_heads_in.npy");  // (H, T, d_head)
  EXPECT_TRUE(MatchesGolden(combine_heads(heads), golden + "combine_x.npy", kExact, kRowAxes,
                            kCombineHeadsMistakes.Of(golden + "combine_x", kCombineMistakeNames)));
}

// split_heads of a (T, d_model) input whose every value says where it came
// from (x[t][c] = 100*t + c) has shape (n_heads, T, d_head), and each axis
// means what it says: axis 1 is the token, axis 0 the head's block of
// columns, axis 2 the column within the block. A result of the right shape
// whose numbers are not x's, or are x's in another order, fails.
inline void ExpectSplitHeadsAxesAreHeadsTokensAndColumns(std::size_t T, std::size_t d_model,
                                                         int n_heads) {
  Tensor2 x = xt::zeros<float>({T, d_model});
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t c = 0; c < d_model; ++c) x(t, c) = static_cast<float>(100 * t + c);
  const Tensor3 heads = split_heads(x, n_heads);
  const std::size_t H = static_cast<std::size_t>(n_heads), d_head = d_model / H;
  ASSERT_EQ(heads.dimension(), 3u);
  ASSERT_EQ(heads.shape(0), H) << kHeadsAxisZero;
  ASSERT_EQ(heads.shape(1), T) << kHeadsAxisOne;
  ASSERT_EQ(heads.shape(2), d_head) << kHeadsAxisTwo;
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t t = 0; t < T; ++t) {
      for (std::size_t c = 0; c < d_head; ++c) {
        const float v = heads(h, t, c);
        // The messages' values, built only when an assertion fails (gtest
        // evaluates what is streamed into a failing assertion alone).
        const auto element = [&] {
          return "[" + std::to_string(h) + ", " + std::to_string(t) + ", " +
                 std::to_string(c) + "]";
        };
        ASSERT_TRUE(std::isfinite(v) && v >= 0.0f && v < 100.0f * static_cast<float>(T))
            << Fill(kNoValueOfX, {{"element_index", element()},
                                  {"value", ::testing::PrintToString(v)}});
        const long label = std::lround(v);  // 100 * token + column
        const std::size_t token = static_cast<std::size_t>(label / 100),
                          column = static_cast<std::size_t>(label % 100);
        const auto at = [&] {
          return SentenceValues{
              {"element_index", element()},
              {"source_index", "[" + std::to_string(token) + ", " + std::to_string(column) + "]"},
              {"head", std::to_string(h)}};
        };
        ASSERT_EQ(token, t) << Fill(kWrongToken, at());
        ASSERT_EQ(column / d_head, h) << Fill(kWrongHead, at());
        ASSERT_EQ(column % d_head, c) << Fill(kWrongColumn, at());
      }
    }
  }
}

// combine_heads(<golden><name>_heads.npy), NumPy's split of <name>_x.npy,
// gives <name>_x.npy back: combine_heads undoes a split it did not make.
inline void ExpectCombineHeadsUndoesTheGoldenSplit(const std::string& golden,
                                                   const std::string& name) {
  const Tensor3 heads = LoadGolden<3>(golden + name + "_heads.npy");  // (H, T, d_head)
  EXPECT_TRUE(MatchesGolden(combine_heads(heads), golden + name + "_x.npy", kExact, kRowAxes))
      << kCombineUndoesSplit;
}

// The divisibility check comes first: without any check, n_heads = 0 divides
// by zero and ends the whole test program.
inline void ExpectSplitHeadsRejectsDModelNotDivisibleByNHeads() {
  const Tensor2 x = xt::zeros<float>({3, 10});
  EXPECT_TRUE(ThrowsInvalidArgument([&] { split_heads(x, 4); }, {"d_model=10", "n_heads=4"}))
      << kSplitHeadsArgumentChecks;
}

inline void ExpectSplitHeadsRejectsZeroHeads() {
  const Tensor2 x = xt::zeros<float>({3, 8});
  EXPECT_TRUE(ThrowsInvalidArgument([&] { split_heads(x, 0); }, {"n_heads=0"}))
      << kSplitHeadsArgumentChecks;
}

inline void ExpectCombineHeadsRejectsZeroDHead() {
  const Tensor3 heads = xt::zeros<float>({2, 3, 0});
  EXPECT_TRUE(ThrowsInvalidArgument([&] { combine_heads(heads); }, {"d_head=0"}))
      << kSplitHeadsArgumentChecks;
}

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_01_SPLIT_HEADS_SPLIT_HEADS_TEST_UTIL_H_
