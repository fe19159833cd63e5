// Helpers of lab 6's tests: the public tests here and the grading tests (in
// the instructors' repository) name each classic mistake of the two forwards
// in the same words.
//
//   MatchesGolden(mla.forward_absorbed(x), dir + "case1_output.npy", kLayer, axes,
//                 LatentAbsorbedMistakes(dir + "case1_output", /*masked=*/false));
#ifndef MHA_LABS_06_LATENT_ATTENTION_LATENT_ATTENTION_TEST_UTIL_H_
#define MHA_LABS_06_LATENT_ATTENTION_LATENT_ATTENTION_TEST_UTIL_H_

#include <string>
#include <vector>

#include "common/testing/testing.h"
#include "labs/06_latent_attention/latent_attention.h"

namespace mha {
namespace testing {

// The classic mistakes of the forwards in docs/06_latent_attention.md, by
// the names the golden generator gives what each one computes
// (<case>_output_mistake_<name>.npy).
inline const MistakeTable kLatentAttentionMistakes(
    "docs/06_latent_attention.md",
    {
        {"kv_rank_scale", "scores scaled by 1/sqrt(kv_rank) instead of 1/sqrt(d_head)"},
        {"dmodel_scale", "scores scaled by 1/sqrt(d_model) instead of 1/sqrt(d_head)"},
        {"no_w_o", "the output projection W_O was never applied"},
        {"k_v_swapped", "keys built with W_UV and values with W_UK (swapped)"},
        {"mask_ignored", "the mask was never added to the scores"},
        {"wuk_reshaped",
         "W_UK reshaped to (d_model, kv_rank) instead of transposed when it was folded into the "
         "queries"},
        {"scores_transposed",
         "scores computed as c @ q_latent^T (keys x queries) instead of q_latent @ c^T"},
        {"whole_w_uv",
         "W_UV @ W_O folded with all of W_UV instead of head h's column block W_UV_h @ W_O_h"},
    });

// The mistakes that either forward can make, for the golden output `golden`
// (its path without ".npy") of a case with or without a mask.
inline std::vector<KnownMistake> LatentForwardMistakes(const std::string& golden, bool masked) {
  std::vector<std::string> names = {"kv_rank_scale", "dmodel_scale", "no_w_o", "k_v_swapped"};
  if (masked) names.push_back("mask_ignored");
  return kLatentAttentionMistakes.Of(golden, names);
}

// ... and those of the absorbed order besides.
inline std::vector<KnownMistake> LatentAbsorbedMistakes(const std::string& golden, bool masked) {
  std::vector<KnownMistake> m = LatentForwardMistakes(golden, masked);
  for (const KnownMistake& k : kLatentAttentionMistakes.Of(
           golden, {"wuk_reshaped", "scores_transposed", "whole_w_uv"})) {
    m.push_back(k);
  }
  return m;
}

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_06_LATENT_ATTENTION_LATENT_ATTENTION_TEST_UTIL_H_
