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

using testing::KnownMistake;
using testing::kFlashAttentionMistakes;
using testing::LoadGolden;
using testing::MatchesGolden;
using testing::kAttention;
using testing::kExact;
using testing::TileCountMessage;
using Inputs = testing::AttentionInputs;

const std::string kGolden = "labs/09_flash_attention/golden/";

std::string Golden(const std::string& name) { return kGolden + name + ".npy"; }

// The known mistakes `names` of golden `output` (flash_attention_test_util.h).
std::vector<KnownMistake> Mistakes(const std::string& output,
                                   const std::vector<std::string>& names) {
  return kFlashAttentionMistakes.Of(kGolden + output, names);
}

// q (H, T, d_head), k and v (H, S, d_head), and the (T, S) mask of a masked case.
Inputs Load(const std::string& name, bool masked) {
  return testing::LoadAttentionInputs(kGolden, name, masked ? name : "");
}

const std::vector<std::string> kAxes = {"head", "query", "column"};

// ---------------------------------------------------------------- attention_tiled

// masked: H=2, T=11, S=13, d_head=6; query 0 sees no key, query 1's first
// key block (keys 0-4) is fully masked, query 2 sees only the last key.
TEST(AttentionTiledPublic, MatchesBatchedAttentionWithBlocksThatDivideNeitherTNorS) {
  const Inputs in = Load("masked", /*masked=*/true);
  EXPECT_TRUE(MatchesGolden(
      attention_tiled(in.q, in.k, in.v, in.mask, /*block_q=*/4, /*block_k=*/5),
      Golden("masked_output"), kAttention, kAxes,
      Mistakes("masked_output", {"no_rescale", "output_not_rescaled", "divide_per_block",
                                 "nan_first_block_masked", "remainder_dropped"})));
}

TEST(AttentionTiledPublic, AQueryThatSeesNoKeyGetsAZeroRowAndNoRowIsNaN) {
  const Inputs in = Load("masked", /*masked=*/true);
  const Tensor3 out = attention_tiled(in.q, in.k, in.v, in.mask, 4, 5);  // (H, T, d_head)
  EXPECT_TRUE(xt::all(xt::isfinite(out)))
      << "the output has NaN or inf: "
      << kFlashAttentionMistakes.Message("nan_first_block_masked");
  const Tensor3 query_0 = xt::view(out, xt::all(), xt::range(0, 1), xt::all());
  EXPECT_TRUE(testing::AllClose(query_0, xt::zeros<float>({2, 1, 6}), kExact, kAxes))
      << "query 0 may see no key: its output row must be all zeros";
}

TEST(AttentionTiledPublic, BlocksOfOneQueryAndOneKeyGiveTheSameNumbers) {
  const Inputs in = Load("masked", /*masked=*/true);
  EXPECT_TRUE(MatchesGolden(attention_tiled(in.q, in.k, in.v, in.mask, 1, 1),
                            Golden("masked_output"), kAttention, kAxes));
}

TEST(AttentionTiledPublic, BlocksLargerThanTAndSGiveTheSameNumbers) {
  const Inputs in = Load("masked", /*masked=*/true);
  EXPECT_TRUE(MatchesGolden(attention_tiled(in.q, in.k, in.v, in.mask, 64, 100),
                            Golden("masked_output"), kAttention, kAxes));
}

// overflow: H=2, T=9, S=16, d_head=4, scores in the hundreds (exp overflows
// float32 above ~88); queries 3 and 6 see only scores below -150.
TEST(AttentionTiledPublic, ScoresInTheHundredsNeitherOverflowNorUnderflow) {
  const Inputs in = Load("overflow", /*masked=*/false);
  EXPECT_TRUE(MatchesGolden(
      attention_tiled(in.q, in.k, in.v, std::nullopt, /*block_q=*/3, /*block_k=*/5),
      Golden("overflow_output"), kAttention, kAxes,
      Mistakes("overflow_output", {"max_init_zero", "no_rescale", "output_not_rescaled",
                                   "divide_per_block", "remainder_dropped"})));
}

TEST(AttentionTiledPublic, RejectsABlockSizeBelowOne) {
  const Inputs in = Load("masked", /*masked=*/true);
  EXPECT_TRUE(testing::ThrowsInvalidArgument(
      [&] { attention_tiled(in.q, in.k, in.v, in.mask, 4, 0); }, {"block_k=0"}));
}

// ---------------------------------------------------------------- attention_tiled_causal

// causal: H=2, T=7 queries, S=12 keys: query i sees keys j <= 5 + i.
TEST(AttentionTiledCausalPublic, MatchesBottomRightCausalAttentionWhenSExceedsT) {
  const Inputs in = Load("causal", /*masked=*/false);
  EXPECT_TRUE(MatchesGolden(
      attention_tiled_causal(in.q, in.k, in.v, /*block_q=*/3, /*block_k=*/5),
      Golden("causal_output"), kAttention, kAxes,
      Mistakes("causal_output", {"top_left_causal", "causal_skip_off_by_one", "no_rescale",
                                 "output_not_rescaled", "divide_per_block"})));
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
