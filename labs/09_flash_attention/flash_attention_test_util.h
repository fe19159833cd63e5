// Helpers and shared cases of lab 9's tests: the public tests here and the
// grading tests (in the instructors' repository) run the same checks, each on
// its own golden set (a folder of .npy files written by a golden generator),
// and name each classic mistake of the tiled loop, and of the tile count, in
// the same words. The grading tests add cases of their own on top.
//
//   MatchesGolden(attention_tiled(q, k, v, mask, 4, 5), dir + "masked_output.npy", kAttention,
//                 axes, kFlashAttentionMistakes.Of(dir + "masked_output", {"no_rescale"}));
#ifndef MHA_LABS_09_FLASH_ATTENTION_FLASH_ATTENTION_TEST_UTIL_H_
#define MHA_LABS_09_FLASH_ATTENTION_FLASH_ATTENTION_TEST_UTIL_H_

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include "common/testing/testing.h"
#include "labs/09_flash_attention/flash_attention.h"

namespace mha {
namespace testing {

// The classic mistakes of docs/09_flash_attention.md, by the names the golden
// generator gives what each one computes (<case>_output_mistake_<name>.npy).
inline const MistakeTable kFlashAttentionMistakes(
    "docs/09_flash_attention.md",
    {
        {"no_rescale",
         "the running sum and output were not rescaled by exp(m_old - m_new) when the max grew"},
        {"output_not_rescaled",
         "the running sum was rescaled when the max grew, but the running output was not"},
        {"divide_per_block",
         "each block's output was divided by the running sum inside the loop instead of once at "
         "the end"},
        {"max_init_zero",
         "the running max started at 0 instead of -inf, so a row whose scores are all far below "
         "0 underflowed to zero"},
        {"nan_first_block_masked",
         "a row whose first key block is fully masked became NaN (exp(-inf - (-inf)) is NaN)"},
        {"no_block_skipped", "no key block was skipped: every tile was counted"},
        {"remainder_dropped",
         "the last, shorter key block was dropped (block_k does not divide S)"},
        {"causal_skip_off_by_one",
         "the causal skip is off by one block: the diagonal key block, partly visible, was "
         "skipped"},
        {"top_left_causal",
         "the causal mask is aligned top-left (query i sees keys j <= i) instead of "
         "bottom-right (j <= S - T + i)"},
    });

// What causal_tiles_computed would count with each mistake, so a failure can
// name it. Every (query block, key block) tile: nothing skipped.
inline std::size_t AllTiles(int T, int S, int bq, int bk) {
  return static_cast<std::size_t>((T + bq - 1) / bq) * static_cast<std::size_t>((S + bk - 1) / bk);
}

// Key blocks per query block when the last query's visible keys [0, visible)
// are rounded down to whole blocks, or counted from position i (top-left).
inline std::size_t MistakenTiles(int T, int S, int bq, int bk, bool floor_blocks, bool top_left) {
  std::size_t tiles = 0;
  for (int i0 = 0; i0 < T; i0 += bq) {
    const int last_query = std::min(i0 + bq, T) - 1;
    const int visible = (top_left ? last_query : S - T + last_query) + 1;
    tiles += static_cast<std::size_t>(floor_blocks ? visible / bk : (visible + bk - 1) / bk);
  }
  return tiles;
}

// What a wrong count `actual` of causal_tiles_computed(T, S, bq, bk) says
// (streamed after the check: a mistake it recognises is recorded too).
inline MistakeNote TileCountMessage(int T, int S, int bq, int bk, std::size_t actual) {
  if (actual == AllTiles(T, S, bq, bk)) {
    return kFlashAttentionMistakes.LooksLike("no_block_skipped");
  }
  if (actual == MistakenTiles(T, S, bq, bk, /*floor_blocks=*/true, /*top_left=*/false)) {
    return kFlashAttentionMistakes.LooksLike("causal_skip_off_by_one");
  }
  if (actual == MistakenTiles(T, S, bq, bk, /*floor_blocks=*/false, /*top_left=*/true)) {
    return kFlashAttentionMistakes.LooksLike("top_left_causal");
  }
  return MistakeNote(
      {}, "see docs/09_flash_attention.md, \"Which tiles a causal query block needs\"");
}

inline const std::vector<std::string> kFlashAxes = {"head", "query", "column"};

// Shared cases. `golden` is a golden set's folder ("labs/09_flash_attention/golden/");
// a case `name` is its files <name>_q.npy, _k.npy, _v.npy (and _mask.npy when
// masked) and <name>_output.npy.

// attention_tiled on case `name` with blocks (block_q, block_k) equals
// <name>_output.npy; a failure names the first of `mistakes` it looks like.
inline void ExpectTiledMatchesGolden(const std::string& golden, const std::string& name,
                                     bool masked, int block_q, int block_k,
                                     const std::vector<std::string>& mistakes = {}) {
  const AttentionInputs in = LoadAttentionInputs(golden, name, masked ? name : "");
  const std::string output = golden + name + "_output";
  EXPECT_TRUE(MatchesGolden(attention_tiled(in.q, in.k, in.v, in.mask, block_q, block_k),
                            output + ".npy", kAttention, kFlashAxes,
                            kFlashAttentionMistakes.Of(output, mistakes)));
}

// attention_tiled_causal on case `name` (no mask file: the causal mask is the
// function's own) equals <name>_output.npy.
inline void ExpectTiledCausalMatchesGolden(const std::string& golden, const std::string& name,
                                           int block_q, int block_k,
                                           const std::vector<std::string>& mistakes = {}) {
  const AttentionInputs in = LoadAttentionInputs(golden, name, "");
  const std::string output = golden + name + "_output";
  EXPECT_TRUE(MatchesGolden(attention_tiled_causal(in.q, in.k, in.v, block_q, block_k),
                            output + ".npy", kAttention, kFlashAxes,
                            kFlashAttentionMistakes.Of(output, mistakes)));
}

// On the masked case "masked", nothing attention_tiled returns with blocks
// (block_q, block_k) is NaN or inf, and each query of `empty_rows` (which
// sees no key) gets a row of zeros, while the other rows are the golden ones
// (an output of zeros everywhere has the zero rows too).
inline void ExpectQueriesThatSeeNoKeyGetZeroRows(const std::string& golden, int block_q,
                                                 int block_k, const std::vector<int>& empty_rows) {
  const AttentionInputs in = LoadAttentionInputs(golden, "masked", "masked");
  const Tensor3 out = attention_tiled(in.q, in.k, in.v, in.mask, block_q, block_k);  // (H, T, d)
  EXPECT_TRUE(xt::all(xt::isfinite(out)))
      << "the output has NaN or inf: " << kFlashAttentionMistakes.Named("nan_first_block_masked");
  const Tensor3 zeros = xt::zeros<float>({out.shape(0), std::size_t{1}, out.shape(2)});
  for (int row : empty_rows) {
    const Tensor3 got = xt::view(out, xt::all(), xt::range(row, row + 1), xt::all());
    EXPECT_TRUE(AllClose(got, zeros, kExact, kFlashAxes))
        << "query " << row << " may see no key: its output row must be all zeros";
  }
  EXPECT_TRUE(MatchesGolden(out, golden + "masked_output.npy", kAttention, kFlashAxes))
      << "the rows of the queries that see a key";
}

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_09_FLASH_ATTENTION_FLASH_ATTENTION_TEST_UTIL_H_
