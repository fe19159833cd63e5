// Public tests for lab 8. Run: bazel test //labs/08_kv_cache/...
//
// The decoders are checked against the full causal forward of the same
// layer on the whole sequence (PyTorch's nn.MultiheadAttention for GQA, NumPy
// for MLA: tests/08_kv_cache/gen_goldens.py, in the instructors' repository,
// wrote labs/08_kv_cache/golden/),
// fed in three ways: one prefill, one token at a time, and uneven chunks.
// Every chunking must give the same rows. The grading tests check more
// (MHA, MQA, other shapes, random chunkings, weights changed mid-sequence).
#include "labs/08_kv_cache/kv_cache.h"

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "common/testing/testing.h"
#include "labs/08_kv_cache/kv_cache_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::Counting;
using testing::ExpectTheFullCausalForward;
using testing::GoldenFile;
using testing::GqaCase;
using testing::kCacheMistakes;
using testing::kExact;
using testing::kLayer;
using testing::LoadGolden;
using testing::LooksLikeIf;
using testing::MlaCase;
using testing::ThrowsInvalidArgument;

const std::string kGolden = "labs/08_kv_cache/golden/";

// The golden cases of these tests; the grading tests run the same cases
// (labs/08_kv_cache/kv_cache_test_util.h) on cases of their own.
// GQA: d_model 24, 4 query heads in 2 groups (d_head 6), 8 tokens, with the
// generator's weights.
const GqaCase kGqa{kGolden, "gqa", 24, 4, 2, /*T=*/8, /*chunks=*/{3, 1, 4}};
// MLA: d_model 20, 4 heads (d_head 5), kv_rank 6, 7 tokens.
const MlaCase kMla{kGolden, "mla", 20, 4, 6, /*T=*/7, /*chunks=*/{2, 3, 2}};

// ------------------------------------------------------------------ KVCache

TEST(KVCachePublic, AppendedKeysAndValuesComeBackInOrder) {
  KVCache cache(/*n_kv_heads=*/2, /*d_head=*/3, /*capacity=*/5);
  const Tensor3 k1 = Counting(2, 2, 3, 0.0f), v1 = Counting(2, 2, 3, 100.0f);  // (2, 2, 3)
  const Tensor3 k2 = Counting(2, 1, 3, 50.0f), v2 = Counting(2, 1, 3, 150.0f);  // (2, 1, 3)
  cache.append(k1, v1);
  cache.append(k2, v2);
  EXPECT_EQ(cache.length(), 3);
  EXPECT_EQ(cache.capacity(), 5);
  const Tensor3 keys = xt::concatenate(xt::xtuple(k1, k2), 1);    // (2, 3, 3)
  const Tensor3 values = xt::concatenate(xt::xtuple(v1, v2), 1);  // (2, 3, 3)
  EXPECT_TRUE(AllClose(cache.keys(), keys, kExact, {"kv head", "position", "feature"}));
  EXPECT_TRUE(AllClose(cache.values(), values, kExact, {"kv head", "position", "feature"}));
}

TEST(KVCachePublic, BytesCountTheKeysAndValuesOfThePositionsHeld) {
  KVCache cache(/*n_kv_heads=*/2, /*d_head=*/3, /*capacity=*/10);
  cache.append(Counting(2, 4, 3, 0.0f), Counting(2, 4, 3, 0.0f));
  const std::size_t expected = 2 * 2 * 4 * 3 * sizeof(float);  // K and V, 2 heads, 4 positions
  testing::MistakeNote hint = LooksLikeIf(cache.bytes() == expected / 2, "bytes_one_of_kv");
  if (cache.bytes() == expected / 4 * 10) hint = kCacheMistakes.LooksLike("bytes_capacity");
  EXPECT_EQ(cache.bytes(), expected) << hint;
}

TEST(KVCachePublic, AppendBeyondCapacityThrowsAndLeavesTheCacheUnchanged) {
  KVCache cache(/*n_kv_heads=*/2, /*d_head=*/3, /*capacity=*/4);
  const Tensor3 k = Counting(2, 3, 3, 0.0f), v = Counting(2, 3, 3, 100.0f);  // 3 positions
  cache.append(k, v);
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { cache.append(Counting(2, 2, 3, 7.0f), Counting(2, 2, 3, 7.0f)); }, {"capacity=4"}));
  EXPECT_EQ(cache.length(), 3) << kCacheMistakes.LooksLike("failed_append_changes");
  EXPECT_TRUE(AllClose(cache.keys(), k, kExact, {"kv head", "position", "feature"}))
      << kCacheMistakes.Named("failed_append_changes");
}

