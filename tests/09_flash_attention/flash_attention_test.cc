// Hidden tests for lab 9: attention_tiled, attention_tiled_causal and
// causal_tiles_computed.
//
// Expected outputs are what lab 2's attention_batched must return on the same
// inputs: PyTorch in float64 (tests/09_flash_attention/gen_goldens.py), on
// shapes other than the public ones (H=3, T=17, S=29, d_head=5; scores in
// the hundreds; S > T). Each case runs at many block sizes: 1, sizes that
// divide T or S and sizes that do not, sizes larger than T and S. The
// *_mistake_* goldens hold what a classic mistake computes at the case's main
// block sizes, so a failure can name it. Besides: fresh random inputs against
// a plain-loop reference (tests/common/naive.h), tile counts against a brute-force
// count, every bad argument, and one sequence whose score matrix does not fit
// in the grader's memory limit.
#include "labs/09_flash_attention/flash_attention.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <new>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include "tests/common/naive.h"
#include "common/programs/process_memory.h"
#include "common/testing/testing.h"
#include "labs/09_flash_attention/flash_attention_test_util.h"

namespace mha {
namespace {

using testing::ExpectTiledCausalMatchesGolden;
using testing::ExpectTiledMatchesGolden;
using testing::LoadGolden;
using testing::MatchesGolden;
using testing::ThrowsInvalidArgument;
using testing::kAttention;
using testing::kExact;
using testing::TileCountMessage;
using Inputs = testing::AttentionInputs;

constexpr float kInf = std::numeric_limits<float>::infinity();
// What only the memory tests can tell, named as data for the grader
// (common/testing/misconception.h).
const testing::MistakeTable kMemoryMistakes(
    "docs/09_flash_attention.md",
    {
        {"materialised_scores", "it materialises the (T, S) score matrix"},
        {"materialised_causal",
         "it builds the (T, S) causal mask or materialises the (T, S) score matrix"},
    });
const std::vector<std::string>& kAxes = testing::kFlashAxes;

// The golden set of the grading tests: the public tests' cases
// (labs/09_flash_attention/flash_attention_test_util.h) run on it, and the
// cases below are the grading tests' own.
const std::string kGolden = "tests/09_flash_attention/golden/";

// q (H, T, d_head), k and v (H, S, d_head), and the (T, S) mask of a masked case.
Inputs Load(const std::string& name, bool masked) {
  return testing::LoadAttentionInputs(kGolden, name, masked ? name : "");
}

using Blocks = std::pair<int, int>;  // (block_q, block_k)

std::string BlocksString(const Blocks& b) {
  return "block_q=" + std::to_string(b.first) + " block_k=" + std::to_string(b.second);
}

const std::vector<std::string> kLoopMistakes = {"no_rescale", "output_not_rescaled",
                                                "divide_per_block", "remainder_dropped"};

// ---------------------------------------------------------------- attention_tiled

// cross: H=3, T=17 queries, S=29 keys, d_head=5, no mask. Main blocks 5 x 7.
TEST(AttentionTiled, CrossAttentionMatchesBatchedAttention) {
  ExpectTiledMatchesGolden(kGolden, "cross", false, 5, 7, kLoopMistakes);
}

TEST(AttentionTiled, EveryBlockShapeGivesTheSameNumbers) {
  // 1, sizes that divide T = 17 or S = 29 and sizes that do not, and sizes
  // larger than both.
  for (int bq : {1, 2, 4, 16, 17, 40}) {
    for (int bk : {1, 3, 8, 29, 64}) {
      SCOPED_TRACE(BlocksString({bq, bk}));
      ExpectTiledMatchesGolden(kGolden, "cross", false, bq, bk);
    }
  }
}

// masked: H=3, T=17, S=29, d_head=5; queries 0 and 4 see no key, queries 1
// and 9 see no key among keys 0-7 (the whole first key block for block_k <= 8),
// query 2 sees only the last key. Main blocks 6 x 7.
TEST(AttentionTiled, MaskedAttentionMatchesIncludingRowsWhoseFirstKeyBlockIsMasked) {
  ExpectTiledMatchesGolden(kGolden, "masked", true, 6, 7,
                           {"no_rescale", "output_not_rescaled", "divide_per_block",
                            "nan_first_block_masked", "remainder_dropped"});
}

TEST(AttentionTiled, MaskedAttentionMatchesAtOtherBlockShapes) {
  for (const Blocks& b : std::vector<Blocks>{{1, 1}, {4, 8}, {3, 2}, {17, 29}, {5, 100}}) {
    SCOPED_TRACE(BlocksString(b));
    ExpectTiledMatchesGolden(kGolden, "masked", true, b.first, b.second);
  }
}

TEST(AttentionTiled, QueriesThatSeeNoKeyGetZeroRowsAndNothingIsNaN) {
  for (const Blocks& b : std::vector<Blocks>{{6, 7}, {1, 1}, {2, 8}}) {
    SCOPED_TRACE(BlocksString(b));
    testing::ExpectQueriesThatSeeNoKeyGetZeroRows(kGolden, b.first, b.second, {0, 4});
  }
}

// overflow: H=2, T=12, S=23, d_head=16, scores in the hundreds; queries 2, 7
// and 11 see only scores below -150. Main blocks 4 x 6.
TEST(AttentionTiled, ScoresInTheHundredsMatchWithoutOverflowOrUnderflow) {
  ExpectTiledMatchesGolden(kGolden, "overflow", false, 4, 6,
                           {"max_init_zero", "no_rescale", "output_not_rescaled",
                            "divide_per_block", "remainder_dropped"});
}

TEST(AttentionTiled, ScoresInTheHundredsMatchAtOtherBlockShapes) {
  for (const Blocks& b : std::vector<Blocks>{{1, 1}, {12, 23}, {5, 100}, {3, 4}}) {
    SCOPED_TRACE(BlocksString(b));
    ExpectTiledMatchesGolden(kGolden, "overflow", false, b.first, b.second, {"max_init_zero"});
  }
}

// Fresh random shapes, block sizes, inputs and mask, against plain loops in
// double (tests/common/naive.h): no file can hold the answer.
TEST(AttentionTiled, MatchesAPlainLoopReferenceOnFreshRandomInputs) {
  testing::FreshDraws gen;
  for (int round = 0; round < 4; ++round) {
    const std::size_t H = gen.Pick(1, 3), T = gen.Pick(1, 40), S = gen.Pick(1, 60),
                      d = gen.Pick(1, 9);
    const int bq = gen.Pick(1, 2 * static_cast<int>(T) + 1);
    const int bk = gen.Pick(1, 2 * static_cast<int>(S) + 1);
    SCOPED_TRACE("H=" + std::to_string(H) + " T=" + std::to_string(T) + " S=" +
                 std::to_string(S) + " d_head=" + std::to_string(d) + " " +
                 BlocksString({bq, bk}));
    const auto s = static_cast<std::uint32_t>(gen());
    const Tensor3 q = testing::RandomTensor3(H, T, d, s, 2.0f);      // (H, T, d_head)
    const Tensor3 k = testing::RandomTensor3(H, S, d, s + 1, 2.0f);  // (H, S, d_head)
    const Tensor3 v = testing::RandomTensor3(H, S, d, s + 2);        // (H, S, d_head)
    Tensor2 mask = xt::zeros<float>({T, S});                          // (T, S)
    std::bernoulli_distribution hidden(0.3);
    for (float& m : mask) m = hidden(gen) ? -kInf : 0.0f;
    const std::size_t empty_row = static_cast<std::size_t>(gen.Pick(0, static_cast<int>(T) - 1));
    for (std::size_t j = 0; j < S; ++j) mask(empty_row, j) = -kInf;
    const Tensor3 expected = naive::ScaledDotProduct(q, k, v, mask).output;
    EXPECT_TRUE(testing::AllClose(attention_tiled(q, k, v, mask, bq, bk), expected, kAttention,
                                  kAxes));
  }
}

// ---------------------------------------------------------------- attention_tiled_causal

// causal_cross: H=2, T=9 queries, S=26 keys (query i sees keys j <= 17 + i),
// d_head=4. Main blocks 4 x 6.
TEST(AttentionTiledCausal, MatchesBottomRightCausalAttentionWhenSExceedsT) {
  ExpectTiledCausalMatchesGolden(kGolden, "causal_cross", 4, 6,
                                 {"top_left_causal", "causal_skip_off_by_one", "no_rescale",
                                  "output_not_rescaled", "divide_per_block"});
}

TEST(AttentionTiledCausal, EveryBlockShapeGivesTheSameNumbersWhenSExceedsT) {
  for (const Blocks& b :
       std::vector<Blocks>{{1, 1}, {9, 26}, {2, 100}, {5, 3}, {3, 13}, {100, 7}}) {
    SCOPED_TRACE(BlocksString(b));
    ExpectTiledCausalMatchesGolden(kGolden, "causal_cross", b.first, b.second,
                                   {"top_left_causal"});
  }
}

// causal_self: H=2, T=S=21, d_head=6. Main blocks 8 x 5.
TEST(AttentionTiledCausal, MatchesCausalSelfAttention) {
  ExpectTiledCausalMatchesGolden(kGolden, "causal_self", 8, 5,
                                 {"causal_skip_off_by_one", "no_rescale", "output_not_rescaled",
                                  "divide_per_block"});
}

TEST(AttentionTiledCausal, EveryBlockShapeGivesTheSameNumbersInSelfAttention) {
  for (const Blocks& b : std::vector<Blocks>{{1, 1}, {3, 3}, {21, 21}, {1, 7}, {7, 1}, {4, 64}}) {
    SCOPED_TRACE(BlocksString(b));
    ExpectTiledCausalMatchesGolden(kGolden, "causal_self", b.first, b.second);
  }
}

TEST(AttentionTiledCausal, MatchesAPlainLoopReferenceOnFreshRandomInputs) {
  testing::FreshDraws gen;
  for (int round = 0; round < 4; ++round) {
    const int T = gen.Pick(1, 40), S = T + gen.Pick(0, 30);
    const std::size_t H = gen.Pick(1, 3), d = gen.Pick(1, 9);
    const int bq = gen.Pick(1, 2 * T + 1), bk = gen.Pick(1, 2 * S + 1);
    SCOPED_TRACE("H=" + std::to_string(H) + " T=" + std::to_string(T) + " S=" +
                 std::to_string(S) + " d_head=" + std::to_string(d) + " " +
                 BlocksString({bq, bk}));
    const auto s = static_cast<std::uint32_t>(gen());
    const Tensor3 q = testing::RandomTensor3(H, T, d, s, 2.0f);
    const Tensor3 k = testing::RandomTensor3(H, S, d, s + 1, 2.0f);
    const Tensor3 v = testing::RandomTensor3(H, S, d, s + 2);
    const Tensor3 expected = naive::ScaledDotProduct(q, k, v, naive::CausalMask(T, S)).output;
    EXPECT_TRUE(testing::AllClose(attention_tiled_causal(q, k, v, bq, bk), expected, kAttention,
                                  kAxes));
  }
}

// ---------------------------------------------------------------- causal_tiles_computed

// Tiles holding at least one (query i, key j) pair with j <= S - T + i,
// found by looking at every pair: what a causal loop cannot skip.
std::size_t BruteForceTiles(int T, int S, int bq, int bk) {
  std::size_t tiles = 0;
  for (int i0 = 0; i0 < T; i0 += bq) {
    for (int j0 = 0; j0 < S; j0 += bk) {
      bool visible = false;
      for (int i = i0; i < std::min(i0 + bq, T) && !visible; ++i) {
        for (int j = j0; j < std::min(j0 + bk, S) && !visible; ++j) visible = j <= S - T + i;
      }
      tiles += visible ? 1 : 0;
    }
  }
  return tiles;
}

TEST(CausalTilesComputed, EqualsABruteForceCountOfTilesWithAVisibleKey) {
  for (int T : {1, 5, 16, 33}) {
    for (int S : {T, T + 1, T + 7, 3 * T + 2}) {
      for (int bq : {1, 3, 8, 64}) {
        for (int bk : {1, 4, 5, 64}) {
          const std::size_t n = causal_tiles_computed(T, S, bq, bk);
          EXPECT_EQ(n, BruteForceTiles(T, S, bq, bk))
              << "T=" << T << " S=" << S << " " << BlocksString({bq, bk}) << ": "
              << TileCountMessage(T, S, bq, bk, n);
        }
      }
    }
  }
}

TEST(CausalTilesComputed, SkipsNearlyHalfTheTilesOfALongSequence) {
  // T = S = 4096 in blocks of 64: 64 x 64 tiles, of which the 64 * 65 / 2 on
  // or below the diagonal are needed.
  const std::size_t n = causal_tiles_computed(4096, 4096, 64, 64);
  EXPECT_EQ(n, 2080u) << TileCountMessage(4096, 4096, 64, 64, n);
}

// ---------------------------------------------------------------- bad arguments

TEST(AttentionTiledArguments, RejectsBlockSizesBelowOneNamingThem) {
  const Inputs in = Load("cross", false);
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { attention_tiled(in.q, in.k, in.v, std::nullopt, 0, 7); }, {"block_q=0"}));
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { attention_tiled(in.q, in.k, in.v, std::nullopt, 5, -2); }, {"block_k=-2"}));
  EXPECT_TRUE(ThrowsInvalidArgument([&] { attention_tiled_causal(in.q, in.q, in.q, -1, 4); },
                                    {"block_q=-1"}));
  EXPECT_TRUE(ThrowsInvalidArgument([&] { attention_tiled_causal(in.q, in.q, in.q, 4, 0); },
                                    {"block_k=0"}));
}

