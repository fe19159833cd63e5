// Hidden tests for lab 8, the decoders: GqaDecoder and MlaDecoder (the
// caches' tests are in kv_cache_test.cc, run first).
//
// A decoder fed a sequence in steps must return, row for row, the full causal
// forward of its layer on the whole sequence, whatever the chunking. The
// reference rows come from PyTorch (a causal nn.MultiheadAttention; GQA as
// MHA with each kv head's weights repeated for its group) and, for MLA, from
// NumPy (tests/08_kv_cache/gen_goldens.py). Cases:
//
//   mha    d_model 12, 3 heads, 3 kv heads (d_head 4), T 9
//   gqa    d_model 32, 8 heads, 2 kv heads (d_head 4), T 10
//   mqa    d_model 18, 3 heads, 1 kv head (d_head 6), T 7
//   large  d_model 16, 4 heads, 2 kv heads, inputs x12: scores in the hundreds
//   mla    d_model 24, 4 heads (d_head 6), kv_rank 10, T 9
//   mla_large  d_model 12, 3 heads (d_head 4), kv_rank 5, inputs x8
//
// each fed as one prefill, one token at a time, and uneven chunks (the
// generator's `chunks`). The *_mistake_* goldens hold what a decoder with one
// classic mistake returns, so a failure can name it.
#include "labs/08_kv_cache/kv_cache.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "tests/common/naive.h"
#include "common/testing/testing.h"
#include "labs/08_kv_cache/kv_cache_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::ChunksString;
using testing::Decode;
using testing::ExpectTheFullCausalForward;
using testing::GoldenFile;
using testing::GqaCase;
using testing::kAttention;
using testing::kCacheMistakes;
using testing::kExact;
using testing::kLayer;
using testing::Layer;
using testing::LoadGolden;
using testing::LooksLikeIf;
using testing::MatchesGolden;
using testing::MlaCase;
using testing::RandomChunks;
using testing::ThrowsInvalidArgument;

const std::string kGolden = "tests/08_kv_cache/golden/";

// ------------------------------------------------------------------ helpers

// Rows [begin, end) of a (T, d) matrix.
Tensor2 Rows(const Tensor2& a, int begin, int end) {
  return xt::view(a, xt::range(begin, end), xt::all());
}

// The full causal forward of a layer on x, from plain loops in double
// (tests/common/naive.h): independent of every solution, and computed in this
// process, so no golden is both loaded and compared.
Tensor2 FullForward(const GroupedQueryAttention& layer, const Tensor2& x) {
  const int T = static_cast<int>(x.shape(0));
  return naive::MultiHeadForward(x, layer.W_Q, layer.W_K, layer.W_V, layer.W_O, layer.n_heads,
                                 naive::CausalMask(T, T));
}

// Naive MLA is MHA whose key and value weights are W_DKV @ W_UK and W_DKV @ W_UV.
Tensor2 FullForward(const MultiHeadLatentAttention& layer, const Tensor2& x) {
  const int T = static_cast<int>(x.shape(0));
  const Tensor2 W_K = naive::MatMul(layer.W_DKV, layer.W_UK);  // (d_model, d_model)
  const Tensor2 W_V = naive::MatMul(layer.W_DKV, layer.W_UV);  // (d_model, d_model)
  return naive::MultiHeadForward(x, layer.W_Q, W_K, W_V, layer.W_O, layer.n_heads,
                                 naive::CausalMask(T, T));
}

// A decoder of capacity T fed x (T, d_model) in `chunks` returns, row for row,
// the layer's full causal forward; `sizes` names the layer in a failure.
template <class Decoder, class LayerT>
void ExpectChunkedDecodeIsTheFullForward(const LayerT& layer, const Tensor2& x,
                                         const std::vector<int>& chunks,
                                         const std::string& sizes) {
  SCOPED_TRACE(sizes + ", " + ChunksString(chunks));
  Decoder decoder(layer, static_cast<int>(x.shape(0)));
  const std::optional<Tensor2> rows = Decode(decoder, x, chunks);
  ASSERT_TRUE(rows.has_value());
  EXPECT_TRUE(AllClose(*rows, FullForward(layer, x), kLayer, {"token", "column"}));
}

// ---------------------------------------------------------------- the cases