TEST(KVCachePublic, AppendOfTheWrongShapeThrowsAndLeavesTheCacheUnchanged) {
  KVCache cache(/*n_kv_heads=*/2, /*d_head=*/3, /*capacity=*/4);
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { cache.append(Counting(3, 1, 3, 0.0f), Counting(3, 1, 3, 0.0f)); }, {"(3, 1, 3)"}));
  EXPECT_EQ(cache.length(), 0) << kCacheMistakes.LooksLike("failed_append_changes");
}

TEST(KVCachePublic, ClearForgetsThePositionsAndKeepsTheCapacity) {
  KVCache cache(/*n_kv_heads=*/1, /*d_head=*/2, /*capacity=*/3);
  cache.append(Counting(1, 3, 2, 0.0f), Counting(1, 3, 2, 0.0f));
  cache.clear();
  EXPECT_EQ(cache.length(), 0);
  EXPECT_EQ(cache.capacity(), 3);
  EXPECT_EQ(cache.bytes(), 0u);
  const Tensor3 k = Counting(1, 3, 2, 9.0f);
  cache.append(k, k);  // the whole capacity is free again
  EXPECT_TRUE(AllClose(cache.keys(), k, kExact, {"kv head", "position", "feature"}));
}

// --------------------------------------------------------------- GqaDecoder

TEST(GqaDecoderPublic, APrefillGivesTheFullCausalForward) {
  ExpectTheFullCausalForward(kGqa, "prefill");
}

TEST(GqaDecoderPublic, OneTokenAtATimeGivesTheFullCausalForward) {
  ExpectTheFullCausalForward(kGqa, "single");
}

TEST(GqaDecoderPublic, UnevenChunksGiveTheFullCausalForward) {
  ExpectTheFullCausalForward(kGqa, "chunks");
}

TEST(GqaDecoderPublic, TheCacheHoldsTheKeysAndValuesOfTheKvHeadsOnly) {
  testing::ExpectTheCacheHoldsTheKeysAndValuesOfTheKvHeadsOnly(kGqa, /*capacity=*/10);
}

TEST(GqaDecoderPublic, AStepBeyondCapacityThrowsAndLeavesTheCacheUnchanged) {
  const GroupedQueryAttention layer = testing::Layer(kGqa);
  const Tensor2 x = LoadGolden<2>(GoldenFile(kGolden, "gqa_x"));  // (8, 24)
  GqaDecoder decoder(layer, /*capacity=*/5);
  decoder.step(xt::view(x, xt::range(0, 3), xt::all()));
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { decoder.step(xt::view(x, xt::range(3, 6), xt::all())); }, {"capacity=5"}));
  EXPECT_EQ(decoder.cache().length(), 3)
      << kCacheMistakes.LooksLike("failed_step_changes");
  // The decoder goes on from where it was: tokens 3 and 4 are rows 3 and 4.
  const Tensor2 y = decoder.step(xt::view(x, xt::range(3, 5), xt::all()));  // (2, 24)
  const Tensor2 expected =
      xt::view(LoadGolden<2>(GoldenFile(kGolden, "gqa_forward")), xt::range(3, 5), xt::all());
  EXPECT_TRUE(AllClose(y, expected, kLayer, {"token", "column"}));
}

// --------------------------------------------------------------- MlaDecoder

TEST(MlaDecoderPublic, OneTokenAtATimeGivesTheFullCausalForward) {
  ExpectTheFullCausalForward(kMla, "single");
}

TEST(MlaDecoderPublic, UnevenChunksGiveTheFullCausalForward) {
  ExpectTheFullCausalForward(kMla, "chunks");
}

TEST(MlaDecoderPublic, TheCacheHoldsOnlyTheLatents) {
  testing::ExpectTheCacheHoldsOnlyTheLatents(kMla, /*capacity=*/9);
}

TEST(LatentCachePublic, AppendBeyondCapacityThrowsAndLeavesTheCacheUnchanged) {
  LatentCache cache(/*kv_rank=*/3, /*capacity=*/4);
  const Tensor2 c = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};  // (3, 3)
  cache.append(c);
  EXPECT_TRUE(ThrowsInvalidArgument([&] { cache.append(c); }, {"capacity=4"}));
  EXPECT_EQ(cache.length(), 3) << kCacheMistakes.LooksLike("failed_append_changes");
  EXPECT_EQ(cache.bytes(), 3u * 3 * sizeof(float));
  EXPECT_TRUE(AllClose(cache.latents(), c, kExact, {"position", "latent"}));
}

}  // namespace
}  // namespace mha
