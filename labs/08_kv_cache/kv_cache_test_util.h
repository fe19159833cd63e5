// Helpers and shared cases of lab 8's tests: the public tests here and the
// grading tests (in the instructors' repository) run the same checks, each on
// golden cases of their own (GqaCase, MlaCase: a layer, a sequence and its
// full causal forward, written by a golden generator), feed a decoder and
// name each classic mistake in the same way. The grading tests add cases of
// their own on top.
//
//   const GqaCase kGqa{"labs/08_kv_cache/golden/", "gqa", 24, 4, 2, 8, {3, 1, 4}};
//   TEST(GqaDecoderPublic, UnevenChunksGiveTheFullCausalForward) {
//     ExpectTheFullCausalForward(kGqa, "chunks");
//   }
#ifndef MHA_LABS_08_KV_CACHE_KV_CACHE_TEST_UTIL_H_
#define MHA_LABS_08_KV_CACHE_KV_CACHE_TEST_UTIL_H_

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "common/core/shape_string.h"
#include "common/testing/testing.h"
#include "labs/08_kv_cache/kv_cache.h"

namespace mha {
namespace testing {

// The classic mistakes of a decoder in docs/08_kv_cache.md, by the names the
// golden generator gives what each one returns
// (<case>_<schedule>_mistake_<name>.npy).
inline const MistakeTable kKvCacheMistakes(
    "docs/08_kv_cache.md",
    {
        {"top_left",
         "a top-left causal mask on the new queries (query i placed at position i instead of "
         "P + i), which hides most of the cache; the mask is causal_mask(T_new, P + T_new)"},
        {"appended_after",
         "the new keys and values appended after attending instead of before, so the new "
         "tokens see neither themselves nor each other"},
        {"off_by_one",
         "positions off by one inside a chunk (query i placed at P + i + 1 instead of P + i), "
         "so each token of a chunk also sees the next one"},
        {"kv_rank_scale", "scores scaled by 1/sqrt(kv_rank) instead of 1/sqrt(d_head)"},
        {"kv_heads_not_repeated",
         "the kv heads were not repeated for the query heads (repeat_kv) before attending"},
    });

// The mistakes the generator could tell apart when golden case `c` ("gqa",
// "mla", ...: the MLA cases start with "mla") is fed with `schedule`
// ("prefill", "single": one token at a time, "chunks"), from the folder of
// goldens `dir`.
inline std::vector<KnownMistake> DecoderMistakes(const std::string& dir, const std::string& c,
                                                 const std::string& schedule) {
  std::vector<std::string> names;
  if (schedule != "prefill") names.push_back("top_left");  // right on an empty cache
  names.push_back("appended_after");
  if (schedule != "single") names.push_back("off_by_one");  // needs a chunk of 2 or more
  if (c.rfind("mla", 0) == 0) names.push_back("kv_rank_scale");
  return kKvCacheMistakes.Of(dir + c + "_" + schedule, names);
}

// The mistakes the tests tell by a count or a shape (no golden), named as
// data for the grader (common/testing/misconception.h).
inline const MistakeTable kCacheMistakes(
    "docs/08_kv_cache.md",
    {
        {"bytes_capacity", "bytes() counts the capacity, not the positions held"},
        {"bytes_one_of_kv", "bytes() counts only one of K and V"},
        {"latent_bytes_kv",
         "bytes() counts a key and a value per latent; the latent stands for both"},
        {"failed_append_changes", "the failed append left the cache changed"},
        {"failed_step_changes", "the failed step left the cache changed"},
        {"repeated_kv_heads",
         "the cache stores the repeated kv heads (one per query head) instead of the "
         "n_kv_heads kv heads"},
        {"latent_stores_kv", "the latent cache stores K and V instead of the latent c"},
    });

// "<before>looks like <mistake>; see ..." when `seen` (the wrong value is
// that mistake's), else nothing.
inline MistakeNote LooksLikeIf(bool seen, const std::string& name,
                               const std::string& before = "") {
  if (!seen) return MistakeNote({}, "");
  const MistakeNote note = kCacheMistakes.LooksLike(name);
  return MistakeNote(note.mistake(), before + note.text());
}

// Why a valid step could throw std::invalid_argument (streamed after the
// failure: the mistake it names is recorded too).
inline MistakeNote WhyItThrew(const std::string& what) {
  if (what.find("head") != std::string::npos) {
    const MistakeNote note = kKvCacheMistakes.LooksLike("kv_heads_not_repeated");
    return MistakeNote(note.mistake(), "\n" + note.text());
  }
  return MistakeNote({}, "");
}

// Feeds x (T, d_model) to the decoder in chunks of the given sizes
// (testing::DecodeInChunks); a step that throws names the mistake its words
// suggest (WhyItThrew).
template <class Decoder>
std::optional<Tensor2> Decode(Decoder& decoder, const Tensor2& x, const std::vector<int>& chunks) {
  return DecodeInChunks(decoder, x, chunks, WhyItThrew);
}

// A golden case's layer: built with the public constructor, then given the
// generator's weights <case>_W_Q.npy, ... (`golden`: the folder and the case,
// "dir/gqa").
inline GroupedQueryAttention LoadGqaLayer(const std::string& golden, int d_model, int n_heads,
                                          int n_kv_heads) {
  GroupedQueryAttention layer(d_model, n_heads, n_kv_heads);
  layer.W_Q = LoadGolden<2>(golden + "_W_Q.npy");  // (d_model, d_model)
  layer.W_K = LoadGolden<2>(golden + "_W_K.npy");  // (d_model, n_kv_heads * d_head)
  layer.W_V = LoadGolden<2>(golden + "_W_V.npy");  // (d_model, n_kv_heads * d_head)
  layer.W_O = LoadGolden<2>(golden + "_W_O.npy");  // (d_model, d_model)
  return layer;
}

inline MultiHeadLatentAttention LoadMlaLayer(const std::string& golden, int d_model, int n_heads,
                                             int kv_rank) {
  MultiHeadLatentAttention layer(d_model, n_heads, kv_rank);
  layer.W_Q = LoadGolden<2>(golden + "_W_Q.npy");      // (d_model, d_model)
  layer.W_DKV = LoadGolden<2>(golden + "_W_DKV.npy");  // (d_model, kv_rank)
  layer.W_UK = LoadGolden<2>(golden + "_W_UK.npy");    // (kv_rank, d_model)
  layer.W_UV = LoadGolden<2>(golden + "_W_UV.npy");    // (kv_rank, d_model)
  layer.W_O = LoadGolden<2>(golden + "_W_O.npy");      // (d_model, d_model)
  return layer;
}

// One golden case of each decoder: the folder of goldens `dir`, the case
// `name` (its files <name>_x.npy, _W_Q.npy, ..., _forward.npy), the layer's
// sizes, the sequence length T and the generator's uneven chunking.
struct GqaCase {
  std::string dir;
  std::string name;
  int d_model, n_heads, n_kv_heads, T;
  std::vector<int> chunks;
};

struct MlaCase {
  std::string dir;
  std::string name;
  int d_model, n_heads, kv_rank, T;
  std::vector<int> chunks;
};

// The case's layer: constructed with the public constructor, then given the
// generator's weights.
inline GroupedQueryAttention Layer(const GqaCase& c) {
  return LoadGqaLayer(c.dir + c.name, c.d_model, c.n_heads, c.n_kv_heads);
}

inline MultiHeadLatentAttention Layer(const MlaCase& c) {
  return LoadMlaLayer(c.dir + c.name, c.d_model, c.n_heads, c.kv_rank);
}

// The chunk sizes of a schedule: "prefill" (all T at once), "single" (one
// token at a time) or "chunks" (the case's uneven chunking).
inline std::vector<int> Schedule(const std::string& schedule, int T,
                                 const std::vector<int>& chunks) {
  if (schedule == "prefill") return {T};
  if (schedule == "single") return std::vector<int>(static_cast<std::size_t>(T), 1);
  return chunks;
}

inline std::string ChunksString(const std::vector<int>& chunks) {
  std::string s = "chunks";
  for (int t : chunks) s += " " + std::to_string(t);
  return s;
}

// Shared cases.

// Decodes the case's sequence with the named schedule (a decoder of capacity
// T) and compares every row with the full causal forward; a failure names
// the first mistake the generator wrote for it (DecoderMistakes).
template <class Case>
void ExpectTheFullCausalForward(const Case& c, const std::string& schedule) {
  const auto layer = Layer(c);
  typename std::conditional<std::is_same<Case, GqaCase>::value, GqaDecoder, MlaDecoder>::type
      decoder(layer, c.T);
  const std::vector<int> chunks = Schedule(schedule, c.T, c.chunks);
  SCOPED_TRACE(c.name + ", " + schedule + " (" + ChunksString(chunks) + ")");
  const std::optional<Tensor2> rows =
      Decode(decoder, LoadGolden<2>(c.dir + c.name + "_x.npy"), chunks);
  ASSERT_TRUE(rows.has_value());
  EXPECT_TRUE(MatchesGolden(*rows, c.dir + c.name + "_forward.npy", kLayer, {"token", "column"},
                            DecoderMistakes(c.dir, c.name, schedule)));
}

// After the case's uneven chunks, a decoder of `capacity` holds the T
// positions' keys and values of the n_kv_heads kv heads only, equal to
// <name>_keys.npy and <name>_values.npy.
inline void ExpectTheCacheHoldsTheKeysAndValuesOfTheKvHeadsOnly(const GqaCase& c,
                                                                 int capacity) {
  const GroupedQueryAttention layer = Layer(c);
  GqaDecoder decoder(layer, capacity);
  ASSERT_TRUE(Decode(decoder, LoadGolden<2>(c.dir + c.name + "_x.npy"), c.chunks).has_value());
  const KVCache& cache = decoder.cache();
  EXPECT_EQ(cache.length(), c.T);
  EXPECT_EQ(cache.capacity(), capacity);
  const Tensor3 keys = cache.keys();  // (n_kv_heads, T, d_head)
  const std::size_t n_kv_heads = static_cast<std::size_t>(c.n_kv_heads);
  ASSERT_EQ(keys.shape(0), n_kv_heads)
      << "the cache holds " << keys.shape(0) << " heads, expected n_kv_heads=" << c.n_kv_heads
      << LooksLikeIf(keys.shape(0) == static_cast<std::size_t>(c.n_heads), "repeated_kv_heads",
                     "; ");
  const std::size_t d_head = static_cast<std::size_t>(c.d_model / c.n_heads);
  const std::size_t T = static_cast<std::size_t>(c.T);
  EXPECT_EQ(cache.bytes(), 2u * n_kv_heads * T * d_head * sizeof(float));
  EXPECT_TRUE(MatchesGolden(keys, c.dir + c.name + "_keys.npy", kAttention,
                            {"kv head", "position", "feature"}));
  EXPECT_TRUE(MatchesGolden(cache.values(), c.dir + c.name + "_values.npy", kAttention,
                            {"kv head", "position", "feature"}));
}

// After the case's uneven chunks, a decoder of `capacity` holds the T
// positions' latents only (kv_rank floats each), equal to <name>_latents.npy.
inline void ExpectTheCacheHoldsOnlyTheLatents(const MlaCase& c, int capacity) {
  const MultiHeadLatentAttention layer = Layer(c);
  MlaDecoder decoder(layer, capacity);
  ASSERT_TRUE(Decode(decoder, LoadGolden<2>(c.dir + c.name + "_x.npy"), c.chunks).has_value());
  const LatentCache& cache = decoder.cache();
  EXPECT_EQ(cache.length(), c.T);
  EXPECT_EQ(cache.capacity(), capacity);
  const Tensor2 latents = cache.latents();  // (T, kv_rank)
  const std::size_t kv_rank = static_cast<std::size_t>(c.kv_rank);
  ASSERT_EQ(latents.shape(1), kv_rank)
      << "the cache keeps " << latents.shape(1) << " floats per token, expected kv_rank="
      << c.kv_rank
      << LooksLikeIf(latents.shape(1) == 2 * static_cast<std::size_t>(c.d_model),
                     "latent_stores_kv", "; ");
  const std::size_t bytes = static_cast<std::size_t>(c.T) * kv_rank * sizeof(float);
  EXPECT_EQ(cache.bytes(), bytes) << LooksLikeIf(cache.bytes() == 2 * bytes, "latent_bytes_kv");
  EXPECT_TRUE(MatchesGolden(latents, c.dir + c.name + "_latents.npy", kAttention,
                            {"position", "latent"}));
}

// (heads, t, d) holding start, start + 1, ... in row-major order: every entry differs.
inline Tensor3 Counting(std::size_t heads, std::size_t t, std::size_t d, float start) {
  Tensor3 a = xt::empty<float>({heads, t, d});
  for (std::size_t i = 0; i < a.size(); ++i) a.data()[i] = start + static_cast<float>(i);
  return a;
}

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_08_KV_CACHE_KV_CACHE_TEST_UTIL_H_
