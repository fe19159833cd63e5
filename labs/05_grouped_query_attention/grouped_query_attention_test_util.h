// Helpers of lab 5's tests: the public tests here and the grading tests (in
// the instructors' repository) name each classic mistake in the same words.
// The golden generator writes what a mistake computes next to the right
// result (<case>_mistake_<name>.npy):
//
//   MatchesGolden(layer.forward(x), dir + "output.npy", kLayer, axes,
//                 {GqaMistake(dir + "output_mistake_tiled.npy", kTiled)});
#ifndef MHA_LABS_05_GROUPED_QUERY_ATTENTION_GROUPED_QUERY_ATTENTION_TEST_UTIL_H_
#define MHA_LABS_05_GROUPED_QUERY_ATTENTION_GROUPED_QUERY_ATTENTION_TEST_UTIL_H_

#include <string>

#include "common/testing.h"
#include "labs/05_grouped_query_attention/grouped_query_attention.h"

namespace mha {
namespace testing {

// The mistake whose result the generator wrote to `golden`, in `words`; the
// message sends the reader to the lesson.
inline KnownMistake GqaMistake(const std::string& golden, const std::string& words) {
  return {golden, words + "; see docs/05_grouped_query_attention.md, \"Classic mistakes\""};
}

inline const char kTiled[] =
    "kv heads tiled (np.tile: query head h reads kv head h % n_kv_heads) instead of "
    "repeated in place (np.repeat: h / (n_heads / n_kv_heads))";
inline const char kOrder[] = "weights drawn in the wrong order (the API draws W_Q, W_K, W_V, W_O)";
inline const char kSquare[] =
    "W_K and W_V drawn (d_model, d_model) as in lab 3: no kv head is shared";
inline const char kFanIn[] =
    "W_K and W_V scaled by 1/sqrt(n_kv_heads*d_head) instead of fan-in d_model";
inline const char kNoMask[] = "the mask is not passed to attention";

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
