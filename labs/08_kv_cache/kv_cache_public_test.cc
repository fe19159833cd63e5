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
using testing::Decode;
using testing::KnownMistake;
using testing::LoadGolden;
using testing::MatchesGolden;
using testing::ThrowsInvalidArgument;
using testing::kAttention;
using testing::kExact;
using testing::kLayer;

const std::string kSeeDoc = "; see docs/08_kv_cache.md, \"Classic mistakes\"";

const std::string kGolden = "labs/08_kv_cache/golden/";

std::string Golden(const std::string& name) { return kGolden + name + ".npy"; }

// The mistakes the generator could tell apart for a chunking ("prefill",
// "single", "chunks") of a case ("gqa", "mla"): kv_cache_test_util.h.
std::vector<KnownMistake> Mistakes(const std::string& c, const std::string& schedule) {
  return testing::DecoderMistakes(kGolden, c, schedule);
}

// The public GQA case: d_model 24, 4 query heads in 2 groups (d_head 6), with
// the generator's weights.
GroupedQueryAttention GqaLayer() { return testing::LoadGqaLayer(kGolden + "gqa", 24, 4, 2); }

// The public MLA case: d_model 20, 4 heads (d_head 5), kv_rank 6.
MultiHeadLatentAttention MlaLayer() { return testing::LoadMlaLayer(kGolden + "mla", 20, 4, 6); }

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
  std::string hint;
  if (cache.bytes() == expected / 2) hint = "looks like bytes() counts only one of K and V" + kSeeDoc;
  if (cache.bytes() == expected / 4 * 10) {
    hint = "looks like bytes() counts the capacity, not the positions held" + kSeeDoc;
  }
  EXPECT_EQ(cache.bytes(), expected) << hint;
}

TEST(KVCachePublic, AppendBeyondCapacityThrowsAndLeavesTheCacheUnchanged) {
  KVCache cache(/*n_kv_heads=*/2, /*d_head=*/3, /*capacity=*/4);
  const Tensor3 k = Counting(2, 3, 3, 0.0f), v = Counting(2, 3, 3, 100.0f);  // 3 positions
  cache.append(k, v);
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { cache.append(Counting(2, 2, 3, 7.0f), Counting(2, 2, 3, 7.0f)); }, {"capacity=4"}));
  EXPECT_EQ(cache.length(), 3) << "looks like the failed append left the cache changed" << kSeeDoc;
  EXPECT_TRUE(AllClose(cache.keys(), k, kExact, {"kv head", "position", "feature"}))
      << "the failed append left the cache changed" << kSeeDoc;
}

TEST(KVCachePublic, AppendOfTheWrongShapeThrowsAndLeavesTheCacheUnchanged) {
  KVCache cache(/*n_kv_heads=*/2, /*d_head=*/3, /*capacity=*/4);
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { cache.append(Counting(3, 1, 3, 0.0f), Counting(3, 1, 3, 0.0f)); }, {"(3, 1, 3)"}));
  EXPECT_EQ(cache.length(), 0) << "looks like the failed append left the cache changed" << kSeeDoc;
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
  const GroupedQueryAttention layer = GqaLayer();
  GqaDecoder decoder(layer, /*capacity=*/8);
  const std::optional<Tensor2> rows = Decode(decoder, LoadGolden<2>(Golden("gqa_x")), {8});
  ASSERT_TRUE(rows.has_value());
  EXPECT_TRUE(MatchesGolden(*rows, Golden("gqa_forward"), kLayer, {"token", "column"},
                            Mistakes("gqa", "prefill")));
}

TEST(GqaDecoderPublic, OneTokenAtATimeGivesTheFullCausalForward) {
  const GroupedQueryAttention layer = GqaLayer();
  GqaDecoder decoder(layer, /*capacity=*/8);
  const std::optional<Tensor2> rows =
      Decode(decoder, LoadGolden<2>(Golden("gqa_x")), {1, 1, 1, 1, 1, 1, 1, 1});
  ASSERT_TRUE(rows.has_value());
  EXPECT_TRUE(MatchesGolden(*rows, Golden("gqa_forward"), kLayer, {"token", "column"},
                            Mistakes("gqa", "single")));
}

TEST(GqaDecoderPublic, UnevenChunksGiveTheFullCausalForward) {
  const GroupedQueryAttention layer = GqaLayer();
  GqaDecoder decoder(layer, /*capacity=*/8);
  const std::optional<Tensor2> rows = Decode(decoder, LoadGolden<2>(Golden("gqa_x")), {3, 1, 4});
  ASSERT_TRUE(rows.has_value());
  EXPECT_TRUE(MatchesGolden(*rows, Golden("gqa_forward"), kLayer, {"token", "column"},
                            Mistakes("gqa", "chunks")));
}

