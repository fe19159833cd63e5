// Helpers and shared cases of lab 12's tests: the public tests here and the
// grading tests (in the instructors' repository) run the same checks, each on
// golden cases of their own (VariantCase: the inputs and gradients a golden
// generator wrote), and name each classic mistake of the GQA and MLA
// backwards in the same words. The grading tests add cases of their own on top.
//
//   MatchesGolden(grads.dW_K, dir + "pub_gqa_dW_K.npy", kLayer, axes,
//                 kVariantBackwardMistakes.Of(dir + "pub_gqa_dW_K", {"kv_grad_tiled"}));
#ifndef MHA_LABS_12_VARIANT_BACKWARD_VARIANT_BACKWARD_TEST_UTIL_H_
#define MHA_LABS_12_VARIANT_BACKWARD_VARIANT_BACKWARD_TEST_UTIL_H_

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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
        {"kv_grad_overwritten",
         "a kv head's gradient was overwritten by each query head of its group (the last one "
         "wins) instead of summed over the group: add into dK and dV, do not assign"},
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
        {"mask_not_in_backward",
         "the mask was not passed to the backward: P was recomputed without it, so masked "
         "keys get weight and gradient"},
        {"dW_O_transposed",
         "the gradient of W_O is transposed: dW_O = concat^T d_y (d_model, d_model), not "
         "d_y^T concat"},
    });

inline const std::vector<std::string> kTokenAxes = {"token", "column"};
inline const std::vector<std::string> kWeightAxes = {"row", "column"};

// One gradient of a backward: its name in the goldens (<case>_<name>.npy),
// its member, its axes, the mistakes that change it and whether the kv-head
// summation mistakes (KvMistakes) change it too.
template <class Grads>
struct VariantGradCheck {
  std::string name;
  Tensor2 Grads::*member;
  std::vector<std::string> axes;
  std::vector<std::string> mistakes;
  bool kv;
};

inline const std::vector<VariantGradCheck<GqaGrads>>& GqaGradChecks() {
  static const std::vector<VariantGradCheck<GqaGrads>> checks = {
      {"dx", &GqaGrads::dx, kTokenAxes, {"no_scale", "mask_not_in_backward"}, true},
      {"dW_Q", &GqaGrads::dW_Q, kWeightAxes, {"no_scale", "mask_not_in_backward"}, false},
      {"dW_K", &GqaGrads::dW_K, kWeightAxes, {"no_scale", "mask_not_in_backward"}, true},
      {"dW_V", &GqaGrads::dW_V, kWeightAxes, {"mask_not_in_backward"}, true},
      {"dW_O", &GqaGrads::dW_O, kWeightAxes, {"dW_O_transposed", "mask_not_in_backward"}, false},
  };
  return checks;
}

inline const std::vector<VariantGradCheck<MlaGrads>>& MlaGradChecks() {
  static const std::vector<VariantGradCheck<MlaGrads>> checks = {
      {"dx", &MlaGrads::dx, kTokenAxes,
       {"dx_no_latent_path", "mla_no_w_uk_path", "no_scale", "mask_not_in_backward"}, false},
      {"dW_Q", &MlaGrads::dW_Q, kWeightAxes, {"no_scale", "mask_not_in_backward"}, false},
      {"dW_DKV", &MlaGrads::dW_DKV, kWeightAxes,
       {"mla_no_w_uk_path", "no_scale", "mask_not_in_backward"}, false},
      {"dW_UK", &MlaGrads::dW_UK, kWeightAxes, {"no_scale", "mask_not_in_backward"}, false},
      {"dW_UV", &MlaGrads::dW_UV, kWeightAxes, {"mask_not_in_backward"}, false},
      {"dW_O", &MlaGrads::dW_O, kWeightAxes, {"dW_O_transposed", "mask_not_in_backward"}, false},
  };
  return checks;
}

// The kv-head summation mistakes a GQA layer can make: one query head's
// gradient taken for its whole group, or overwritten by each in turn (when
// groups have 2+ heads), and the tiled order (when there are 2+ groups of 2+ heads).
inline std::vector<std::string> KvMistakes(const GroupedQueryAttention& layer) {
  std::vector<std::string> kv;
  if (layer.n_kv_heads < layer.n_heads) {
    kv.push_back("kv_grad_one_query_head");
    kv.push_back("kv_grad_overwritten");
  }
  if (layer.n_kv_heads > 1 && layer.n_kv_heads < layer.n_heads) kv.push_back("kv_grad_tiled");
  return kv;
}

