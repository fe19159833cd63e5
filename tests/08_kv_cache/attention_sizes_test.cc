// common/programs/attention_sizes.h must count exactly as the labs' classes do: the
// configurator sizes 8192-wide models with these formulas, and the only way
// to trust them is to check them on layers small enough to build.
// Links labs 5 and 6: run with --config=solutions.
#include "common/programs/attention_sizes.h"

#include <stdexcept>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "labs/05_grouped_query_attention/grouped_query_attention.h"
#include "labs/06_latent_attention/latent_attention.h"

namespace mha {
namespace {

TEST(AttentionSizes, GqaFormulasAgreeWithLab5) {
  for (const auto& [d, h, g] : std::vector<std::tuple<int, int, int>>{
           {8, 2, 2}, {8, 2, 1}, {16, 4, 2}, {24, 6, 3}, {32, 8, 2}, {64, 8, 8}, {96, 12, 4}}) {
    const GroupedQueryAttention layer(d, h, g);
    SCOPED_TRACE("d_model=" + std::to_string(d) + " n_heads=" + std::to_string(h) +
                 " n_kv_heads=" + std::to_string(g));
    EXPECT_EQ(sizes::gqa_parameters(d, h, g), static_cast<std::int64_t>(layer.parameter_count()));
    EXPECT_EQ(sizes::gqa_cache_floats_per_token(d, h, g),
              static_cast<std::int64_t>(layer.kv_cache_floats_per_token()));
  }
}

TEST(AttentionSizes, MlaFormulasWithoutRopeAgreeWithLab6) {
  for (const auto& [d, h, r] : std::vector<std::tuple<int, int, int>>{
           {8, 2, 3}, {20, 4, 6}, {24, 4, 10}, {64, 8, 16}, {96, 12, 40}}) {
    const MultiHeadLatentAttention layer(d, h, r);
    SCOPED_TRACE("d_model=" + std::to_string(d) + " n_heads=" + std::to_string(h) +
                 " kv_rank=" + std::to_string(r));
    EXPECT_EQ(sizes::mla_parameters(d, h, r), static_cast<std::int64_t>(layer.parameter_count()));
    EXPECT_EQ(sizes::mla_cache_floats_per_token(r),
              static_cast<std::int64_t>(layer.kv_cache_floats_per_token()));
  }
}

TEST(AttentionSizes, TheDecoupledRopeKeyAddsItsProjectionsAndOneSharedKey) {
  // W_KR (d_model, rope_dim) and W_QR (d_model, n_heads * rope_dim).
  EXPECT_EQ(sizes::mla_parameters(64, 8, 16, 4) - sizes::mla_parameters(64, 8, 16),
            64 * 4 + 64 * 8 * 4);
  EXPECT_EQ(sizes::mla_cache_floats_per_token(512, 64), 576);  // DeepSeek-V2
}

TEST(AttentionSizes, RejectShapesTheLabsReject) {
  EXPECT_THROW(sizes::gqa_parameters(10, 4, 1), std::invalid_argument);
  EXPECT_THROW(sizes::gqa_parameters(12, 6, 4), std::invalid_argument);
  EXPECT_THROW(sizes::gqa_cache_floats_per_token(0, 1, 1), std::invalid_argument);
  EXPECT_THROW(sizes::mla_parameters(12, 3, 0), std::invalid_argument);
  EXPECT_THROW(sizes::mla_cache_floats_per_token(8, -1), std::invalid_argument);
}

}  // namespace
}  // namespace mha