TEST(AttentionTiledArguments, RejectsMismatchedShapesNamingThem) {
  const Tensor3 q = testing::RandomTensor3(2, 3, 4, 1);  // (H=2, T=3, d_head=4)
  const Tensor3 k = testing::RandomTensor3(2, 5, 4, 2);  // (H=2, S=5, d_head=4)
  const Tensor3 three_heads = testing::RandomTensor3(3, 5, 4, 3);
  const Tensor3 wide = testing::RandomTensor3(2, 5, 6, 4);
  const Tensor3 six_keys = testing::RandomTensor3(2, 6, 4, 5);
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { attention_tiled(q, three_heads, three_heads, std::nullopt, 2, 2); },
      {"(2, 3, 4)", "(3, 5, 4)"}));
  EXPECT_TRUE(ThrowsInvalidArgument([&] { attention_tiled(q, wide, wide, std::nullopt, 2, 2); },
                                    {"(2, 3, 4)", "(2, 5, 6)"}));
  EXPECT_TRUE(ThrowsInvalidArgument([&] { attention_tiled(q, k, six_keys, std::nullopt, 2, 2); },
                                    {"(2, 5, 4)", "(2, 6, 4)"}));
  const Tensor2 wrong_mask = xt::zeros<float>({3, 4});  // (T, S) should be (3, 5)
  EXPECT_TRUE(ThrowsInvalidArgument([&] { attention_tiled(q, k, k, wrong_mask, 2, 2); },
                                    {"(3, 4)"}));
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { attention_tiled_causal(q, three_heads, three_heads, 2, 2); },
      {"(2, 3, 4)", "(3, 5, 4)"}));
}

