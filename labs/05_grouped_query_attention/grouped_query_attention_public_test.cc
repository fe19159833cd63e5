// Public tests for lab 5. Run: bazel test //labs/05_grouped_query_attention/...
//
// The reference numbers in labs/05_grouped_query_attention/golden/ come from
// NumPy's default_rng (the seeded weights), np.repeat, and a float64 PyTorch
// computation that shares each kv head with torch.repeat_interleave. Next to
// each one lies what a classic mistake computes on the same input, so a
// failure can say "looks like <the mistake>"
// (docs/05_grouped_query_attention.md, "Classic mistakes"). The layer has
// d_model = 24, 4 query heads of d_head = 6 and 2 kv heads. The grading tests
// check the same things on other layers (MQA and MHA included), and more.
#include "labs/05_grouped_query_attention/grouped_query_attention.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/testing/testing.h"
#include "labs/05_grouped_query_attention/grouped_query_attention_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::kExact;
using testing::KnownMistake;
using testing::kCacheHint;
using testing::kCountHint;
using testing::kGroupedQueryAttentionMistakes;
using testing::kLayer;
using testing::LoadGolden;
using testing::MatchesGolden;
using testing::ThrowsInvalidArgument;

const std::string kGolden = "labs/05_grouped_query_attention/golden/";
const std::vector<std::string> kLayerAxes = {"token", "feature"};

// The known mistakes `names` of golden `golden` (grouped_query_attention_test_util.h).
std::vector<KnownMistake> Mistakes(const std::string& golden,
                                   const std::vector<std::string>& names) {
  return kGroupedQueryAttentionMistakes.Of(kGolden + golden, names);
}

// The layer of the goldens: d_model=24, 4 query heads, 2 kv heads, seed 4.
GroupedQueryAttention Seed4Layer() { return GroupedQueryAttention(24, 4, 2, /*seed=*/4); }

TEST(RepeatKvPublic, MatchesNumpyRepeatOnTheHeadAxis) {
  const Tensor3 kv = LoadGolden<3>(kGolden + "repeat_kv_input.npy");  // (3, 2, 4)
  EXPECT_TRUE(MatchesGolden(repeat_kv(kv, 6), kGolden + "repeat_kv_6heads.npy", kExact,
                            {"head", "position", "feature"},
                            Mistakes("repeat_kv_6heads", {"tiled"})));
}

TEST(RepeatKvPublic, RepeatsEachKvHeadInPlace) {
  // Two kv heads of one position and d_head=1, holding 1 and 2, for 4 query
  // heads: np.repeat gives 1, 1, 2, 2 (np.tile would give 1, 2, 1, 2).
  const Tensor3 kv = {{{1.0f}}, {{2.0f}}};  // (2, 1, 1)
  const Tensor3 expected = {{{1.0f}}, {{1.0f}}, {{2.0f}}, {{2.0f}}};
  EXPECT_TRUE(AllClose(repeat_kv(kv, 4), expected, kExact, {"head", "position", "feature"}));
}

TEST(GroupedQueryAttentionPublic, DrawsWQWKWVWOInThatOrderLikeNumpy) {
  const GroupedQueryAttention layer = Seed4Layer();
  const std::vector<std::string> axes = {"in", "out"};
  EXPECT_TRUE(MatchesGolden(layer.W_Q, kGolden + "seed4_W_Q.npy", kExact, axes)) << "W_Q";
  for (const auto& [name, w] : std::vector<std::pair<std::string, const Tensor2*>>{
           {"W_K", &layer.W_K}, {"W_V", &layer.W_V}}) {
    EXPECT_TRUE(MatchesGolden(*w, kGolden + "seed4_" + name + ".npy", kExact, axes,
                              Mistakes("seed4_" + name, {"order", "square", "fanin"})))
        << name;
  }
  EXPECT_TRUE(MatchesGolden(layer.W_O, kGolden + "seed4_W_O.npy", kExact, axes,
                            Mistakes("seed4_W_O", {"order", "square"})))
      << "W_O";
}

TEST(GroupedQueryAttentionPublic, ForwardMatchesTorch) {
  const Tensor2 x = LoadGolden<2>(kGolden + "x.npy");  // (T=5, d_model=24)
  EXPECT_TRUE(MatchesGolden(Seed4Layer().forward(x), kGolden + "output.npy", kLayer, kLayerAxes,
                            Mistakes("output", {"tiled", "order", "square", "fanin"})));
}

TEST(GroupedQueryAttentionPublic, CausalForwardMatchesTorch) {
  const Tensor2 x = LoadGolden<2>(kGolden + "x.npy");
  const Tensor2 mask = LoadGolden<2>(kGolden + "mask_causal.npy");  // (T, T)
  EXPECT_TRUE(MatchesGolden(Seed4Layer().forward(x, mask), kGolden + "output_causal.npy", kLayer,
                            kLayerAxes,
                            Mistakes("output_causal",
                                     {"no_mask", "tiled", "order", "square", "fanin"})));
}

TEST(GroupedQueryAttentionPublic, KeyAndValueWeightsAreNarrowerThanQueryWeights) {
  const GroupedQueryAttention layer(/*d_model=*/16, /*n_heads=*/4, /*n_kv_heads=*/2);
  EXPECT_EQ(layer.d_head, 4);
  EXPECT_EQ(layer.W_Q.shape(1), 16u);
  EXPECT_EQ(layer.W_K.shape(1), 8u);  // 2 kv heads of d_head 4
  EXPECT_EQ(layer.W_V.shape(1), 8u);
  EXPECT_EQ(layer.W_O.shape(1), 16u);
}

TEST(GroupedQueryAttentionPublic, CountsParametersAndCacheFloats) {
  const GroupedQueryAttention layer = Seed4Layer();
  EXPECT_EQ(layer.parameter_count(), 1728u) << kCountHint;         // 2*24^2 + 2*24*12
  EXPECT_EQ(layer.kv_cache_floats_per_token(), 24u) << kCacheHint;  // 2 * 2 * 6
}

TEST(GroupedQueryAttentionPublic, RejectsQueryHeadsNotDivisibleByKvHeads) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { GroupedQueryAttention(24, 6, 4); },
                                    {"n_heads=6", "n_kv_heads=4"}))
      << "uneven groups must be rejected: 6 query heads cannot form 4 equal groups; see "
         "docs/05_grouped_query_attention.md, \"Classic mistakes\"";
}

}  // namespace
}  // namespace mha