// The golden cases of the grading tests: the public tests' cases
// (labs/08_kv_cache/kv_cache_test_util.h) run on them, and the tests below
// add cases of their own.
const GqaCase kMha{kGolden, "mha", 12, 3, 3, 9, {2, 4, 1, 2}};
const GqaCase kGqa{kGolden, "gqa", 32, 8, 2, 10, {5, 1, 1, 3}};
const GqaCase kMqa{kGolden, "mqa", 18, 3, 1, 7, {1, 3, 2, 1}};
const GqaCase kLarge{kGolden, "large", 16, 4, 2, 6, {2, 2, 2}};

const MlaCase kMla{kGolden, "mla", 24, 4, 10, 9, {4, 1, 2, 2}};
const MlaCase kMlaLarge{kGolden, "mla_large", 12, 3, 5, 6, {3, 3}};

// A decoder of `capacity` fed `held` = capacity - 2 tokens refuses a step of
// 3 more, keeps its cache as it was, and goes on: the next 2 tokens are rows
// held and held + 1 of the full forward.
template <class Case>
void ExpectAStepBeyondCapacityThrowsAndLeavesTheCacheUnchanged(const Case& c, int capacity) {
  const auto layer = Layer(c);
  const int held = capacity - 2;
  const Tensor2 x = LoadGolden<2>(GoldenFile(kGolden, c.name + "_x"));  // (T, d_model)
  const Tensor2 full = FullForward(layer, Rows(x, 0, capacity));
  typename std::conditional<std::is_same<Case, GqaCase>::value, GqaDecoder, MlaDecoder>::type
      decoder(layer, capacity);
  decoder.step(Rows(x, 0, held));
  EXPECT_TRUE(ThrowsInvalidArgument([&] { decoder.step(Rows(x, held, held + 3)); },
                                    {"capacity=" + std::to_string(capacity)}));
  EXPECT_EQ(decoder.cache().length(), held) << kCacheMistakes.LooksLike("failed_step_changes");
  // Nothing was lost: the next two tokens are rows held and held + 1 of the full forward.
  EXPECT_TRUE(AllClose(decoder.step(Rows(x, held, capacity)), Rows(full, held, capacity), kLayer,
                       {"token", "column"}));
}

// ---------------------------------------------- GqaDecoder: every chunking

TEST(GqaDecoderMha, APrefillGivesTheFullCausalForward) { ExpectTheFullCausalForward(kMha, "prefill"); }
TEST(GqaDecoderMha, OneTokenAtATimeGivesTheFullCausalForward) {
  ExpectTheFullCausalForward(kMha, "single");
}
TEST(GqaDecoderMha, UnevenChunksGiveTheFullCausalForward) { ExpectTheFullCausalForward(kMha, "chunks"); }

TEST(GqaDecoderGqa, APrefillGivesTheFullCausalForward) { ExpectTheFullCausalForward(kGqa, "prefill"); }
TEST(GqaDecoderGqa, OneTokenAtATimeGivesTheFullCausalForward) {
  ExpectTheFullCausalForward(kGqa, "single");
}
TEST(GqaDecoderGqa, APrefillThenTokensAndAChunkGiveTheFullCausalForward) {
  ExpectTheFullCausalForward(kGqa, "chunks");
}

TEST(GqaDecoderMqa, APrefillGivesTheFullCausalForward) { ExpectTheFullCausalForward(kMqa, "prefill"); }
TEST(GqaDecoderMqa, OneTokenAtATimeGivesTheFullCausalForward) {
  ExpectTheFullCausalForward(kMqa, "single");
}
TEST(GqaDecoderMqa, UnevenChunksGiveTheFullCausalForward) { ExpectTheFullCausalForward(kMqa, "chunks"); }

TEST(GqaDecoderLargeScores, APrefillStaysFiniteAndGivesTheFullCausalForward) {
  ExpectTheFullCausalForward(kLarge, "prefill");
}
TEST(GqaDecoderLargeScores, OneTokenAtATimeStaysFiniteAndGivesTheFullCausalForward) {
  ExpectTheFullCausalForward(kLarge, "single");
}
TEST(GqaDecoderLargeScores, ChunksStayFiniteAndGiveTheFullCausalForward) {
  ExpectTheFullCausalForward(kLarge, "chunks");
}

