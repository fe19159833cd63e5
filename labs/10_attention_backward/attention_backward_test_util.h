// Helpers and shared cases of lab 10's tests: the public tests here and the
// grading tests (in the instructors' repository) run the same checks, each on
// its own golden set (a folder of .npy files written by a golden generator),
// and name each classic mistake of a backward pass in the same words. The
// grading tests add cases of their own on top.
//
//   MatchesGolden(grads.dq, dir + "pub_dq.npy", kLayer, axes,
//                 kAttentionBackwardMistakes.Of(dir + "pub_dq", {"no_row_sum", "no_scale"}));
#ifndef MHA_LABS_10_ATTENTION_BACKWARD_ATTENTION_BACKWARD_TEST_UTIL_H_
#define MHA_LABS_10_ATTENTION_BACKWARD_ATTENTION_BACKWARD_TEST_UTIL_H_

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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
        {"mask_not_in_backward",
         "mha_backward did not pass its mask on: the forward and P were recomputed without "
         "it, so masked keys get weight and gradient"},
        {"dx_weights_not_transposed",
         "dx used the weights untransposed (dQ W_Q instead of dQ W_Q^T)"},
    });

// Which mistakes change which gradient (the generator's tables).
inline const std::vector<std::string> kDqMistakes = {"no_row_sum", "row_sum_over_queries",
                                                     "no_scale"};
inline const std::vector<std::string> kDkMistakes = {"no_row_sum", "row_sum_over_queries",
                                                     "no_scale", "dk_dv_swapped"};
inline const std::vector<std::string> kDvMistakes = {"dk_dv_swapped"};

// One gradient of a result: its name in the goldens (<case>_<name>.npy), its
// member, its axes and the mistakes that change it.
template <class Grads, class Tensor>
struct GradCheck {
  std::string name;
  Tensor Grads::*member;
  std::vector<std::string> axes;
  std::vector<std::string> mistakes;
};

inline const std::vector<GradCheck<AttentionGrads, Tensor3>>& AttentionGradChecks() {
  static const std::vector<GradCheck<AttentionGrads, Tensor3>> checks = {
      {"dq", &AttentionGrads::dq, {"head", "query", "column"}, kDqMistakes},
      {"dk", &AttentionGrads::dk, {"head", "key", "column"}, kDkMistakes},
      {"dv", &AttentionGrads::dv, {"head", "key", "column"}, kDvMistakes},
  };
  return checks;
}

inline const std::vector<GradCheck<MhaGrads, Tensor2>>& LayerGradChecks() {
  static const std::vector<GradCheck<MhaGrads, Tensor2>> checks = {
      {"dx",
       &MhaGrads::dx,
       {"token", "column"},
       {"dx_query_path_only", "dx_weights_not_transposed", "no_row_sum", "row_sum_over_queries",
        "no_scale", "dk_dv_swapped"}},
      {"dW_Q", &MhaGrads::dW_Q, {"row", "column"}, kDqMistakes},
      {"dW_K", &MhaGrads::dW_K, {"row", "column"}, kDkMistakes},
      {"dW_V", &MhaGrads::dW_V, {"row", "column"}, kDvMistakes},
      {"dW_O", &MhaGrads::dW_O, {"row", "column"}, {"w_o_grad_transposed"}},
  };
  return checks;
}

// One golden case of attention_backward: the folder of goldens `dir` and the
// case `name` (<name>_q/_k/_v.npy, <name>_mask.npy when masked, and
// <name>_d_output.npy). A mask removes something, so mask_leak applies too.
struct AttentionCase {
  std::string dir;
  std::string name;
  bool masked;

  AttentionGrads Grads() const {
    const AttentionInputs in = LoadAttentionInputs(dir, name, masked ? name : "");
    const Tensor3 d_out = LoadGolden<3>(dir + name + "_d_output.npy");  // (H, T, d_head)
    return attention_backward(in.q, in.k, in.v, in.mask, d_out);
  }
};

// One golden case of mha_backward: `layer` on <inputs>_x.npy with <inputs>_d_y.npy
// and `mask`; its gradients are <name>_dx.npy, <name>_dW_Q.npy, ...
struct LayerCase {
  std::string dir;
  std::string inputs;
  std::string name;
  bool masked = false;  // a mask that removes something: mask_not_in_backward applies

  MhaGrads Grads(const MultiHeadAttention& layer, const std::optional<Tensor2>& mask) const {
    const Tensor2 x = LoadGolden<2>(dir + inputs + "_x.npy");      // (T, d_model)
    const Tensor2 d_y = LoadGolden<2>(dir + inputs + "_d_y.npy");  // (T, d_model)
    return mha_backward(layer, x, mask, d_y);
  }
};

// Shared cases.

// The gradient `check` of `g` equals <case>_<grad>.npy (torch autograd); a
// failure names the first mistake it looks like, unless `with_mistakes` is false.
inline void ExpectGradMatchesTorch(const AttentionCase& c, const AttentionGrads& g,
                                   const GradCheck<AttentionGrads, Tensor3>& check,
                                   bool with_mistakes = true) {
  std::vector<std::string> names = check.mistakes;
  if (c.masked) names.push_back("mask_leak");
  const std::string golden = c.dir + c.name + "_" + check.name;
  EXPECT_TRUE(MatchesGolden(g.*check.member, golden + ".npy", kLayer, check.axes,
                            with_mistakes ? kAttentionBackwardMistakes.Of(golden, names)
                                          : std::vector<KnownMistake>{}));
}

inline void ExpectGradMatchesTorch(const LayerCase& c, const MhaGrads& g,
                                   const GradCheck<MhaGrads, Tensor2>& check) {
  std::vector<std::string> names = check.mistakes;
  if (c.masked) names.push_back("mask_not_in_backward");
  const std::string golden = c.dir + c.name + "_" + check.name;
  EXPECT_TRUE(MatchesGolden(g.*check.member, golden + ".npy", kLayer, check.axes,
                            kAttentionBackwardMistakes.Of(golden, names)));
}

// attention_backward on the case: dq, dk and dv all match torch. Returns them.
inline AttentionGrads ExpectAttentionCaseMatchesTorch(const AttentionCase& c,
                                                      bool with_mistakes = true) {
  const AttentionGrads g = c.Grads();
  for (const auto& check : AttentionGradChecks()) {
    ExpectGradMatchesTorch(c, g, check, with_mistakes);
  }
  return g;
}

// mha_backward on the case: dx and the four weight gradients all match torch.
inline void ExpectLayerCaseMatchesTorch(const LayerCase& c, const MultiHeadAttention& layer,
                                        const std::optional<Tensor2>& mask) {
  const MhaGrads g = c.Grads(layer, mask);
  LayerCase named = c;
  named.masked = mask.has_value();  // every masked golden case masks something
  for (const auto& check : LayerGradChecks()) ExpectGradMatchesTorch(named, g, check);
}

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_10_ATTENTION_BACKWARD_ATTENTION_BACKWARD_TEST_UTIL_H_
