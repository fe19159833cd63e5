// Helpers of lab 7's tests: the public tests here and the grading tests (in
// the instructors' repository) name each classic mistake in the same words,
// and read profiles and labels alike.
//
//   MatchesGolden(Field(profiles, &HeadProfile::entropy), dir + "causal_entropy.npy", kRowOp,
//                 {"head"}, kHeadAnalysisMistakes.Of(dir + "causal_entropy", {"bits"}));
#ifndef MHA_LABS_07_HEAD_ANALYSIS_HEAD_ANALYSIS_TEST_UTIL_H_
#define MHA_LABS_07_HEAD_ANALYSIS_HEAD_ANALYSIS_TEST_UTIL_H_

#include <cstddef>
#include <vector>

#include <xtensor/xbuilder.hpp>

#include "common/testing/testing.h"
#include "labs/07_head_analysis/head_analysis.h"

namespace mha {
namespace testing {

// The classic mistakes of docs/07_head_analysis.md, by the names the golden
// generator gives what each one computes (<statistic>_mistake_<name>.npy).
inline const MistakeTable kHeadAnalysisMistakes(
    "docs/07_head_analysis.md",
    {
        {"bits", "entropy in bits (log2) instead of nats (ln)"},
        {"signed", "distance i - j without the absolute value"},
        {"signed_reversed", "distance j - i without the absolute value"},
        {"over_T",
         "previous-token sum divided by T instead of by the T - 1 queries that have a previous "
         "token"},
        {"key_i_minus_L",
         "induction target i - L (the previous occurrence) instead of i - L + 1 (the token "
         "after it)"},
        {"key_i_minus_L_plus_2", "induction target i - L + 2 instead of i - L + 1"},
        {"over_2L",
         "induction score divided by all 2L queries instead of the L queries of the second "
         "copy"},
    });

// What a label in the wrong order says.
inline const char kOrder[] =
    "the first rule that holds wins: induction, previous-token, self, first-token, local, "
    "diffuse; see docs/07_head_analysis.md, \"Classic mistakes\"";

// The same field of every profile, as an (H,) tensor.
inline Tensor1 Field(const std::vector<HeadProfile>& profiles, float HeadProfile::*field) {
  Tensor1 out = xt::zeros<float>({profiles.size()});
  for (std::size_t h = 0; h < profiles.size(); ++h) out(h) = profiles[h].*field;
  return out;
}

// A profile with every statistic below its threshold ("diffuse").
inline HeadProfile Quiet() { return HeadProfile{2.0f, 3.0f, 0.1f, 0.1f, 0.1f}; }

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_07_HEAD_ANALYSIS_HEAD_ANALYSIS_TEST_UTIL_H_
