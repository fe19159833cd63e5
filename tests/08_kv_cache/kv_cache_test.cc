// Hidden tests for lab 8, the caches: KVCache and LatentCache. What a cache
// holds is data moved, so every comparison is exact; the inputs count up
// (testing::Counting), so a position or a head out of place shows. The
// decoders' tests are in kv_cache_decoders_test.cc, linked into the same test
// program and run after these.
#include "labs/08_kv_cache/kv_cache.h"

#include <cstddef>
#include <string>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>

#include "common/testing/testing.h"
#include "labs/08_kv_cache/kv_cache_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::Counting;
using testing::kCacheMistakes;
using testing::kExact;
using testing::LooksLikeIf;
using testing::ThrowsInvalidArgument;

// ------------------------------------------------------------------ KVCache

TEST(KVCache, StartsEmptyWithTheCapacityItWasGiven) {
  KVCache cache(/*n_kv_heads=*/3, /*d_head=*/2, /*capacity=*/7);
  EXPECT_EQ(cache.length(), 0);
  EXPECT_EQ(cache.capacity(), 7);
  EXPECT_EQ(cache.bytes(), 0u)
      << "an empty cache holds no bytes: " << kCacheMistakes.LooksLike("bytes_capacity");
  EXPECT_EQ(cache.keys().shape(0), 3u);
  EXPECT_EQ(cache.keys().shape(1), 0u);
  EXPECT_EQ(cache.keys().shape(2), 2u);
  // Empty because nothing was appended yet, not because it ignores appends.
  const Tensor3 k = Counting(3, 1, 2, 5.0f);
  cache.append(k, -k);
  EXPECT_EQ(cache.length(), 1) << "after one append";
  EXPECT_TRUE(AllClose(cache.keys(), k, kExact, {"kv head", "position", "feature"}))
      << "after one append";
}

TEST(KVCache, AppendedKeysComeBackInOrderForEveryKvHead) {
  KVCache cache(/*n_kv_heads=*/3, /*d_head=*/2, /*capacity=*/6);
  const Tensor3 k1 = Counting(3, 2, 2, 0.0f), k2 = Counting(3, 1, 2, 100.0f),
                k3 = Counting(3, 3, 2, 200.0f);
  cache.append(k1, k1 + 1000.0f);
  cache.append(k2, k2 + 1000.0f);
  cache.append(k3, k3 + 1000.0f);
  EXPECT_EQ(cache.length(), 6);
  const Tensor3 keys = xt::concatenate(xt::xtuple(k1, k2, k3), 1);  // (3, 6, 2)
  EXPECT_TRUE(AllClose(cache.keys(), keys, kExact, {"kv head", "position", "feature"}));
}

TEST(KVCache, ValuesAreKeptApartFromKeys) {
  KVCache cache(/*n_kv_heads=*/2, /*d_head=*/3, /*capacity=*/4);
  const Tensor3 k1 = Counting(2, 3, 3, 0.0f), k2 = Counting(2, 1, 3, 50.0f);
  cache.append(k1, -k1);
  cache.append(k2, -k2);
  const Tensor3 values = -xt::concatenate(xt::xtuple(k1, k2), 1);  // (2, 4, 3)
  EXPECT_TRUE(AllClose(cache.values(), values, kExact, {"kv head", "position", "feature"}));
}

TEST(KVCache, BytesCountTheKeysAndValuesOfThePositionsHeld) {
  KVCache cache(/*n_kv_heads=*/3, /*d_head=*/5, /*capacity=*/16);
  int held = 0;
  for (int t : {1, 4, 2}) {
    cache.append(Counting(3, t, 5, 0.0f), Counting(3, t, 5, 0.0f));
    held += t;
    const std::size_t expected = 2u * 3 * static_cast<std::size_t>(held) * 5 * sizeof(float);
    testing::MistakeNote hint = LooksLikeIf(cache.bytes() == expected / 2, "bytes_one_of_kv");
    if (cache.bytes() == 2u * 3 * 16 * 5 * sizeof(float)) {
      hint = kCacheMistakes.LooksLike("bytes_capacity");
    }
    EXPECT_EQ(cache.bytes(), expected) << held << " positions held; " << hint;
  }
}

