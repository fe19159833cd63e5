// Hidden tests of lab 4: causal and padding masks, alone and inside the layer.
// Goldens: tests/04_causal_mask/gen_goldens.py (NumPy masks, torch outputs).
// The layer-level tests use labs 1-3 (graded with their reference solutions).
// The public tests (labs/04_causal_mask) check the same mistakes on other
// sizes; the last test here draws fresh random sizes and masks on every run
// (testing::FreshSeed) and compares with plain loops.
#include "labs/04_causal_mask/causal_mask.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xview.hpp>

#include "tests/common/naive.h"
#include "common/testing/testing.h"
#include "labs/01_split_heads/split_heads.h"
#include "labs/02_batched_attention/attention.h"
#include "labs/03_output_projection/multi_head_attention.h"
#include "labs/04_causal_mask/causal_mask_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::kAttention;
using testing::kExact;
using testing::kLayer;
using testing::kMaskAxes;
using testing::KnownMistake;
using testing::LoadGolden;
using testing::MatchesGolden;
using testing::ThrowsInvalidArgument;

// The golden set of the grading tests: the public tests' cases
// (labs/04_causal_mask/causal_mask_test_util.h) run on it, and the cases
// below are the grading tests' own.
const std::string kGolden = "tests/04_causal_mask/golden/";

// The mistake whose mask the generator wrote to `file` (causal_mask_test_util.h).
KnownMistake Mistake(const std::string& file, const std::string& words) {
  return testing::MaskMistake(kGolden + file, words);
}

// A precondition of the tests whose right answer alone is trivial (a row of
// zeros sees every key; so does a mask that hides nothing): causal_mask(T, S)
// hides every key in a query's future (query i sits at position S - T + i).
::testing::AssertionResult HidesTheFuture(int T, int S) {
  const Tensor2 got = T == S ? causal_mask(T) : causal_mask(T, S);
  if (got.shape(0) != static_cast<std::size_t>(T) || got.shape(1) != static_cast<std::size_t>(S))
    return ::testing::AssertionFailure() << "precondition: causal_mask has the wrong shape";
  for (int i = 0; i < T; ++i) {
    for (int j = S - T + i + 1; j < S; ++j) {
      if (!(std::isinf(got(i, j)) && got(i, j) < 0)) {
        return ::testing::AssertionFailure()
               << "precondition: causal_mask(" << T << (T == S ? "" : ", " + std::to_string(S))
               << ") must hide every future key: entry [" << i << ", " << j << "] is "
               << got(i, j) << ", not -inf";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------- causal_mask(T)

TEST(CausalMask, MatchesNumpyTriuWithMinusInfinityAboveTheDiagonal) {
  testing::ExpectIsTheSquareCausalGolden(causal_mask(6), kGolden, /*T=*/6);
}

TEST(CausalMask, KeepsTheDiagonalSoEveryTokenSeesItself) {
  ASSERT_TRUE(HidesTheFuture(5, 5));
  for (int T : {1, 2, 5, 9}) {
    const Tensor2 mask = causal_mask(T);
    ASSERT_EQ(mask.shape(0), static_cast<std::size_t>(T)) << "T=" << T;
    ASSERT_EQ(mask.shape(1), static_cast<std::size_t>(T)) << "T=" << T;
    for (int i = 0; i < T; ++i) {
      const std::string words =
          "query " + std::to_string(i) + " must see key " + std::to_string(i) + " (itself)";
      EXPECT_EQ(mask(i, i), 0.0f)
          << "T=" << T << ": "
          << testing::MistakeNote({"diagonal_hidden", words, "docs/04_causal_mask.md"},
                                  words + "; see docs/04_causal_mask.md");
    }
  }
}

TEST(CausalMask, OfOneTokenIsASingleZero) {
  ASSERT_TRUE(HidesTheFuture(2, 2));
  const Tensor2 expected = {{0.0f}};
  EXPECT_TRUE(AllClose(causal_mask(1), expected, kExact, kMaskAxes));
}

TEST(CausalMask, RejectsANonPositiveLength) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { causal_mask(0); }, {"T=0"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { causal_mask(-3); }, {"T=-3"}));
}

// ------------------------------------------------------------- causal_mask(T, S)

TEST(CausalMaskWithCache, IsAlignedToTheBottomRightCorner) {
  testing::ExpectCausalMaskWithCacheMatchesGolden(kGolden, /*T=*/3, /*S=*/7);
}

TEST(CausalMaskWithCache, LetsASingleNewTokenSeeTheWholeCache) {
  ASSERT_TRUE(HidesTheFuture(2, 6));
  const Tensor2 expected = xt::zeros<float>({1, 6});
  EXPECT_TRUE(AllClose(causal_mask(1, 6), expected, kExact, kMaskAxes));
}

TEST(CausalMaskWithCache, EqualsTheSquareMaskWhenTEqualsS) {
  testing::ExpectIsTheSquareCausalGolden(causal_mask(6, 6), kGolden, /*T=*/6);
}

TEST(CausalMaskWithCache, RejectsFewerKeysThanQueries) {
  testing::ExpectCausalMaskRejectsFewerKeysThanQueries();
}

TEST(CausalMaskWithCache, RejectsANonPositiveLength) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { causal_mask(0, 4); }, {"T=0"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { causal_mask(-1, 4); }, {"T=-1"}));
}

