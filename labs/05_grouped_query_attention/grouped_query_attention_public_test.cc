// Public tests for lab 5. Run: bazel test //labs/05_grouped_query_attention/...
// The grading tests check more than these; passing here is a good start.
#include "labs/05_grouped_query_attention/grouped_query_attention.h"

#include <gtest/gtest.h>

#include "common/testing.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::kExact;

TEST(RepeatKvPublic, RepeatsEachKvHeadInPlace) {
  // Two kv heads of one position and d_head=1, holding 1 and 2, for 4 query
  // heads: np.repeat gives 1, 1, 2, 2 (np.tile would give 1, 2, 1, 2).
  const Tensor3 kv = {{{1.0f}}, {{2.0f}}};  // (2, 1, 1)
  const Tensor3 expected = {{{1.0f}}, {{1.0f}}, {{2.0f}}, {{2.0f}}};
  EXPECT_TRUE(AllClose(repeat_kv(kv, 4), expected, kExact, {"head", "position", "feature"}));
}

TEST(GroupedQueryAttentionPublic, KeyAndValueWeightsAreNarrowerThanQueryWeights) {
  const GroupedQueryAttention layer(/*d_model=*/16, /*n_heads=*/4, /*n_kv_heads=*/2);
  EXPECT_EQ(layer.d_head, 4);
  EXPECT_EQ(layer.W_Q.shape(1), 16u);
  EXPECT_EQ(layer.W_K.shape(1), 8u);  // 2 kv heads of d_head 4
  EXPECT_EQ(layer.W_V.shape(1), 8u);
  EXPECT_EQ(layer.W_O.shape(1), 16u);
}

TEST(GroupedQueryAttentionPublic, ForwardKeepsTheInputShape) {
  const GroupedQueryAttention layer(16, 4, 2, /*seed=*/1);
  const Tensor2 x = testing::RandomTensor2(5, 16, /*seed=*/2);
  const Tensor2 y = layer.forward(x);
  EXPECT_EQ(y.shape(0), 5u);
  EXPECT_EQ(y.shape(1), 16u);
}

TEST(GroupedQueryAttentionPublic, CountsParametersAndCacheFloats) {
  const GroupedQueryAttention layer(16, 4, 2);
  EXPECT_EQ(layer.parameter_count(), 768u);           // 2*16^2 + 2*16*8
  EXPECT_EQ(layer.kv_cache_floats_per_token(), 16u);  // 2 * 2 * 4
}

}  // namespace
}  // namespace mha