TEST(KVCache, FillsExactlyToItsCapacity) {
  KVCache cache(/*n_kv_heads=*/1, /*d_head=*/2, /*capacity=*/5);
  cache.append(Counting(1, 2, 2, 0.0f), Counting(1, 2, 2, 0.0f));
  cache.append(Counting(1, 3, 2, 4.0f), Counting(1, 3, 2, 4.0f));  // 5 of 5: allowed
  EXPECT_EQ(cache.length(), 5);
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { cache.append(Counting(1, 1, 2, 0.0f), Counting(1, 1, 2, 0.0f)); }, {"capacity=5"}));
}

TEST(KVCache, AppendBeyondCapacityThrowsAndLeavesTheCacheUnchanged) {
  KVCache cache(/*n_kv_heads=*/2, /*d_head=*/3, /*capacity=*/4);
  const Tensor3 k = Counting(2, 3, 3, 0.0f), v = Counting(2, 3, 3, 100.0f);
  cache.append(k, v);
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { cache.append(Counting(2, 2, 3, 7.0f), Counting(2, 2, 3, 7.0f)); },
      {"capacity=4", "3 + 2"}));
  EXPECT_EQ(cache.length(), 3) << kCacheMistakes.LooksLike("failed_append_changes");
  EXPECT_TRUE(AllClose(cache.keys(), k, kExact, {"kv head", "position", "feature"}))
      << kCacheMistakes.Named("failed_append_changes");
  EXPECT_TRUE(AllClose(cache.values(), v, kExact, {"kv head", "position", "feature"}))
      << kCacheMistakes.Named("failed_append_changes");
}

TEST(KVCache, AppendWithTheWrongNumberOfKvHeadsThrowsAndLeavesTheCacheUnchanged) {
  KVCache cache(/*n_kv_heads=*/2, /*d_head=*/3, /*capacity=*/4);
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { cache.append(Counting(4, 1, 3, 0.0f), Counting(4, 1, 3, 0.0f)); }, {"(4, 1, 3)"}));
  EXPECT_EQ(cache.length(), 0) << kCacheMistakes.LooksLike("failed_append_changes");
}

TEST(KVCache, AppendWithTheWrongDHeadThrowsAndLeavesTheCacheUnchanged) {
  KVCache cache(/*n_kv_heads=*/2, /*d_head=*/3, /*capacity=*/4);
  cache.append(Counting(2, 1, 3, 0.0f), Counting(2, 1, 3, 0.0f));
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { cache.append(Counting(2, 1, 3, 0.0f), Counting(2, 1, 4, 0.0f)); }, {"(2, 1, 4)"}));
  EXPECT_EQ(cache.length(), 1) << kCacheMistakes.LooksLike("failed_append_changes");
}

TEST(KVCache, KeysAndValuesForDifferentNumbersOfPositionsAreRejected) {
  KVCache cache(/*n_kv_heads=*/2, /*d_head=*/3, /*capacity=*/8);
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { cache.append(Counting(2, 3, 3, 0.0f), Counting(2, 2, 3, 0.0f)); },
      {"(2, 3, 3)", "(2, 2, 3)"}));
  EXPECT_EQ(cache.length(), 0) << kCacheMistakes.LooksLike("failed_append_changes");
}

TEST(KVCache, AppendingNoPositionIsRejected) {
  KVCache cache(/*n_kv_heads=*/2, /*d_head=*/3, /*capacity=*/8);
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { cache.append(Counting(2, 0, 3, 0.0f), Counting(2, 0, 3, 0.0f)); }, {"T_new=0"}));
}

TEST(KVCache, ClearForgetsThePositionsAndKeepsTheCapacity) {
  KVCache cache(/*n_kv_heads=*/2, /*d_head=*/2, /*capacity=*/3);
  cache.append(Counting(2, 3, 2, 0.0f), Counting(2, 3, 2, 0.0f));
  cache.clear();
  EXPECT_EQ(cache.length(), 0);
  EXPECT_EQ(cache.capacity(), 3);
  EXPECT_EQ(cache.bytes(), 0u);
  const Tensor3 k = Counting(2, 3, 2, 40.0f);
  cache.append(k, -k);  // all three slots are free again
  EXPECT_TRUE(AllClose(cache.keys(), k, kExact, {"kv head", "position", "feature"}));
  EXPECT_TRUE(AllClose(cache.values(), -k, kExact, {"kv head", "position", "feature"}));
}

