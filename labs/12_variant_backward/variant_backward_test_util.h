// Helpers of lab 12's tests: the public tests here and the grading tests (in
// the instructors' repository) name each classic mistake of the GQA and MLA
// backwards in the same words.
//
//   MatchesGolden(grads.dW_K, dir + "pub_gqa_dW_K.npy", kLayer, axes,
//                 kVariantBackwardMistakes.Of(dir + "pub_gqa_dW_K", {"kv_grad_tiled"}));
#ifndef MHA_LABS_12_VARIANT_BACKWARD_VARIANT_BACKWARD_TEST_UTIL_H_
#define MHA_LABS_12_VARIANT_BACKWARD_VARIANT_BACKWARD_TEST_UTIL_H_

#include "common/testing/testing.h"
#include "labs/12_variant_backward/variant_backward.h"

namespace mha {
namespace testing {

// The classic mistakes of docs/12_variant_backward.md, by the names the
// golden generator gives what each one computes (<case>_<grad>_mistake_<name>.npy).
inline const MistakeTable kVariantBackwardMistakes(
    "docs/12_variant_backward.md",
    {
        {"kv_grad_one_query_head",
         "a kv head's gradient was taken from one of its query heads instead of summed over "
         "all the query heads that read it"},
        {"kv_grad_tiled",
         "the query heads' gradients were summed in the tiled order (kv head h % n_kv_heads) "
         "instead of the repeated one (kv head h / (n_heads / n_kv_heads))"},
        {"mla_no_w_uk_path",
         "dW_DKV is missing the key path: the latent's gradient must be dK W_UK^T + dV W_UV^T, "
         "not dV W_UV^T alone"},
        {"dx_no_latent_path",
         "dx is missing the latent path: x feeds the queries and the latent, so "
         "dx = dQ W_Q^T + dc W_DKV^T"},
        {"no_scale", "the 1/sqrt(d_head) scale was forgotten in the backward (dq and dk)"},
    });

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_12_VARIANT_BACKWARD_VARIANT_BACKWARD_TEST_UTIL_H_
