// Helpers and shared cases of lab 3's tests: the public tests here and the
// grading tests (in the instructors' repository) run the same checks, each on
// its own golden set (LayerGoldens: a folder of .npy files and the layer they
// were computed with), so that both name a classic mistake in the same words.
// The grading tests add cases of their own on top.
//
//   const LayerGoldens kGoldens = {"labs/03_output_projection/golden/", 10, 2, 5};
//   TEST(MultiHeadAttentionPublic, ForwardMatchesTorchWithoutMask) {
//     ExpectForwardMatchesGolden(kGoldens, "x", "", "plain_forward");
//   }
#ifndef MHA_LABS_03_OUTPUT_PROJECTION_MULTI_HEAD_ATTENTION_TEST_UTIL_H_
#define MHA_LABS_03_OUTPUT_PROJECTION_MULTI_HEAD_ATTENTION_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>

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

// The mistakes the tests name in words of their own: by another case's
// golden (what the layer computes when it ignores n_heads or caches its
// weights), a count or an exception; as data for the grader
// (common/testing/misconception.h).
inline const MistakeTable kLayerCheckMistakes(
    "docs/03_output_projection.md",
    {
        {"n_heads_ignored", "n_heads was ignored: the layer used 3 heads"},
        {"w_o_cached",
         "overwriting W_O had no effect: something derived from the weights was cached"},
        {"parameter_count", "four (d_model, d_model) matrices, W_O included"},
        {"parameter_count_heads", "the head count must not matter"},
        {"indivisible_accepted",
         "the constructor must refuse sizes it cannot split into equal heads"},
        {"w_q_cached",
         "overwriting W_Q had no effect: something derived from the weights (a fused W_QKV?) "
         "was cached"},
    });

// The four weights stacked in the order they are drawn: (4, d_model, d_model).
inline Tensor3 StackedWeights(const MultiHeadAttention& layer) {
  return xt::stack(xt::xtuple(layer.W_Q, layer.W_K, layer.W_V, layer.W_O));
}

inline const std::vector<std::string> kStackedWeightAxes = {"matrix (0=W_Q 1=W_K 2=W_V 3=W_O)",
                                                            "row", "column"};

// A golden set: its folder and the layer (d_model, n_heads, seed) its
// goldens were computed with.
struct LayerGoldens {
  std::string dir;  // "labs/03_output_projection/golden/"
  int d_model;
  int n_heads;
  std::uint64_t seed;

  std::string File(const std::string& name) const { return dir + name + ".npy"; }
  MultiHeadAttention Layer() const { return MultiHeadAttention(d_model, n_heads, seed); }
  // The known mistakes `names` of golden `name` (kMultiHeadAttentionMistakes).
  std::vector<KnownMistake> Mistakes(const std::string& name,
                                     const std::vector<std::string>& names) const {
    return kMultiHeadAttentionMistakes.Of(dir + name, names);
  }
  // Mistake `name` of kLayerCheckMistakes, recognised by the golden `other`.
  KnownMistake OtherGolden(const std::string& other, const std::string& name) const {
    return {File(other), kLayerCheckMistakes.Message(name), kLayerCheckMistakes.Mistake(name)};
  }
};

// Shared cases.

// The set's layer draws W_Q, W_K, W_V, W_O in that order: <weights>.npy.
inline void ExpectSeededWeightsMatchGolden(const LayerGoldens& g, const std::string& weights) {
  EXPECT_TRUE(MatchesGolden(StackedWeights(g.Layer()), g.File(weights), kExact,
                            kStackedWeightAxes,
                            g.Mistakes(weights, {"w_o_drawn_first", "k_drawn_before_q"})));
}

// forward(<x>.npy, <mask>.npy unless `mask` is empty) equals <golden>.npy.
inline void ExpectForwardMatchesGolden(const LayerGoldens& g, const std::string& x_name,
                                       const std::string& mask, const std::string& golden) {
  const MultiHeadAttention layer = g.Layer();
  const Tensor2 x = LoadGolden<2>(g.File(x_name));  // (T, d_model)
  const Tensor2 y = mask.empty() ? layer.forward(x)
                                 : layer.forward(x, LoadGolden<2>(g.File(mask)));  // (T, T)
  EXPECT_TRUE(MatchesGolden(y, g.File(golden), kLayer, {"token", "column"},
                            g.Mistakes(golden, kForwardMistakes)));
}

// forward on x_large.npy (logits in the hundreds) is finite and equals
// large_forward.npy.
inline void ExpectLargeLogitsStayFiniteAndMatchGolden(const LayerGoldens& g) {
  const Tensor2 x = LoadGolden<2>(g.File("x_large"));  // (T, d_model)
  const Tensor2 y = g.Layer().forward(x);               // (T, d_model)
  EXPECT_TRUE(xt::all(xt::isfinite(y))) << "forward produced inf or NaN: the softmax must "
                                           "subtract each row's max before exp";
  EXPECT_TRUE(MatchesGolden(y, g.File("large_forward"), kLayer, {"token", "column"},
                            g.Mistakes("large_forward", kForwardMistakes)));
}

// attend(x.npy, <mask>.npy unless empty): its weights (or, with `output`,
// its per-head output) equal <golden>.npy.
inline void ExpectAttendMatchesGolden(const LayerGoldens& g, const std::string& mask,
                                      const std::string& golden, bool output = false) {
  const MultiHeadAttention layer = g.Layer();
  const Tensor2 x = LoadGolden<2>(g.File("x"));  // (T, d_model)
  const AttentionResult r =
      mask.empty() ? layer.attend(x) : layer.attend(x, LoadGolden<2>(g.File(mask)));
  EXPECT_TRUE(MatchesGolden(output ? r.output : r.weights, g.File(golden), kLayer,
                            output ? std::vector<std::string>{"head", "token", "column"}
                                   : std::vector<std::string>{"head", "query", "key"},
                            g.Mistakes(golden, kAttendMistakes)));
}

// After a first forward, overwriting the weight `member` (&MultiHeadAttention::W_Q)
// with new_<name>.npy changes the next forward to overwrite_<name>_forward.npy;
// a forward still equal to plain_forward.npy is named <name>_cached.
inline void ExpectOverwrittenWeightIsUsedByTheNextForward(const LayerGoldens& g,
                                                          Tensor2 MultiHeadAttention::*member,
                                                          const std::string& name) {
  MultiHeadAttention layer = g.Layer();
  const Tensor2 x = LoadGolden<2>(g.File("x"));  // (T, d_model)
  layer.forward(x);  // a first call, so caching on first use is caught too
  layer.*member = LoadGolden<2>(g.File("new_" + name));
  EXPECT_TRUE(MatchesGolden(layer.forward(x), g.File("overwrite_" + name + "_forward"), kLayer,
                            {"token", "column"},
                            {g.OtherGolden("plain_forward", name + "_cached")}));
}

inline void ExpectRejectsDModelNotDivisibleByNHeads() {
  EXPECT_TRUE(ThrowsInvalidArgument([] { MultiHeadAttention(10, 4); },
                                    {"d_model=10", "n_heads=4"}))
      << kLayerCheckMistakes.Named("indivisible_accepted");
}

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_03_OUTPUT_PROJECTION_MULTI_HEAD_ATTENTION_TEST_UTIL_H_