// One golden case: the folder `dir`, the inputs <x>.npy, <d_y>.npy and the
// mask <mask>.npy (none when `mask` is empty), and the gradients'
// <name>_<grad>.npy.
struct VariantCase {
  std::string dir;
  std::string x, d_y, mask;
  std::string name;

  std::string File(const std::string& stem) const { return dir + stem + ".npy"; }
  std::optional<Tensor2> Mask() const {
    if (mask.empty()) return std::nullopt;
    return LoadGolden<2>(File(mask));  // (T, T)
  }
  GqaGrads Grads(const GroupedQueryAttention& layer) const {
    return gqa_backward(layer, LoadGolden<2>(File(x)), Mask(), LoadGolden<2>(File(d_y)));
  }
  MlaGrads Grads(const MultiHeadLatentAttention& layer) const {
    return mla_backward(layer, LoadGolden<2>(File(x)), Mask(), LoadGolden<2>(File(d_y)));
  }
};

// The check named `grad` ("dx", "dW_Q", ...) of a table.
template <class Grads>
const VariantGradCheck<Grads>& FindCheck(const std::vector<VariantGradCheck<Grads>>& checks,
                                         const std::string& grad) {
  for (const auto& check : checks) {
    if (check.name == grad) return check;
  }
  throw std::invalid_argument("no gradient named " + grad);
}

// Shared cases.

// The gradient `check` of `g` equals <name>_<grad>.npy (torch autograd); a
// failure names the first mistake it looks like, unless `with_mistakes` is false.
template <class Grads>
void ExpectGradMatchesTorch(const VariantCase& c, const Grads& g,
                            const VariantGradCheck<Grads>& check,
                            const std::vector<std::string>& kv, bool with_mistakes = true) {
  std::vector<std::string> names;
  for (const std::string& m : check.mistakes) {
    // Forgetting the mask changes nothing (and has no golden) in a case without one.
    if (m != "mask_not_in_backward" || !c.mask.empty()) names.push_back(m);
  }
  if (check.kv) names.insert(names.end(), kv.begin(), kv.end());
  const std::string golden = c.dir + c.name + "_" + check.name;
  EXPECT_TRUE(MatchesGolden(g.*check.member, golden + ".npy", kLayer, check.axes,
                            with_mistakes && !names.empty()
                                ? kVariantBackwardMistakes.Of(golden, names)
                                : std::vector<KnownMistake>{}));
}

// One gradient of gqa_backward / mla_backward on the case.
inline void ExpectGqaGradMatchesTorch(const VariantCase& c, const GroupedQueryAttention& layer,
                                      const std::string& grad) {
  ExpectGradMatchesTorch(c, c.Grads(layer), FindCheck(GqaGradChecks(), grad), KvMistakes(layer));
}

inline void ExpectMlaGradMatchesTorch(const VariantCase& c, const MultiHeadLatentAttention& layer,
                                      const std::string& grad) {
  ExpectGradMatchesTorch(c, c.Grads(layer), FindCheck(MlaGradChecks(), grad), {});
}

// Every gradient of gqa_backward / mla_backward on the case.
inline void ExpectGqaCaseMatchesTorch(const VariantCase& c, const GroupedQueryAttention& layer,
                                      bool with_mistakes = true) {
  const GqaGrads g = c.Grads(layer);
  for (const auto& check : GqaGradChecks()) {
    ExpectGradMatchesTorch(c, g, check, KvMistakes(layer), with_mistakes);
  }
}

inline void ExpectMlaCaseMatchesTorch(const VariantCase& c, const MultiHeadLatentAttention& layer,
                                      bool with_mistakes = true) {
  const MlaGrads g = c.Grads(layer);
  for (const auto& check : MlaGradChecks()) ExpectGradMatchesTorch(c, g, check, {}, with_mistakes);
}

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_12_VARIANT_BACKWARD_VARIANT_BACKWARD_TEST_UTIL_H_