TEST(GqaDecoderPublic, TheCacheHoldsTheKeysAndValuesOfTheKvHeadsOnly) {
  const GroupedQueryAttention layer = GqaLayer();
  GqaDecoder decoder(layer, /*capacity=*/10);
  ASSERT_TRUE(Decode(decoder, LoadGolden<2>(Golden("gqa_x")), {3, 1, 4}).has_value());
  const KVCache& cache = decoder.cache();
  EXPECT_EQ(cache.length(), 8);
  EXPECT_EQ(cache.capacity(), 10);
  const Tensor3 keys = cache.keys();
  ASSERT_EQ(keys.shape(0), 2u)
      << "the cache holds " << keys.shape(0) << " heads, expected n_kv_heads=2"
      << (keys.shape(0) == 4 ? "; looks like the cache stores the repeated kv heads (one per "
                               "query head) instead of the n_kv_heads kv heads" + kSeeDoc
                             : "");
  EXPECT_EQ(cache.bytes(), 2u * 2 * 8 * 6 * sizeof(float));
  EXPECT_TRUE(MatchesGolden(keys, Golden("gqa_keys"), kAttention, {"kv head", "position", "feature"}));
  EXPECT_TRUE(MatchesGolden(cache.values(), Golden("gqa_values"), kAttention,
                            {"kv head", "position", "feature"}));
}

TEST(GqaDecoderPublic, AStepBeyondCapacityThrowsAndLeavesTheCacheUnchanged) {
  const GroupedQueryAttention layer = GqaLayer();
  const Tensor2 x = LoadGolden<2>(Golden("gqa_x"));  // (8, 24)
  GqaDecoder decoder(layer, /*capacity=*/5);
  decoder.step(xt::view(x, xt::range(0, 3), xt::all()));
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { decoder.step(xt::view(x, xt::range(3, 6), xt::all())); }, {"capacity=5"}));
  EXPECT_EQ(decoder.cache().length(), 3)
      << "looks like the failed step left the cache changed" << kSeeDoc;
  // The decoder goes on from where it was: tokens 3 and 4 are rows 3 and 4.
  const Tensor2 y = decoder.step(xt::view(x, xt::range(3, 5), xt::all()));  // (2, 24)
  const Tensor2 expected = xt::view(LoadGolden<2>(Golden("gqa_forward")), xt::range(3, 5), xt::all());
  EXPECT_TRUE(AllClose(y, expected, kLayer, {"token", "column"}));
}

// --------------------------------------------------------------- MlaDecoder

TEST(MlaDecoderPublic, OneTokenAtATimeGivesTheFullCausalForward) {
  const MultiHeadLatentAttention layer = MlaLayer();
  MlaDecoder decoder(layer, /*capacity=*/7);
  const std::optional<Tensor2> rows =
      Decode(decoder, LoadGolden<2>(Golden("mla_x")), {1, 1, 1, 1, 1, 1, 1});
  ASSERT_TRUE(rows.has_value());
  EXPECT_TRUE(MatchesGolden(*rows, Golden("mla_forward"), kLayer, {"token", "column"},
                            Mistakes("mla", "single")));
}

TEST(MlaDecoderPublic, UnevenChunksGiveTheFullCausalForward) {
  const MultiHeadLatentAttention layer = MlaLayer();
  MlaDecoder decoder(layer, /*capacity=*/7);
  const std::optional<Tensor2> rows = Decode(decoder, LoadGolden<2>(Golden("mla_x")), {2, 3, 2});
  ASSERT_TRUE(rows.has_value());
  EXPECT_TRUE(MatchesGolden(*rows, Golden("mla_forward"), kLayer, {"token", "column"},
                            Mistakes("mla", "chunks")));
}

TEST(MlaDecoderPublic, TheCacheHoldsOnlyTheLatents) {
  const MultiHeadLatentAttention layer = MlaLayer();
  MlaDecoder decoder(layer, /*capacity=*/9);
  ASSERT_TRUE(Decode(decoder, LoadGolden<2>(Golden("mla_x")), {2, 3, 2}).has_value());
  const LatentCache& cache = decoder.cache();
  EXPECT_EQ(cache.length(), 7);
  EXPECT_EQ(cache.capacity(), 9);
  const Tensor2 latents = cache.latents();
  ASSERT_EQ(latents.shape(1), 6u)
      << "the cache keeps " << latents.shape(1) << " floats per token, expected kv_rank=6"
      << (latents.shape(1) == 40 ? "; looks like the latent cache stores K and V instead of "
                                   "the latent c" + kSeeDoc
                                 : "");
  EXPECT_EQ(cache.bytes(), 7u * 6 * sizeof(float))
      << (cache.bytes() == 2 * 7u * 6 * sizeof(float)
              ? "looks like bytes() counts a key and a value per latent; the latent stands "
                "for both" + kSeeDoc
              : "");
  EXPECT_TRUE(MatchesGolden(latents, Golden("mla_latents"), kAttention, {"position", "latent"}));
}

TEST(LatentCachePublic, AppendBeyondCapacityThrowsAndLeavesTheCacheUnchanged) {
  LatentCache cache(/*kv_rank=*/3, /*capacity=*/4);
  const Tensor2 c = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};  // (3, 3)
  cache.append(c);
  EXPECT_TRUE(ThrowsInvalidArgument([&] { cache.append(c); }, {"capacity=4"}));
  EXPECT_EQ(cache.length(), 3) << "looks like the failed append left the cache changed" << kSeeDoc;
  EXPECT_EQ(cache.bytes(), 3u * 3 * sizeof(float));
  EXPECT_TRUE(AllClose(cache.latents(), c, kExact, {"position", "latent"}));
}

}  // namespace
}  // namespace mha
