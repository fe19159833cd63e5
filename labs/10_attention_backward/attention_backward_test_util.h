// Helpers of lab 10's tests: the public tests here and the grading tests (in
// the instructors' repository) name each classic mistake of a backward pass
// in the same words.
//
//   MatchesGolden(grads.dq, dir + "pub_dq.npy", kLayer, axes,
//                 kAttentionBackwardMistakes.Of(dir + "pub_dq", {"no_row_sum", "no_scale"}));
#ifndef MHA_LABS_10_ATTENTION_BACKWARD_ATTENTION_BACKWARD_TEST_UTIL_H_
#define MHA_LABS_10_ATTENTION_BACKWARD_ATTENTION_BACKWARD_TEST_UTIL_H_

#include "common/testing/testing.h"
#include "labs/10_attention_backward/attention_backward.h"

namespace mha {
namespace testing {

// The classic mistakes of docs/10_attention_backward.md, by the names the
// golden generator gives what each one computes (<case>_<grad>_mistake_<name>.npy).
inline const MistakeTable kAttentionBackwardMistakes(
    "docs/10_attention_backward.md",
    {
        {"no_row_sum",
         "the softmax backward is missing the row-sum term (dS = P * dP instead of "
         "P * (dP - rowsum(P * dP)))"},
        {"row_sum_over_queries",
         "the softmax backward's row sum runs over queries (a column sum) instead of over the "
         "keys of each row"},
        {"no_scale", "the 1/sqrt(d_head) scale was forgotten in dq and dk"},
        {"dk_dv_swapped", "dk and dv were swapped"},
        {"mask_leak", "masked positions leak gradient: P was recomputed without the mask"},
        {"w_o_grad_transposed",
         "the gradient of W_O is transposed (d_y^T concat instead of concat^T d_y)"},
        {"dx_query_path_only", "dx has only the query path (dQ W_Q^T); x also feeds K and V"},
        {"dx_weights_not_transposed",
         "dx used the weights untransposed (dQ W_Q instead of dQ W_Q^T)"},
    });

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_10_ATTENTION_BACKWARD_ATTENTION_BACKWARD_TEST_UTIL_H_
