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

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include "common/testing.h"

namespace mha {
namespace {

using testing::KnownMistake;
using testing::LoadGolden;
using testing::MatchesGolden;
using testing::kAttention;
using testing::kExact;

const char kSeeDoc[] = "; see docs/09_flash_attention.md, \"Classic mistakes\"";

std::string Golden(const std::string& name) {
  return "labs/09_flash_attention/golden/" + name + ".npy";
}

// Generator suffix -> what a learner should read.
std::string MistakeMessage(const std::string& suffix) {
  std::string what;
  if (suffix == "no_rescale") {
    what = "the running sum and output were not rescaled by exp(m_old - m_new) when the max grew";
  } else if (suffix == "output_not_rescaled") {
    what = "the running sum was rescaled when the max grew, but the running output was not";
  } else if (suffix == "divide_per_block") {
    what = "each block's output was divided by the running sum inside the loop instead of "
           "once at the end";
  } else if (suffix == "max_init_zero") {
    what = "the running max started at 0 instead of -inf, so a row whose scores are all far "
           "below 0 underflowed to zero";
  } else if (suffix == "nan_first_block_masked") {
    what = "a row whose first key block is fully masked became NaN (exp(-inf - (-inf)) is NaN)";
  } else if (suffix == "remainder_dropped") {
    what = "the last, shorter key block was dropped (block_k does not divide S)";
  } else if (suffix == "causal_skip_off_by_one") {
    what = "the causal skip is off by one block: the diagonal key block, partly visible, was "
           "skipped";
  } else if (suffix == "top_left_causal") {
    what = "the causal mask is aligned top-left (query i sees keys j <= i) instead of "
           "bottom-right (j <= S - T + i)";
  } else {
    what = suffix;
  }
  return what + kSeeDoc;
}

std::vector<KnownMistake> Mistakes(const std::string& output,
                                   const std::vector<std::string>& suffixes) {
  std::vector<KnownMistake> out;
  for (const std::string& s : suffixes) {
    out.push_back({Golden(output + "_mistake_" + s), MistakeMessage(s)});
  }
  return out;
}

struct Inputs {
  Tensor3 q, k, v;               // (H, T, d_head), (H, S, d_head), (H, S, d_head)
  std::optional<Tensor2> mask;   // (T, S)
};

Inputs Load(const std::string& name, bool masked) {
  Inputs in{LoadGolden<3>(Golden(name + "_q")), LoadGolden<3>(Golden(name + "_k")),
            LoadGolden<3>(Golden(name + "_v")), std::nullopt};
  if (masked) in.mask = LoadGolden<2>(Golden(name + "_mask"));
  return in;
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
      << "the output has NaN or inf: " << MistakeMessage("nan_first_block_masked");
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

// What the count would be with each mistake, so a failure can name it.
// Every (query block, key block) tile: nothing skipped.
std::size_t AllTiles(int T, int S, int bq, int bk) {
  return static_cast<std::size_t>((T + bq - 1) / bq) * static_cast<std::size_t>((S + bk - 1) / bk);
}
// Key blocks per query block when the last query's visible keys [0, visible)
// are rounded down to whole blocks, or counted from position i (top-left).
std::size_t MistakenTiles(int T, int S, int bq, int bk, bool floor_blocks, bool top_left) {
  std::size_t tiles = 0;
  for (int i0 = 0; i0 < T; i0 += bq) {
    const int last_query = std::min(i0 + bq, T) - 1;
    const int visible = (top_left ? last_query : S - T + last_query) + 1;
    tiles += static_cast<std::size_t>(floor_blocks ? visible / bk : (visible + bk - 1) / bk);
  }
  return tiles;
}

std::string CountMessage(int T, int S, int bq, int bk, std::size_t actual) {
  if (actual == AllTiles(T, S, bq, bk)) {
    return "looks like no key block was skipped: every tile was counted" + std::string(kSeeDoc);
  }
  if (actual == MistakenTiles(T, S, bq, bk, /*floor_blocks=*/true, /*top_left=*/false)) {
    return "looks like " + MistakeMessage("causal_skip_off_by_one");
  }
  if (actual == MistakenTiles(T, S, bq, bk, /*floor_blocks=*/false, /*top_left=*/true)) {
    return "looks like " + MistakeMessage("top_left_causal");
  }
  return "see docs/09_flash_attention.md, \"Which tiles a causal query block needs\"";
}

TEST(CausalTilesComputedPublic, SkipsEveryKeyBlockInTheFutureOfItsQueryBlock) {
  // T = S = 10, blocks of 4: query blocks [0,4) [4,8) [8,10) need 1, 2 and 3
  // key blocks (the last key block, [8, 10), is the diagonal one).
  const std::size_t n = causal_tiles_computed(10, 10, 4, 4);
  EXPECT_EQ(n, 6u) << CountMessage(10, 10, 4, 4, n);
}

TEST(CausalTilesComputedPublic, CountsFromTheBottomRightWhenSExceedsT) {
  // T = 7, S = 12: query i sees keys j <= 5 + i. Query blocks of 3 end at
  // queries 2, 5, 6, which see 8, 11 and 12 keys: 2 + 3 + 3 key blocks of 4.
  const std::size_t n = causal_tiles_computed(7, 12, 3, 4);
  EXPECT_EQ(n, 8u) << CountMessage(7, 12, 3, 4, n);
}

TEST(CausalTilesComputedPublic, RejectsFewerKeysThanQueries) {
  // Causal queries are the last T of S positions: S < T cannot happen.
  EXPECT_TRUE(testing::ThrowsInvalidArgument([] { causal_tiles_computed(5, 3, 2, 2); },
                                             {"S=3", "T=5"}))
      << "causal_tiles_computed must reject S < T, as lab 4's causal_mask(T, S) does";
}

}  // namespace
}  // namespace mha
