// Helpers of lab 8's tests: the public tests here and the grading tests (in
// the instructors' repository) feed a decoder, build the layers of the golden
// cases and name each classic mistake in the same way.
//
//   GqaDecoder decoder(LoadGqaLayer(dir + "gqa", 24, 4, 2), /*capacity=*/8);
//   const std::optional<Tensor2> rows = Decode(decoder, x, {3, 1, 4});
//   EXPECT_TRUE(MatchesGolden(*rows, dir + "gqa_forward.npy", kLayer, axes,
//                             DecoderMistakes(dir, "gqa", "chunks")));
#ifndef MHA_LABS_08_KV_CACHE_KV_CACHE_TEST_UTIL_H_
#define MHA_LABS_08_KV_CACHE_KV_CACHE_TEST_UTIL_H_

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
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

// Why a valid step could throw std::invalid_argument (streamed after the
// failure: the mistake it names is recorded too).
inline MistakeNote WhyItThrew(const std::string& what) {
  if (what.find("head") != std::string::npos) {
    const MistakeNote note = kKvCacheMistakes.LooksLike("kv_heads_not_repeated");
    return MistakeNote(note.mistake(), "\n" + note.text());
  }
  return MistakeNote({}, "");
}

// Feeds x (T, d_model) to the decoder in chunks of the given sizes and stacks
// the rows the steps return: (T, d_model). A step that throws on these valid
// inputs, or returns the wrong shape, is reported and gives no rows.
template <class Decoder>
std::optional<Tensor2> Decode(Decoder& decoder, const Tensor2& x, const std::vector<int>& chunks) {
  Tensor2 rows = xt::zeros<float>(x.shape());
  int P = 0;
  for (int t : chunks) {
    const Tensor2 x_new = xt::view(x, xt::range(P, P + t), xt::all());  // (t, d_model)
    Tensor2 y;
    try {
      y = decoder.step(x_new);
    } catch (const std::invalid_argument& e) {
      ADD_FAILURE() << "step threw std::invalid_argument on a valid input (" << t
                    << " new tokens after " << P << "): " << e.what() << WhyItThrew(e.what());
      return std::nullopt;
    }
    if (y.shape(0) != static_cast<std::size_t>(t) || y.shape(1) != x.shape(1)) {
      ADD_FAILURE() << "step of " << t << " tokens after " << P << " returned shape "
                    << shape_string(y) << ", expected (" << t
                    << ", " << x.shape(1) << ")";
      return std::nullopt;
    }
    xt::view(rows, xt::range(P, P + t), xt::all()) = y;
    P += t;
  }
  return rows;
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

// (heads, t, d) holding start, start + 1, ... in row-major order: every entry differs.
inline Tensor3 Counting(std::size_t heads, std::size_t t, std::size_t d, float start) {
  Tensor3 a = xt::empty<float>({heads, t, d});
  for (std::size_t i = 0; i < a.size(); ++i) a.data()[i] = start + static_cast<float>(i);
  return a;
}

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_08_KV_CACHE_KV_CACHE_TEST_UTIL_H_