TEST(AttentionTiledArguments, CausalRejectsFewerKeysThanQueries) {
  const Tensor3 q = testing::RandomTensor3(2, 5, 4, 1);  // T = 5
  const Tensor3 k = testing::RandomTensor3(2, 3, 4, 2);  // S = 3
  EXPECT_TRUE(ThrowsInvalidArgument([&] { attention_tiled_causal(q, k, k, 2, 2); },
                                    {"S=3", "T=5"}))
      << "attention_tiled_causal must reject S < T, as lab 4's causal_mask(T, S) does";
}

TEST(AttentionTiledArguments, CausalTilesComputedRejectsBadSizesNamingThem) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { causal_tiles_computed(0, 4, 2, 2); }, {"T=0"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { causal_tiles_computed(4, 4, 0, 2); }, {"block_q=0"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { causal_tiles_computed(4, 4, 2, -3); }, {"block_k=-3"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { causal_tiles_computed(9, 4, 2, 2); }, {"S=4", "T=9"}))
      << "causal_tiles_computed must reject S < T, as lab 4's causal_mask(T, S) does";
}

// ---------------------------------------------------------------- memory
//
// One head at T = S = 32768 with d_head = 16: the inputs and the output take
// 2 MiB each, the (T, S) score matrix would take 4 GiB (and lab 4's (T, S)
// causal mask as much). The grader runs learner code in a process whose
// address space is limited to 2 GiB, so an implementation that forms either
// cannot pass these tests there.
//
// Under `bazel test` nothing limits memory, so the test enforces the limit
// itself, around the one call and only there:
//   - It lowers the soft RLIMIT_AS (address space) to what the process maps
//     now plus 2 GiB, and restores it right after. Relative, not an absolute
//     2 GiB: the test process already maps gtest, OpenBLAS's buffers and its
//     threads' stacks, which grow with the machine's core count, and a
//     correct implementation must not pay for them. Only the soft limit
//     changes, which a process may raise back; no other test runs meanwhile.
//     A limit, rather than a measurement afterwards, because a 4 GiB
//     allocation on a small machine would swap or be killed by the kernel,
//     taking the test binary down without a word; under the limit it fails at
//     once with std::bad_alloc, which the test turns into a named failure.
//   - It also measures the peak resident memory during the call (VmHWM, reset
//     through /proc/self/clear_refs; where that is not allowed, the process's
//     peak from getrusage) and fails above 1 GiB of growth: a backstop where
//     setrlimit is refused, and the number the test reports.
// The expected output is computed here, exactly, in double, for a handful of
// rows (each is O(S * d_head)): the tiled result is compared there.
//
// Run time, reference solution compiled -O2 as graded, one core of a 2.6 GHz
// Xeon: about 1.7 s for attention_tiled (1.1e9 scores, each a dot product, an
// exp and a weighted sum) and 0.9 s for attention_tiled_causal (half the
// tiles); the whole test process peaks at 16 MiB resident, 2 MiB (the
// output) above what it held before the call.