// ------------------------------------------------------------------ padding_mask

TEST(PaddingMask, RemovesTheColumnOfEveryInvalidKey) {
  testing::ExpectPaddingMaskMatchesGolden(kGolden, /*T=*/3, {true, false, true, true, false});
}

TEST(PaddingMask, RejectsAnEmptyKeyValid) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { padding_mask(3, {}); }, {"key_valid"}));
}

TEST(PaddingMask, RejectsANonPositiveNumberOfQueries) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { padding_mask(0, {true, false}); }, {"T=0"}));
}

// ----------------------------------------------------------------- combine_masks

TEST(CombineMasks, OfCausalAndPaddingMatchesNumpy) {
  testing::ExpectCombinedCausalAndPaddingMatchesGolden(kGolden, /*T=*/4,
                                                       {false, true, true, true, true, false});
}

TEST(CombineMasks, AddsFiniteMasksAsASumNotAMinOrAMax) {
  // (3, 4) masks.
  testing::ExpectCombineMasksAddsFiniteMasks(kGolden);
}

TEST(CombineMasks, AddsTheMasksElementwise) {
  // Finite values too: combining is a plain sum, not a min, max or logical op.
  const Tensor2 a = testing::RandomTensor2(3, 4, /*seed=*/7);
  const Tensor2 b = testing::RandomTensor2(3, 4, /*seed=*/8);
  const Tensor2 expected = a + b;
  EXPECT_TRUE(AllClose(combine_masks(a, b), expected, kExact, kMaskAxes));
}

TEST(CombineMasks, RejectsMasksOfDifferentShapes) {
  const Tensor2 a = xt::zeros<float>({3, 4});
  const Tensor2 b = xt::zeros<float>({3, 5});
  EXPECT_TRUE(ThrowsInvalidArgument([&] { combine_masks(a, b); }, {"(3, 4)", "(3, 5)"}));
}

// ------------------------------------------------------- the masks inside attention

TEST(CausalAttention, LayerOutputMatchesTorchWithACausalMask) {
  const Tensor2 x = LoadGolden<2>(kGolden + "layer_x.npy");  // (T=5, d_model=12)
  const MultiHeadAttention layer(/*d_model=*/12, /*n_heads=*/3, /*seed=*/4);
  const Tensor2 y = layer.forward(x, causal_mask(5));
  EXPECT_TRUE(MatchesGolden(
      y, kGolden + "layer_causal_output.npy", kLayer, {"token", "feature"},
      {Mistake("layer_causal_output_mistake_strict.npy",
               "the diagonal is removed (row 0 sees no key and becomes zero)"),
       Mistake("layer_causal_output_mistake_transposed.npy",
               "a transposed mask: each query sees the future instead of the past"),
       Mistake("layer_causal_output_mistake_multiplicative.npy",
               "a multiplicative 0/1 mask added to the scores (nothing is removed)")}));
}