TEST(GqaDecoder, RandomChunkSizesGiveTheFullCausalForwardForMhaGqaAndMqa) {
  std::mt19937 gen(808);
  for (const GqaCase& c : {kMha, kGqa, kMqa}) {
    const GroupedQueryAttention layer = Layer(c);
    const Tensor2 x = LoadGolden<2>(GoldenFile(kGolden, c.name + "_x"));
    for (int round = 0; round < 4; ++round) {
      const std::vector<int> chunks = RandomChunks(c.T, gen);
      SCOPED_TRACE(c.name + ", " + ChunksString(chunks));
      GqaDecoder decoder(layer, c.T);
      const std::optional<Tensor2> rows = Decode(decoder, x, chunks);
      ASSERT_TRUE(rows.has_value());
      EXPECT_TRUE(MatchesGolden(*rows, GoldenFile(kGolden, c.name + "_forward"), kLayer,
                                {"token", "column"}));
    }
  }
}

// ------------------------------------------------ GqaDecoder: the cache

TEST(GqaDecoder, TheCacheHoldsTheKeysAndValuesOfTheKvHeadsOnly) {
  // 8 query heads, 2 kv heads, d_head 4.
  testing::ExpectTheCacheHoldsTheKeysAndValuesOfTheKvHeadsOnly(kGqa, /*capacity=*/12);
}

TEST(GqaDecoder, MultiQueryAttentionCachesOneKvHead) {
  const GroupedQueryAttention layer = Layer(kMqa);  // 3 query heads, 1 kv head, d_head 6
  GqaDecoder decoder(layer, /*capacity=*/7);
  ASSERT_TRUE(
      Decode(decoder, LoadGolden<2>(GoldenFile(kGolden, "mqa_x")), kMqa.chunks).has_value());
  const Tensor3 keys = decoder.cache().keys();
  ASSERT_EQ(keys.shape(0), 1u)
      << "the cache holds " << keys.shape(0) << " heads, expected n_kv_heads=1"
      << LooksLikeIf(keys.shape(0) == 3, "repeated_kv_heads", "; ");
  EXPECT_EQ(decoder.cache().bytes(), 2u * 1 * 7 * 6 * sizeof(float));
  EXPECT_TRUE(MatchesGolden(keys, GoldenFile(kGolden, "mqa_keys"), kAttention,
                            {"kv head", "position", "feature"}));
}

TEST(GqaDecoder, AStepBeyondCapacityThrowsAndLeavesTheCacheUnchanged) {
  ExpectAStepBeyondCapacityThrowsAndLeavesTheCacheUnchanged(kGqa, /*capacity=*/6);
}

TEST(GqaDecoder, AnInputOfTheWrongWidthThrowsAndLeavesTheCacheUnchanged) {
  const GroupedQueryAttention layer = Layer(kGqa);  // d_model 32
  GqaDecoder decoder(layer, /*capacity=*/6);
  decoder.step(Rows(LoadGolden<2>(GoldenFile(kGolden, "gqa_x")), 0, 2));
  EXPECT_TRUE(ThrowsInvalidArgument([&] { decoder.step(xt::zeros<float>({1, 30})); }, {"30", "32"}));
  EXPECT_EQ(decoder.cache().length(), 2)
      << kCacheMistakes.LooksLike("failed_step_changes");
}

TEST(GqaDecoder, ACapacityThatIsNotPositiveIsRejected) {
  const GroupedQueryAttention layer = Layer(kMha);
  EXPECT_TRUE(ThrowsInvalidArgument([&] { GqaDecoder(layer, 0); }, {"capacity=0"}));
}

TEST(GqaDecoder, ReadsTheLayersWeightsAtEveryStep) {
  // W_Q and W_O act on the new tokens only, so changing them between steps
  // must change the next rows exactly as it changes the full forward.
  GroupedQueryAttention layer = Layer(kGqa);
  const Tensor2 x = LoadGolden<2>(GoldenFile(kGolden, "gqa_x"));  // (10, 32)
  GqaDecoder decoder(layer, /*capacity=*/10);
  decoder.step(Rows(x, 0, 5));
  layer.W_Q = layer.W_Q * 1.5f;
  layer.W_O = xt::transpose(layer.W_O);
  const Tensor2 y = decoder.step(Rows(x, 5, 8));  // (3, 32)
  const Tensor2 full = FullForward(layer, Rows(x, 0, 8));
  EXPECT_TRUE(AllClose(y, Rows(full, 5, 8), kLayer, {"token", "column"}))
      << "the step did not use the layer's current W_Q and W_O: keep a pointer to the layer "
         "and read its weights at every step";
}