constexpr std::size_t kLongT = 32768;
constexpr std::size_t kLongDHead = 16;
constexpr std::size_t kGiB = std::size_t(1) << 30;

struct LongCase {
  Tensor3 q, k, v;  // (1, kLongT, kLongDHead) each
};

LongCase MakeLongCase() {
  // Scores q.k / 4 with a spread of about 2: the running max keeps growing
  // along a row, so the rescaling is exercised thousands of times.
  return {testing::RandomTensor3(1, kLongT, kLongDHead, 41, 1.4f),
          testing::RandomTensor3(1, kLongT, kLongDHead, 42, 1.4f),
          testing::RandomTensor3(1, kLongT, kLongDHead, 43)};
}

// Rows of the expected output, exactly, in double: softmax over the keys row
// i may see (all of them, or j <= i when causal) of q_i . k_j / sqrt(d_head).
Tensor2 ExpectedRows(const LongCase& c, const std::vector<std::size_t>& rows, bool causal) {
  Tensor2 out = xt::zeros<float>({rows.size(), kLongDHead});  // (rows, d_head)
  const double scale = 1.0 / std::sqrt(static_cast<double>(kLongDHead));
  std::vector<double> scores(kLongT);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::size_t i = rows[r], n = causal ? i + 1 : kLongT;
    double max = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::size_t c2 = 0; c2 < kLongDHead; ++c2) s += double(c.q(0, i, c2)) * c.k(0, j, c2);
      scores[j] = s * scale;
      max = std::max(max, scores[j]);
    }
    double sum = 0;
    std::vector<double> acc(kLongDHead, 0.0);
    for (std::size_t j = 0; j < n; ++j) {
      const double p = std::exp(scores[j] - max);
      sum += p;
      for (std::size_t c2 = 0; c2 < kLongDHead; ++c2) acc[c2] += p * c.v(0, j, c2);
    }
    for (std::size_t c2 = 0; c2 < kLongDHead; ++c2) out(r, c2) = static_cast<float>(acc[c2] / sum);
  }
  return out;
}

