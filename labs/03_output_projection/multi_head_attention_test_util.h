// Helpers of lab 3's tests: the public tests here and the grading tests (in
// the instructors' repository) use the same ones, so that both name a
// classic mistake in the same words.
//
//   EXPECT_TRUE(MatchesGolden(layer.forward(x), dir + "plain_forward.npy", kLayer, axes,
//                             kMultiHeadAttentionMistakes.Of(dir + "plain_forward",
//                                                            kForwardMistakes)));
#ifndef MHA_LABS_03_OUTPUT_PROJECTION_MULTI_HEAD_ATTENTION_TEST_UTIL_H_
#define MHA_LABS_03_OUTPUT_PROJECTION_MULTI_HEAD_ATTENTION_TEST_UTIL_H_

#include <string>
#include <vector>

#include <xtensor/xbuilder.hpp>

#include "common/testing/testing.h"
#include "labs/03_output_projection/multi_head_attention.h"

namespace mha {
namespace testing {

// The classic mistakes of docs/03_output_projection.md, by the names the
// golden generator gives what each one computes (<case>_mistake_<name>.npy).
inline const MistakeTable kMultiHeadAttentionMistakes(
    "docs/03_output_projection.md",
    {
        {"no_w_o", "W_O was forgotten: forward returned the concatenated heads"},
        {"dmodel_scale", "scores scaled by 1/sqrt(d_model) instead of 1/sqrt(d_head)"},
        {"w_o_drawn_first",
         "the weights were drawn in the wrong order (W_O first; the order is W_Q, W_K, W_V, "
         "W_O)"},
        {"k_drawn_before_q",
         "the weights were drawn in the wrong order (W_K before W_Q; the order is W_Q, W_K, "
         "W_V, W_O)"},
        {"split_without_transpose",
         "heads split by reshaping (T, d_model) straight to (H, T, d_head), without the "
         "transpose"},
        {"w_o_per_head",
         "W_O applied to each head separately (only its diagonal block), so heads never mix"},
        {"w_o_transposed", "W_O applied transposed (concat @ W_O^T instead of concat @ W_O)"},
    });

// The mistakes the generator computes for forward's output, and for attend's.
inline const std::vector<std::string> kForwardMistakes = {
    "no_w_o",       "dmodel_scale",   "w_o_drawn_first", "k_drawn_before_q",
    "split_without_transpose", "w_o_per_head", "w_o_transposed"};
inline const std::vector<std::string> kAttendMistakes = {"dmodel_scale", "split_without_transpose",
                                                         "w_o_drawn_first", "k_drawn_before_q"};

// The four weights stacked in the order they are drawn: (4, d_model, d_model).
inline Tensor3 StackedWeights(const MultiHeadAttention& layer) {
  return xt::stack(xt::xtuple(layer.W_Q, layer.W_K, layer.W_V, layer.W_O));
}

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_03_OUTPUT_PROJECTION_MULTI_HEAD_ATTENTION_TEST_UTIL_H_