TEST(CausalAttention, ChangingLaterTokensLeavesEarlierOutputsUnchanged) {
  const int T = 7, d_model = 12;
  const MultiHeadAttention layer(d_model, /*n_heads=*/3, /*seed=*/9);
  const Tensor2 x = testing::RandomTensor2(T, d_model, /*seed=*/21, /*scale=*/3.0f);
  const Tensor2 y = layer.forward(x, causal_mask(T));  // (T, d_model)
  // A mask that hides every key leaves every output 0, unchanged whatever the tokens.
  ASSERT_TRUE(AllClose(y, layer.forward(x, naive::CausalMask(T, T)), kLayer, {"token", "feature"}))
      << "precondition: the layer with causal_mask(T) must give its causal output";
  for (int t = 0; t + 1 < T; ++t) {
    // Replace every token after position t with different random tokens.
    Tensor2 x2 = x;
    xt::view(x2, xt::range(t + 1, T), xt::all()) =
        testing::RandomTensor2(T - t - 1, d_model, /*seed=*/100 + t, /*scale=*/3.0f);
    const Tensor2 y2 = layer.forward(x2, causal_mask(T));
    EXPECT_TRUE(AllClose(xt::view(y2, xt::range(0, t + 1), xt::all()),
                         xt::view(y, xt::range(0, t + 1), xt::all()), kLayer,
                         {"token", "feature"}))
        << "outputs 0.." << t << " changed when only tokens after " << t
        << " changed: the mask lets queries see the future";
  }
}

// The layer has no API for separate queries and keys, so the test projects x
// with the layer's public weights and runs lab 2's attention_batched on the
// last T' queries against every key so far: what a KV cache does.
TEST(CausalAttention, DecodingFromACacheInChunksMatchesTheFullCausalForward) {
  const int T = 8, d_model = 12, n_heads = 3, prefill = 2;
  const MultiHeadAttention layer(d_model, n_heads, /*seed=*/11);
  const Tensor2 x = testing::RandomTensor2(T, d_model, /*seed=*/31, /*scale=*/3.0f);
  const Tensor2 full = layer.forward(x, causal_mask(T));  // (T, d_model)
  ASSERT_TRUE(AllClose(full, layer.forward(x, naive::CausalMask(T, T)), kLayer,
                       {"token", "feature"}))
      << "precondition: the layer with causal_mask(T) must give its causal output";

  const Tensor3 q = split_heads(xt::linalg::dot(x, layer.W_Q), n_heads);  // (H, T, d_head)
  const Tensor3 k = split_heads(xt::linalg::dot(x, layer.W_K), n_heads);  // (H, T, d_head)
  const Tensor3 v = split_heads(xt::linalg::dot(x, layer.W_V), n_heads);  // (H, T, d_head)
  for (int chunk : {1, 2, 3}) {
    // Prefill positions [0, prefill), then decode `chunk` new tokens at a time.
    int start = 0;
    for (int end = prefill; end <= T; start = end, end += chunk) {
      const Tensor3 q_new = xt::view(q, xt::all(), xt::range(start, end), xt::all());
      const Tensor3 k_seen = xt::view(k, xt::all(), xt::range(0, end), xt::all());
      const Tensor3 v_seen = xt::view(v, xt::all(), xt::range(0, end), xt::all());
      const AttentionResult r =
          attention_batched(q_new, k_seen, v_seen, causal_mask(end - start, end));
      const Tensor2 y = xt::linalg::dot(combine_heads(r.output), layer.W_O);  // (T', d_model)
      EXPECT_TRUE(AllClose(y, xt::view(full, xt::range(start, end), xt::all()), kLayer,
                           {"new token", "feature"}))
          << "chunk=" << chunk << ": queries " << start << ".." << end - 1 << " over keys 0.."
          << end - 1 << " with causal_mask(" << end - start << ", " << end
          << ") differ from rows " << start << ".." << end - 1 << " of the full forward";
    }
  }
}

