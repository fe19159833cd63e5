// Public tests for lab 1. Run: bazel test //labs/01_split_heads/...
//
// The reference numbers in labs/01_split_heads/golden/ come from NumPy's
// reshape and transpose. Next to each one lies what a classic mistake
// computes on the same input, so a failure can say "looks like <the mistake>"
// (docs/01_split_heads.md, "Classic mistakes"). The shapes have no two axes
// of the same length, so a swapped axis cannot pass by accident. The grading
// tests check the same things on other shapes and seeds, and more.
#include "labs/01_split_heads/split_heads.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xview.hpp>

#include "common/testing/testing.h"
#include "labs/01_split_heads/split_heads_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::kExact;
using testing::kHeadAxes;
using testing::kRowAxes;

// The golden set of these tests; the grading tests run the same cases
// (labs/01_split_heads/split_heads_test_util.h) on a set of their own.
const std::string kGolden = "labs/01_split_heads/golden/";

TEST(SplitHeadsPublic, MatchesNumpyReshapeThenTranspose) {
  // T=3, d_model=10, 2 heads of d_head=5.
  testing::ExpectSplitHeadsMatchesGolden(kGolden, "split", /*n_heads=*/2);
}

TEST(SplitHeadsPublic, ProducesHeadsByTokensByDHead) {
  // T=5, d_model=6, 2 heads of d_head=3: the shape, and what each axis holds.
  testing::ExpectSplitHeadsAxesAreHeadsTokensAndColumns(5, 6, 2);
}

TEST(SplitHeadsPublic, HeadOneOwnsTheSecondBlockOfColumns) {
  // x[t][c] = 10*t + c, so every value says where it came from.
  Tensor2 x = {{0, 1, 2, 3}, {10, 11, 12, 13}, {20, 21, 22, 23}};  // (T=3, d_model=4)
  Tensor3 heads = split_heads(x, 2);                               // (2, 3, 2)
  Tensor2 head1 = xt::view(heads, 1, xt::all(), xt::all());
  Tensor2 expected = {{2, 3}, {12, 13}, {22, 23}};
  EXPECT_TRUE(AllClose(head1, expected, kExact, {"token", "column"}));
}

TEST(SplitHeadsPublic, RejectsDModelNotDivisibleByNHeads) {
  testing::ExpectSplitHeadsRejectsDModelNotDivisibleByNHeads();
}

TEST(SplitHeadsPublic, RejectsZeroHeads) { testing::ExpectSplitHeadsRejectsZeroHeads(); }

TEST(CombineHeadsPublic, MatchesNumpyTransposeThenReshape) {
  // 3 heads, T=2, d_head=4 -> (2, 12).
  testing::ExpectCombineHeadsMatchesGolden(kGolden);
}

TEST(CombineHeadsPublic, UndoesSplitHeads) {
  // NumPy's split of the golden x (T=3, d_model=10, 2 heads), then yours of another x.
  testing::ExpectCombineHeadsUndoesTheGoldenSplit(kGolden, "split");
  Tensor2 x = testing::RandomTensor2(4, 6, /*seed=*/1);
  EXPECT_TRUE(AllClose(combine_heads(split_heads(x, 3)), x, kExact, kRowAxes));
}

TEST(CombineHeadsPublic, RejectsZeroDHead) { testing::ExpectCombineHeadsRejectsZeroDHead(); }

}  // namespace
}  // namespace mha