TEST(GqaDecoder, ACopiedDecoderGoesOnOnItsOwn) {
  // Two continuations of one prefix (as in beam search): copy the decoder
  // after the prefix, feed each its own next tokens.
  const GroupedQueryAttention layer = Layer(kMha);
  const Tensor2 x = LoadGolden<2>(GoldenFile(kGolden, "mha_x"));  // (9, 12)
  GqaDecoder first(layer, /*capacity=*/9);
  first.step(Rows(x, 0, 5));
  GqaDecoder second = first;
  const Tensor2 other = testing::RandomTensor2(2, 12, /*seed=*/81);  // another continuation
  const Tensor2 y_second = second.step(other);
  const Tensor2 y_first = first.step(Rows(x, 5, 7));
  EXPECT_EQ(first.cache().length(), 7);
  EXPECT_EQ(second.cache().length(), 7);
  const Tensor2 full = FullForward(layer, Rows(x, 0, 7));
  EXPECT_TRUE(AllClose(y_first, Rows(full, 5, 7), kLayer, {"token", "column"}));
  const Tensor2 x_other = xt::concatenate(xt::xtuple(Rows(x, 0, 5), other), 0);  // (7, 12)
  const Tensor2 full_other = FullForward(layer, x_other);
  EXPECT_TRUE(AllClose(y_second, Rows(full_other, 5, 7), kLayer, {"token", "column"}));
}

TEST(GqaDecoder, FreshRandomInputsMatchAPlainLoopReference) {
  testing::FreshDraws gen;
  const int n_kv_heads = gen.Pick(1, 3);
  const int n_heads = n_kv_heads * gen.Pick(1, 3);
  const int d_head = gen.Pick(2, 5);
  const int d_model = n_heads * d_head;
  const int T = gen.Pick(4, 12);
  GroupedQueryAttention layer(d_model, n_heads, n_kv_heads);
  const std::size_t d = d_model, kv = n_kv_heads * d_head;
  const float s = 1.0f / std::sqrt(static_cast<float>(d_model));
  layer.W_Q = testing::RandomTensor2(d, d, gen(), s);
  layer.W_K = testing::RandomTensor2(d, kv, gen(), s);
  layer.W_V = testing::RandomTensor2(d, kv, gen(), s);
  layer.W_O = testing::RandomTensor2(d, d, gen(), s);
  ExpectChunkedDecodeIsTheFullForward<GqaDecoder>(
      layer, testing::RandomTensor2(T, d, gen(), 2.0f), RandomChunks(T, gen),
      "d_model=" + std::to_string(d_model) + " n_heads=" + std::to_string(n_heads) +
          " n_kv_heads=" + std::to_string(n_kv_heads) + " T=" + std::to_string(T));
}

// ---------------------------------------------- MlaDecoder: every chunking

TEST(MlaDecoder, APrefillGivesTheFullCausalForward) { ExpectTheFullCausalForward(kMla, "prefill"); }
TEST(MlaDecoder, OneTokenAtATimeGivesTheFullCausalForward) {
  ExpectTheFullCausalForward(kMla, "single");
}
TEST(MlaDecoder, UnevenChunksGiveTheFullCausalForward) { ExpectTheFullCausalForward(kMla, "chunks"); }

TEST(MlaDecoderLargeScores, APrefillStaysFiniteAndGivesTheFullCausalForward) {
  ExpectTheFullCausalForward(kMlaLarge, "prefill");
}
TEST(MlaDecoderLargeScores, OneTokenAtATimeStaysFiniteAndGivesTheFullCausalForward) {
  ExpectTheFullCausalForward(kMlaLarge, "single");
}
TEST(MlaDecoderLargeScores, ChunksStayFiniteAndGiveTheFullCausalForward) {
  ExpectTheFullCausalForward(kMlaLarge, "chunks");
}

TEST(MlaDecoder, RandomChunkSizesGiveTheFullCausalForward) {
  const MultiHeadLatentAttention layer = Layer(kMla);
  const Tensor2 x = LoadGolden<2>(GoldenFile(kGolden, "mla_x"));
  std::mt19937 gen(809);
  for (int round = 0; round < 6; ++round) {
    const std::vector<int> chunks = RandomChunks(kMla.T, gen);
    SCOPED_TRACE(ChunksString(chunks));
    MlaDecoder decoder(layer, kMla.T);
    const std::optional<Tensor2> rows = Decode(decoder, x, chunks);
    ASSERT_TRUE(rows.has_value());
    EXPECT_TRUE(
        MatchesGolden(*rows, GoldenFile(kGolden, "mla_forward"), kLayer, {"token", "column"}));
  }
}

