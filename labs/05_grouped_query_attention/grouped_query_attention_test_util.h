// Helpers of lab 5's tests: the public tests here and the grading tests (in
// the instructors' repository) name each classic mistake in the same words.
//
//   MatchesGolden(layer.forward(x), dir + "output.npy", kLayer, axes,
//                 kGroupedQueryAttentionMistakes.Of(dir + "output", {"tiled", "order"}));
#ifndef MHA_LABS_05_GROUPED_QUERY_ATTENTION_GROUPED_QUERY_ATTENTION_TEST_UTIL_H_
#define MHA_LABS_05_GROUPED_QUERY_ATTENTION_GROUPED_QUERY_ATTENTION_TEST_UTIL_H_

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

// What a wrong count says.
inline const char kCountHint[] =
    "parameter_count() is 2*d_model^2 + 2*d_model*n_kv_heads*d_head: only W_K and W_V "
    "shrink; see docs/05_grouped_query_attention.md, \"Classic mistakes\"";
inline const char kCacheHint[] =
    "the cache holds 2*n_kv_heads*d_head floats per token, none per query head; see "
    "docs/05_grouped_query_attention.md, \"Classic mistakes\"";

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_05_GROUPED_QUERY_ATTENTION_GROUPED_QUERY_ATTENTION_TEST_UTIL_H_
