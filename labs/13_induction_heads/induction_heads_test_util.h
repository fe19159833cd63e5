// Helpers of lab 13's tests: the public tests here and the grading tests (in
// the instructors' repository) name each classic mistake in the same words.
//
//   MatchesGolden(model.logits(tokens), dir + "pub_logits.npy", kLayer, {"token", "logit"},
//                 kInductionHeadsMistakes.Of(dir + "pub_logits", {"no_residual"}));
#ifndef MHA_LABS_13_INDUCTION_HEADS_INDUCTION_HEADS_TEST_UTIL_H_
#define MHA_LABS_13_INDUCTION_HEADS_INDUCTION_HEADS_TEST_UTIL_H_

#include "common/testing/testing.h"
#include "labs/13_induction_heads/induction_heads.h"

namespace mha {
namespace testing {

// The classic mistakes of docs/13_induction_heads.md, by the names the
// golden generator gives what each one computes (<case>_<what>_mistake_<name>.npy).
inline const MistakeTable kInductionHeadsMistakes(
    "docs/13_induction_heads.md",
    {
        {"no_residual",
         "the residual was dropped: x_{l+1} = layer(x_l) instead of x_l + layer(x_l)"},
        {"no_residual_grad",
         "the backward skips the residual path: the gradient reaching x_l is the layer's dx "
         "only, without the gradient of x_{l+1} that flows around the layer"},
        {"no_mask_layer2", "the causal mask was forgotten in the layers after the first"},
        {"mean_over_all",
         "the mean loss was taken over all T positions instead of over the scored ones "
         "(targets >= 0)"},
        {"no_pos_grad",
         "the positions' gradient is missing: d_pos is zero, but x_0 = embed[tokens] + pos"},
        {"k_transposed",
         "K-composition has the transpose on the wrong side: (W_OV^a)^T W_QK^b instead of "
         "W_QK^b (W_OV^a)^T"},
    });

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_13_INDUCTION_HEADS_INDUCTION_HEADS_TEST_UTIL_H_