// ------------------------------------------------ MlaDecoder: the cache

TEST(MlaDecoder, TheCacheHoldsOnlyTheLatents) {
  // d_model 24, kv_rank 10.
  testing::ExpectTheCacheHoldsOnlyTheLatents(kMla, /*capacity=*/11);
}

TEST(MlaDecoder, NewUpProjectionsApplyToEveryCachedToken) {
  // Only c is cached, and K and V are rebuilt from it (implicitly) at every
  // step: a change of W_UK or W_UV reaches every token seen so far. A cache
  // of K and V would keep the old keys and values.
  MultiHeadLatentAttention layer = Layer(kMla);
  const Tensor2 x = LoadGolden<2>(GoldenFile(kGolden, "mla_x"));  // (9, 24)
  MlaDecoder decoder(layer, /*capacity=*/9);
  decoder.step(Rows(x, 0, 5));
  layer.W_UK = layer.W_UK * -0.5f;
  layer.W_UV = xt::flip(layer.W_UV, 0);
  const Tensor2 y = decoder.step(Rows(x, 5, 7));  // (2, 24)
  const Tensor2 full = FullForward(layer, Rows(x, 0, 7));
  EXPECT_TRUE(AllClose(y, Rows(full, 5, 7), kLayer, {"token", "column"}))
      << "the step did not rebuild the cached tokens' keys and values from the current W_UK and "
         "W_UV; " << kCacheMistakes.LooksLike("latent_stores_kv");
}

TEST(MlaDecoder, AStepBeyondCapacityThrowsAndLeavesTheCacheUnchanged) {
  ExpectAStepBeyondCapacityThrowsAndLeavesTheCacheUnchanged(kMla, /*capacity=*/5);
}

TEST(MlaDecoder, AnInputOfTheWrongWidthThrowsAndLeavesTheCacheUnchanged) {
  const MultiHeadLatentAttention layer = Layer(kMla);  // d_model 24
  MlaDecoder decoder(layer, /*capacity=*/5);
  EXPECT_TRUE(ThrowsInvalidArgument([&] { decoder.step(xt::zeros<float>({2, 20})); }, {"20", "24"}));
  EXPECT_EQ(decoder.cache().length(), 0)
      << kCacheMistakes.LooksLike("failed_step_changes");
}

TEST(MlaDecoder, FreshRandomInputsMatchAPlainLoopReference) {
  testing::FreshDraws gen;
  const int n_heads = gen.Pick(1, 4);
  const int d_head = gen.Pick(2, 5);
  const int d_model = n_heads * d_head;
  const int kv_rank = gen.Pick(2, 12);
  const int T = gen.Pick(4, 12);
  MultiHeadLatentAttention layer(d_model, n_heads, kv_rank);
  const std::size_t d = d_model, r = kv_rank;
  const float sd = 1.0f / std::sqrt(static_cast<float>(d_model));
  const float sr = 1.0f / std::sqrt(static_cast<float>(kv_rank));
  layer.W_Q = testing::RandomTensor2(d, d, gen(), sd);
  layer.W_DKV = testing::RandomTensor2(d, r, gen(), sd);
  layer.W_UK = testing::RandomTensor2(r, d, gen(), sr);
  layer.W_UV = testing::RandomTensor2(r, d, gen(), sr);
  layer.W_O = testing::RandomTensor2(d, d, gen(), sd);
  ExpectChunkedDecodeIsTheFullForward<MlaDecoder>(
      layer, testing::RandomTensor2(T, d, gen(), 2.0f), RandomChunks(T, gen),
      "d_model=" + std::to_string(d_model) + " n_heads=" + std::to_string(n_heads) +
          " kv_rank=" + std::to_string(kv_rank) + " T=" + std::to_string(T));
}

TEST(MlaDecoder, ACapacityThatIsNotPositiveIsRejected) {
  const MultiHeadLatentAttention layer = Layer(kMla);
  EXPECT_TRUE(ThrowsInvalidArgument([&] { MlaDecoder(layer, -1); }, {"capacity=-1"}));
}

}  // namespace
}  // namespace mha