TEST(CausalAttention, QueryThatSeesNoKeyGivesAZeroRowAndTheOthersStayFinite) {
  // Key 0 is padding, and causality lets query 0 see key 0 only.
  const int T = 4, d_model = 12;
  const Tensor2 mask = combine_masks(causal_mask(T), padding_mask(T, {false, true, true, true}));
  const MultiHeadAttention layer(d_model, /*n_heads=*/3, /*seed=*/5);
  const Tensor2 x = testing::RandomTensor2(T, d_model, /*seed=*/41, /*scale=*/3.0f);
  const Tensor2 y = layer.forward(x, mask);  // (T, d_model)
  const Tensor1 zeros = xt::zeros<float>({static_cast<std::size_t>(d_model)});
  EXPECT_TRUE(AllClose(xt::row(y, 0), zeros, kExact, {"feature"}))
      << "query 0 may see no key: its output must be exactly zero (and never NaN)";
  for (int t = 1; t < T; ++t) {
    for (int c = 0; c < d_model; ++c) {
      ASSERT_TRUE(std::isfinite(y(t, c))) << "output[" << t << ", " << c << "] = " << y(t, c);
    }
  }
  // A mask that hides every key passes both checks above: the other rows must be right.
  Tensor2 expected_mask = naive::CausalMask(T, T);
  xt::view(expected_mask, xt::all(), 0) = -std::numeric_limits<float>::infinity();
  EXPECT_TRUE(AllClose(y, layer.forward(x, expected_mask), kLayer, {"token", "feature"}))
      << "every query's output with key 0 hidden from all";
}

TEST(CausalAttention, MaskedKeyWithAHugeScoreAndValueDoesNotLeak) {
  // The last key scores ~1e12 with every query and carries the value 1e30;
  // only the last query may see it.
  const Tensor3 q = LoadGolden<3>(kGolden + "huge_key_q.npy");  // (H=2, T=5, d_head=3)
  const Tensor3 k = LoadGolden<3>(kGolden + "huge_key_k.npy");
  const Tensor3 v = LoadGolden<3>(kGolden + "huge_key_v.npy");
  const AttentionResult r = attention_batched(q, k, v, causal_mask(5));
  EXPECT_TRUE(MatchesGolden(
      r.output, kGolden + "huge_key_output.npy", kAttention, {"head", "query", "feature"},
      {Mistake("huge_key_output_mistake_leak.npy",
               "the masked key leaked into every row: its entries in the mask are finite "
               "(-1e9, or a 0/1 mask) instead of -inf")}));
}

// Last, so that a known mistake is named by the golden tests above first:
// sizes and masks no committed file can predict, against plain loops
// (tests/common/naive.h and the definitions). Replay a failure with
// MHA_TEST_SEED=<the printed seed>.
TEST(FreshRandomInputs, MasksMatchTheirDefinitions) {
  testing::FreshDraws gen;
  const int T = 1 + static_cast<int>(gen() % 8);
  const int S = T + static_cast<int>(gen() % 6);
  SCOPED_TRACE("T=" + std::to_string(T) + " S=" + std::to_string(S));
  EXPECT_TRUE(AllClose(causal_mask(T, S), naive::CausalMask(T, S), kExact, kMaskAxes))
      << "causal_mask(T, S)";
  EXPECT_TRUE(AllClose(causal_mask(T), naive::CausalMask(T, T), kExact, kMaskAxes))
      << "causal_mask(T)";

  std::vector<bool> key_valid(static_cast<std::size_t>(S));
  for (std::size_t j = 0; j < key_valid.size(); ++j) key_valid[j] = gen() % 2 == 0;
  Tensor2 padding = xt::zeros<float>({static_cast<std::size_t>(T), key_valid.size()});
  for (std::size_t i = 0; i < padding.shape(0); ++i)
    for (std::size_t j = 0; j < padding.shape(1); ++j)
      if (!key_valid[j]) padding(i, j) = -std::numeric_limits<float>::infinity();
  EXPECT_TRUE(AllClose(padding_mask(T, key_valid), padding, kExact, kMaskAxes))
      << "padding_mask";

  const Tensor2 a = testing::RandomTensor2(static_cast<std::size_t>(T),
                                           static_cast<std::size_t>(S),
                                           static_cast<std::uint32_t>(gen()));
  const Tensor2 b = testing::RandomTensor2(static_cast<std::size_t>(T),
                                           static_cast<std::size_t>(S),
                                           static_cast<std::uint32_t>(gen()));
  Tensor2 sum = xt::zeros<float>(a.shape());
  for (std::size_t i = 0; i < a.shape(0); ++i)
    for (std::size_t j = 0; j < a.shape(1); ++j) sum(i, j) = a(i, j) + b(i, j);
  EXPECT_TRUE(AllClose(combine_masks(a, b), sum, kExact, kMaskAxes)) << "combine_masks";
}

}  // namespace
}  // namespace mha
