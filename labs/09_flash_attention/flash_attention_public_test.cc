// Public tests for lab 9. Run: bazel test //labs/09_flash_attention/...
//
// Expected outputs are what lab 2's attention_batched must return on the same
// inputs (PyTorch in float64, tests/09_flash_attention/gen_goldens.py in the
// instructors' repository); the
// *_mistake_* files hold what a classic mistake of the tiled loop computes,
// so a failure can name it. The grading tests check more (other shapes and
// seeds, every block size, fresh random inputs, a sequence too long for the
// score matrix to fit in memory); passing here is a good start.
#include "labs/09_flash_attention/flash_attention.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include "common/testing/testing.h"
#include "labs/09_flash_attention/flash_attention_test_util.h"

namespace mha {
namespace {

using testing::ExpectTiledMatchesGolden;
using testing::TileCountMessage;

// The golden set of these tests; the grading tests run the same cases
// (labs/09_flash_attention/flash_attention_test_util.h) on a set of their own.
const std::string kGolden = "labs/09_flash_attention/golden/";

// ---------------------------------------------------------------- attention_tiled

// masked: H=2, T=11, S=13, d_head=6; query 0 sees no key, query 1's first
// key block (keys 0-4) is fully masked, query 2 sees only the last key.
TEST(AttentionTiledPublic, MatchesBatchedAttentionWithBlocksThatDivideNeitherTNorS) {
  ExpectTiledMatchesGolden(kGolden, "masked", /*masked=*/true, /*block_q=*/4, /*block_k=*/5,
                           {"no_rescale", "output_not_rescaled", "divide_per_block",
                            "nan_first_block_masked", "remainder_dropped"});
}

TEST(AttentionTiledPublic, AQueryThatSeesNoKeyGetsAZeroRowAndNoRowIsNaN) {
  testing::ExpectQueriesThatSeeNoKeyGetZeroRows(kGolden, 4, 5, /*empty_rows=*/{0});
}

TEST(AttentionTiledPublic, BlocksOfOneQueryAndOneKeyGiveTheSameNumbers) {
  ExpectTiledMatchesGolden(kGolden, "masked", /*masked=*/true, 1, 1);
}

TEST(AttentionTiledPublic, BlocksLargerThanTAndSGiveTheSameNumbers) {
  ExpectTiledMatchesGolden(kGolden, "masked", /*masked=*/true, 64, 100);
}

// overflow: H=2, T=9, S=16, d_head=4, scores in the hundreds (exp overflows
// float32 above ~88); queries 3 and 6 see only scores below -150.
TEST(AttentionTiledPublic, ScoresInTheHundredsNeitherOverflowNorUnderflow) {
  ExpectTiledMatchesGolden(kGolden, "overflow", /*masked=*/false, /*block_q=*/3, /*block_k=*/5,
                           {"max_init_zero", "no_rescale", "output_not_rescaled",
                            "divide_per_block", "remainder_dropped"});
}

TEST(AttentionTiledPublic, RejectsABlockSizeBelowOne) {
  const testing::AttentionInputs in = testing::LoadAttentionInputs(kGolden, "masked", "masked");
  EXPECT_TRUE(testing::ThrowsInvalidArgument(
      [&] { attention_tiled(in.q, in.k, in.v, in.mask, 4, 0); }, {"block_k=0"}));
}

// ---------------------------------------------------------------- attention_tiled_causal

// causal: H=2, T=7 queries, S=12 keys: query i sees keys j <= 5 + i.
TEST(AttentionTiledCausalPublic, MatchesBottomRightCausalAttentionWhenSExceedsT) {
  testing::ExpectTiledCausalMatchesGolden(
      kGolden, "causal", /*block_q=*/3, /*block_k=*/5,
      {"top_left_causal", "causal_skip_off_by_one", "no_rescale", "output_not_rescaled",
       "divide_per_block"});
}

// ---------------------------------------------------------------- causal_tiles_computed

TEST(CausalTilesComputedPublic, SkipsEveryKeyBlockInTheFutureOfItsQueryBlock) {
  // T = S = 10, blocks of 4: query blocks [0,4) [4,8) [8,10) need 1, 2 and 3
  // key blocks (the last key block, [8, 10), is the diagonal one).
  const std::size_t n = causal_tiles_computed(10, 10, 4, 4);
  EXPECT_EQ(n, 6u) << TileCountMessage(10, 10, 4, 4, n);
}

TEST(CausalTilesComputedPublic, CountsFromTheBottomRightWhenSExceedsT) {
  // T = 7, S = 12: query i sees keys j <= 5 + i. Query blocks of 3 end at
  // queries 2, 5, 6, which see 8, 11 and 12 keys: 2 + 3 + 3 key blocks of 4.
  const std::size_t n = causal_tiles_computed(7, 12, 3, 4);
  EXPECT_EQ(n, 8u) << TileCountMessage(7, 12, 3, 4, n);
}

TEST(CausalTilesComputedPublic, RejectsFewerKeysThanQueries) {
  // Causal queries are the last T of S positions: S < T cannot happen.
  EXPECT_TRUE(testing::ThrowsInvalidArgument([] { causal_tiles_computed(5, 3, 2, 2); },
                                             {"S=3", "T=5"}))
      << "causal_tiles_computed must reject S < T, as lab 4's causal_mask(T, S) does";
}

}  // namespace
}  // namespace mha