// First rows, block edges, the middle, the last rows, and a few at random.
std::vector<std::size_t> SampledRows() {
  std::vector<std::size_t> rows = {0, 1, 63, 64, 1000, 4095, 4096, 16383, 16384, 32766, 32767};
  std::mt19937 gen(44);
  std::uniform_int_distribution<std::size_t> any_row(0, kLongT - 1);
  for (int n = 0; n < 9; ++n) rows.push_back(any_row(gen));
  return rows;
}

// Runs `call` under the cap, checks its memory, and compares the sampled
// rows. `what` names the function in messages, `materialised` the mistake
// of kMemoryMistakes that running out of memory points at.
template <class F>
void CheckLongSequence(const std::string& what, const LongCase& c, bool causal, F call,
                       const std::string& materialised) {
  const std::size_t rss_before = StatusBytes("VmRSS");
  const bool reset = ResetPeak();
  Tensor3 out;
  const auto t0 = std::chrono::steady_clock::now();
  {
    AddressSpaceCap cap(2 * kGiB);
    try {
      out = call();
    } catch (const std::bad_alloc&) {
      ADD_FAILURE() << what << " ran out of memory on one head with T = S = 32768 (the (T, S) "
                    << "scores alone take 4 GiB; the limit is 2 GiB more than the test "
                    << "process maps): " << kMemoryMistakes.LooksLike(materialised);
      return;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::size_t peak = PeakBytes();
  const std::size_t growth = peak > rss_before ? peak - rss_before : 0;
  ::testing::Test::RecordProperty("seconds", std::to_string(seconds));
  ::testing::Test::RecordProperty("peak_rss_growth_mib", std::to_string(growth >> 20));
  std::printf("%s, T = S = 32768, d_head = 16: %.2f s; peak resident memory %zu MiB, %zu MiB "
              "above the %zu MiB before the call (%s)\n",
              what.c_str(), seconds, peak >> 20, growth >> 20, rss_before >> 20,
              reset ? "peak reset before the call" : "peak since the process started");
  EXPECT_LT(growth, kGiB) << what << " grew the resident memory by " << (growth >> 20)
                          << " MiB on T = S = 32768: " << kMemoryMistakes.LooksLike(materialised);
  ASSERT_EQ(out.shape(0), 1u);
  ASSERT_EQ(out.shape(1), kLongT);
  ASSERT_EQ(out.shape(2), kLongDHead);
  const std::vector<std::size_t> rows = SampledRows();
  Tensor2 got = xt::zeros<float>({rows.size(), kLongDHead});  // (rows, d_head)
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::size_t c2 = 0; c2 < kLongDHead; ++c2) got(r, c2) = out(0, rows[r], c2);
  }
  EXPECT_TRUE(testing::AllClose(got, ExpectedRows(c, rows, causal), kAttention,
                                {"sampled row", "column"}))
      << "rows sampled: 0, 1, 63, 64, 1000, 4095, 4096, 16383, 16384, 32766, 32767, then 9 at "
         "random (seed 44)";
}

TEST(AttentionTiledMemory, ASequenceWhoseScoresDoNotFitInMemoryStillRuns) {
  const LongCase c = MakeLongCase();
  CheckLongSequence(
      "attention_tiled", c, /*causal=*/false,
      [&] { return attention_tiled(c.q, c.k, c.v, std::nullopt, 64, 512); },
      "materialised_scores");
}

TEST(AttentionTiledMemory, ALongCausalSequenceRunsWithoutAMaskOrScoreMatrix) {
  const LongCase c = MakeLongCase();
  CheckLongSequence(
      "attention_tiled_causal", c, /*causal=*/true,
      [&] { return attention_tiled_causal(c.q, c.k, c.v, 64, 512); },
      "materialised_causal");
}

}  // namespace
}  // namespace mha