TEST(KVCache, RejectsNonPositiveSizes) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { KVCache(0, 4, 8); }, {"n_kv_heads=0"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { KVCache(2, -1, 8); }, {"d_head=-1"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { KVCache(2, 4, 0); }, {"capacity=0"}));
}

// -------------------------------------------------------------- LatentCache

TEST(LatentCache, StartsEmptyWithTheCapacityItWasGiven) {
  LatentCache cache(/*kv_rank=*/5, /*capacity=*/9);
  EXPECT_EQ(cache.length(), 0);
  EXPECT_EQ(cache.capacity(), 9);
  EXPECT_EQ(cache.bytes(), 0u);
  // Empty because nothing was appended yet, not because it ignores appends.
  const Tensor2 c = {{1, 2, 3, 4, 5}};
  cache.append(c);
  EXPECT_EQ(cache.length(), 1) << "after one append";
  EXPECT_TRUE(AllClose(cache.latents(), c, kExact, {"position", "latent"})) << "after one append";
}

TEST(LatentCache, AppendedLatentsComeBackInOrder) {
  LatentCache cache(/*kv_rank=*/3, /*capacity=*/5);
  const Tensor2 c1 = {{1, 2, 3}, {4, 5, 6}};
  const Tensor2 c2 = {{7, 8, 9}};
  const Tensor2 c3 = {{10, 11, 12}, {13, 14, 15}};
  cache.append(c1);
  cache.append(c2);
  cache.append(c3);
  EXPECT_EQ(cache.length(), 5);
  const Tensor2 all = xt::concatenate(xt::xtuple(c1, c2, c3), 0);  // (5, 3)
  EXPECT_TRUE(AllClose(cache.latents(), all, kExact, {"position", "latent"}));
}

TEST(LatentCache, BytesCountOneLatentPerPositionHeld) {
  LatentCache cache(/*kv_rank=*/7, /*capacity=*/10);
  cache.append(xt::zeros<float>({3, 7}));
  EXPECT_EQ(cache.bytes(), 3u * 7 * sizeof(float))
      << LooksLikeIf(cache.bytes() == 2u * 3 * 7 * sizeof(float), "latent_bytes_kv");
}

TEST(LatentCache, AppendBeyondCapacityThrowsAndLeavesTheCacheUnchanged) {
  LatentCache cache(/*kv_rank=*/2, /*capacity=*/4);
  const Tensor2 c = {{1, 2}, {3, 4}, {5, 6}};
  cache.append(c);
  EXPECT_TRUE(ThrowsInvalidArgument([&] { cache.append(c); }, {"capacity=4", "3 + 3"}));
  EXPECT_EQ(cache.length(), 3) << kCacheMistakes.LooksLike("failed_append_changes");
  EXPECT_TRUE(AllClose(cache.latents(), c, kExact, {"position", "latent"}));
}

TEST(LatentCache, ALatentOfTheWrongWidthThrowsAndLeavesTheCacheUnchanged) {
  LatentCache cache(/*kv_rank=*/4, /*capacity=*/4);
  EXPECT_TRUE(ThrowsInvalidArgument([&] { cache.append(xt::zeros<float>({2, 5})); }, {"(2, 5)"}));
  EXPECT_EQ(cache.length(), 0) << kCacheMistakes.LooksLike("failed_append_changes");
}

TEST(LatentCache, ClearForgetsThePositionsAndKeepsTheCapacity) {
  LatentCache cache(/*kv_rank=*/2, /*capacity=*/2);
  cache.append(Tensor2{{1, 2}, {3, 4}});
  cache.clear();
  EXPECT_EQ(cache.length(), 0);
  EXPECT_EQ(cache.capacity(), 2);
  const Tensor2 c = {{5, 6}, {7, 8}};
  cache.append(c);
  EXPECT_TRUE(AllClose(cache.latents(), c, kExact, {"position", "latent"}));
}

TEST(LatentCache, RejectsNonPositiveSizes) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { LatentCache(0, 8); }, {"kv_rank=0"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { LatentCache(4, -2); }, {"capacity=-2"}));
}

}  // namespace
}  // namespace mha
