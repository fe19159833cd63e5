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
#include <vector>

#include <gtest/gtest.h>

#include "common/testing/testing.h"
#include "labs/05_grouped_query_attention/grouped_query_attention_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::kCacheHint;
using testing::kCountHint;
using testing::kExact;
using testing::kHeadAxes;
using testing::LoadGolden;

// The golden set of these tests; the grading tests run the same cases
// (labs/05_grouped_query_attention/grouped_query_attention_test_util.h) on a
// set of their own.
const std::string kGolden = "labs/05_grouped_query_attention/golden/";

// The layer of the goldens: d_model=24, 4 query heads, 2 kv heads, seed 4.
GroupedQueryAttention Seed4Layer() { return GroupedQueryAttention(24, 4, 2, /*seed=*/4); }

TEST(RepeatKvPublic, MatchesNumpyRepeatOnTheHeadAxis) {
  // (3, 2, 4) kv heads for 6 query heads.
  testing::ExpectRepeatKvMatchesGolden(kGolden);
}

TEST(RepeatKvPublic, RepeatsEachKvHeadInPlace) {
  // Two kv heads of one position and d_head=1, holding 1 and 2, for 4 query
  // heads: np.repeat gives 1, 1, 2, 2 (np.tile would give 1, 2, 1, 2).
  const Tensor3 kv = {{{1.0f}}, {{2.0f}}};  // (2, 1, 1)
  const Tensor3 expected = {{{1.0f}}, {{1.0f}}, {{2.0f}}, {{2.0f}}};
  EXPECT_TRUE(AllClose(repeat_kv(kv, 4), expected, kExact, kHeadAxes));
}

TEST(GroupedQueryAttentionPublic, DrawsWQWKWVWOInThatOrderLikeNumpy) {
  testing::ExpectSeededWeightsMatchGolden(Seed4Layer(), kGolden + "seed4_");
}

TEST(GroupedQueryAttentionPublic, ForwardMatchesTorch) {
  // x: (T=5, d_model=24).
  testing::ExpectForwardMatchesGolden(Seed4Layer(), kGolden + "x", std::nullopt,
                                      kGolden + "output", {"tiled", "order", "square", "fanin"});
}

TEST(GroupedQueryAttentionPublic, CausalForwardMatchesTorch) {
  const Tensor2 mask = LoadGolden<2>(kGolden + "mask_causal.npy");  // (T, T)
  testing::ExpectForwardMatchesGolden(Seed4Layer(), kGolden + "x", mask, kGolden + "output_causal",
                                      {"no_mask", "tiled", "order", "square", "fanin"});
}

TEST(GroupedQueryAttentionPublic, KeyAndValueWeightsAreNarrowerThanQueryWeights) {
  const GroupedQueryAttention layer = Seed4Layer();  // d_model 24, 4 heads, 2 kv heads
  EXPECT_EQ(layer.d_head, 6);
  EXPECT_EQ(layer.W_Q.shape(1), 24u);
  EXPECT_EQ(layer.W_K.shape(1), 12u);  // 2 kv heads of d_head 6
  EXPECT_EQ(layer.W_V.shape(1), 12u);
  EXPECT_EQ(layer.W_O.shape(1), 24u);
  // Zeros of those shapes would pass too: the narrow matrices hold the seeded draws.
  EXPECT_TRUE(testing::MatchesGolden(layer.W_K, kGolden + "seed4_W_K.npy", kExact, {"in", "out"}));
  EXPECT_TRUE(testing::MatchesGolden(layer.W_V, kGolden + "seed4_W_V.npy", kExact, {"in", "out"}));
}

TEST(GroupedQueryAttentionPublic, CountsParametersAndCacheFloats) {
  const GroupedQueryAttention layer = Seed4Layer();
  EXPECT_EQ(layer.parameter_count(), 1728u) << kCountHint;         // 2*24^2 + 2*24*12
  EXPECT_EQ(layer.kv_cache_floats_per_token(), 24u) << kCacheHint;  // 2 * 2 * 6
}

TEST(GroupedQueryAttentionPublic, RejectsQueryHeadsNotDivisibleByKvHeads) {
  testing::ExpectRejectsQueryHeadsNotDivisibleByKvHeads();
}

}  // namespace
}  // namespace mha
