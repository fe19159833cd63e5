// Helpers and shared cases of lab 13's tests: the public tests here and the
// grading tests (in the instructors' repository) run the same checks, each on
// its own golden set (a folder of .npy files written by a golden generator),
// and name each classic mistake in the same words. The grading tests add
// cases of their own on top.
//
//   MatchesGolden(model.logits(tokens), dir + "pub_logits.npy", kLayer, {"token", "logit"},
//                 kInductionHeadsMistakes.Of(dir + "pub_logits", {"no_residual"}));
#ifndef MHA_LABS_13_INDUCTION_HEADS_INDUCTION_HEADS_TEST_UTIL_H_
#define MHA_LABS_13_INDUCTION_HEADS_INDUCTION_HEADS_TEST_UTIL_H_

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

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
        {"embed_grad_overwritten",
         "a repeated token's embedding gradient was overwritten at each occurrence instead of "
         "accumulated: d_embed[token] sums d_x's rows of every position that holds it"},
        {"no_pos_grad",
         "the positions' gradient is missing: d_pos is zero, but x_0 = embed[tokens] + pos"},
        {"k_transposed",
         "K-composition has the transpose on the wrong side: (W_OV^a)^T W_QK^b instead of "
         "W_QK^b (W_OV^a)^T"},
    });

inline const std::vector<std::string> kRowColumn = {"row", "column"};

// Shared cases. `golden` is a golden path up to the case ("<dir>pub",
// "<dir>two"); the files are <golden>_<what>.npy.

// The gradients of layer `l`, `g`, equal <golden>_dW_Q_<l>.npy, ... (torch
// autograd); a failure names the first of `mistakes` it looks like.
inline void ExpectLayerGradsMatchTorch(const std::string& golden, const LayerGrads& g, int l,
                                       const std::vector<std::string>& mistakes) {
  const std::string s = "_" + std::to_string(l);
  for (const auto& [name, grad] : {std::pair<std::string, const Tensor2*>{"dW_Q", &g.dW_Q},
                                   {"dW_K", &g.dW_K},
                                   {"dW_V", &g.dW_V},
                                   {"dW_O", &g.dW_O}}) {
    const std::string file = golden + "_" + name + s;
    EXPECT_TRUE(MatchesGolden(*grad, file + ".npy", kLayer, kRowColumn,
                              kInductionHeadsMistakes.Of(file, mistakes)))
        << "layer " << l;
  }
}

// composition_scores' Q-, K- and V-composition equal <golden>_q.npy, _k.npy
// and _v.npy (NumPy); a wrong K-composition may be the transposed formula.
inline void ExpectCompositionMatches(const Composition& c, const std::string& golden) {
  const std::vector<std::string> axes = {"later head", "earlier head"};
  EXPECT_TRUE(MatchesGolden(c.q, golden + "_q.npy", kLayer, axes)) << "Q-composition";
  EXPECT_TRUE(MatchesGolden(c.k, golden + "_k.npy", kLayer, axes,
                            kInductionHeadsMistakes.Of(golden + "_k", {"k_transposed"})))
      << "K-composition";
  EXPECT_TRUE(MatchesGolden(c.v, golden + "_v.npy", kLayer, axes)) << "V-composition";
}

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_13_INDUCTION_HEADS_INDUCTION_HEADS_TEST_UTIL_H_
