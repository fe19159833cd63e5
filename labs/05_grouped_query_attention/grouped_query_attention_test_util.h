// Helpers and shared cases of lab 5's tests: the public tests here and the
// grading tests (in the instructors' repository) run the same checks, each on
// its own golden set (a folder of .npy files written by a golden generator),
// and name each classic mistake in the same words. The grading tests add
// cases of their own on top.
//
//   MatchesGolden(layer.forward(x), dir + "output.npy", kLayer, axes,
//                 kGroupedQueryAttentionMistakes.Of(dir + "output", {"tiled", "order"}));
#ifndef MHA_LABS_05_GROUPED_QUERY_ATTENTION_GROUPED_QUERY_ATTENTION_TEST_UTIL_H_
#define MHA_LABS_05_GROUPED_QUERY_ATTENTION_GROUPED_QUERY_ATTENTION_TEST_UTIL_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/testing/testing.h"
#include "labs/05_grouped_query_attention/grouped_query_attention.h"

namespace mha {
namespace testing {

// The classic mistakes of docs/05_grouped_query_attention.md, by the names
// the golden generator gives what each one computes
// (<case>_mistake_<name>.npy).
inline const MistakeTable kGroupedQueryAttentionMistakes(
    "docs/05_grouped_query_attention.md",
    {
        {"tiled",
         "kv heads tiled (np.tile: query head h reads kv head h % n_kv_heads) instead of "
         "repeated in place (np.repeat: h / (n_heads / n_kv_heads))"},
        {"order", "weights drawn in the wrong order (the API draws W_Q, W_K, W_V, W_O)"},
        {"square", "W_K and W_V drawn (d_model, d_model) as in lab 3: no kv head is shared"},
        {"fanin", "W_K and W_V scaled by 1/sqrt(n_kv_heads*d_head) instead of fan-in d_model"},
        {"no_mask", "the mask is not passed to attention"},
    });

// The mistakes the tests tell by a count or an exception, named as data for
// the grader (common/testing/misconception.h).
inline const MistakeTable kCountMistakes(
    "docs/05_grouped_query_attention.md",
    {
        {"parameter_count",
         "parameter_count() is 2*d_model^2 + 2*d_model*n_kv_heads*d_head: only W_K and W_V "
         "shrink"},
        {"cache_per_query_head",
         "the cache holds 2*n_kv_heads*d_head floats per token, none per query head"},
        {"uneven_groups_accepted",
         "uneven groups must be rejected: 6 query heads cannot form 4 equal groups"},
    });

// What a wrong count says ("...; see docs/05_grouped_query_attention.md, ...").
inline const MistakeNote kCountHint = kCountMistakes.Named("parameter_count");
inline const MistakeNote kCacheHint = kCountMistakes.Named("cache_per_query_head");

inline const std::vector<std::string> kHeadAxes = {"head", "position", "feature"};
inline const std::vector<std::string> kLayerAxes = {"token", "feature"};

// Shared cases. `golden` is a golden set's folder
// ("labs/05_grouped_query_attention/golden/").

// repeat_kv(<golden>repeat_kv_input.npy, 6) equals repeat_kv_6heads.npy (np.repeat).
inline void ExpectRepeatKvMatchesGolden(const std::string& golden) {
  const Tensor3 kv = LoadGolden<3>(golden + "repeat_kv_input.npy");  // (n_kv_heads, S, d_head)
  EXPECT_TRUE(MatchesGolden(repeat_kv(kv, 6), golden + "repeat_kv_6heads.npy", kExact, kHeadAxes,
                            kGroupedQueryAttentionMistakes.Of(golden + "repeat_kv_6heads",
                                                              {"tiled"})));
}

// `layer`'s four weights equal <weights>W_Q.npy, ..._W_O.npy (`weights`: the
// golden path up to the matrix name, "<golden>seed4_"), drawn in that order.
inline void ExpectSeededWeightsMatchGolden(const GroupedQueryAttention& layer,
                                           const std::string& weights) {
  const std::vector<std::string> axes = {"in", "out"};
  EXPECT_TRUE(MatchesGolden(layer.W_Q, weights + "W_Q.npy", kExact, axes)) << "W_Q";
  for (const auto& [name, w] : std::vector<std::pair<std::string, const Tensor2*>>{
           {"W_K", &layer.W_K}, {"W_V", &layer.W_V}}) {
    EXPECT_TRUE(MatchesGolden(
        *w, weights + name + ".npy", kExact, axes,
        kGroupedQueryAttentionMistakes.Of(weights + name, {"order", "square", "fanin"})))
        << name;
  }
  EXPECT_TRUE(MatchesGolden(
      layer.W_O, weights + "W_O.npy", kExact, axes,
      kGroupedQueryAttentionMistakes.Of(weights + "W_O", {"order", "square"})))
      << "W_O";
}

// layer.forward(<x>.npy, mask) equals <output>.npy (`x`, `output`: golden
// paths without ".npy"); a failure names the first of `mistakes` it looks like.
inline void ExpectForwardMatchesGolden(const GroupedQueryAttention& layer, const std::string& x,
                                       const std::optional<Tensor2>& mask,
                                       const std::string& output,
                                       const std::vector<std::string>& mistakes) {
  const Tensor2 input = LoadGolden<2>(x + ".npy");  // (T, d_model)
  EXPECT_TRUE(MatchesGolden(layer.forward(input, mask), output + ".npy", kLayer, kLayerAxes,
                            kGroupedQueryAttentionMistakes.Of(output, mistakes)));
}

inline void ExpectRejectsQueryHeadsNotDivisibleByKvHeads() {
  EXPECT_TRUE(ThrowsInvalidArgument([] { GroupedQueryAttention(24, 6, 4); },
                                    {"n_heads=6", "n_kv_heads=4"}))
      << kCountMistakes.Named("uneven_groups_accepted");
}

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_05_GROUPED_QUERY_ATTENTION_GROUPED_QUERY_ATTENTION_TEST_UTIL_H_
