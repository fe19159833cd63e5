// Helpers and shared cases of lab 2's tests: the public tests here and the
// grading tests (in the instructors' repository) run the same checks, each on
// its own golden set (a folder of .npy files written by a golden generator),
// so that both name a classic mistake in the same words and run every
// attention test on both versions alike. The grading tests add cases of
// their own on top.
#ifndef MHA_LABS_02_BATCHED_ATTENTION_ATTENTION_TEST_UTIL_H_
#define MHA_LABS_02_BATCHED_ATTENTION_ATTENTION_TEST_UTIL_H_

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>

#include "common/testing/testing.h"
#include "labs/02_batched_attention/attention.h"

namespace mha {
namespace testing {

// The classic mistakes of docs/02_batched_attention.md, by the names the
// golden generator gives what each one computes
// (<case>_<weights|output>_mistake_<name>.npy).
inline const MistakeTable kAttentionMistakes(
    "docs/02_batched_attention.md",
    {
        {"dmodel_scale",
         "scores scaled by 1/sqrt(d_model) = 1/sqrt(H*d_head) instead of 1/sqrt(d_head)"},
        {"no_scale", "scores not scaled by 1/sqrt(d_head)"},
        {"query_axis_softmax",
         "softmax taken over the queries (down each column) instead of over the keys of each "
         "row"},
        {"swapped_qk",
         "q and k swapped (scores = k @ q^T), so every head's weights are transposed"},
        {"mask_ignored", "the mask was never added to the scores"},
        {"mask_after_softmax",
         "the mask added to the weights after the softmax, not to the scores before it"},
        {"nan_row",
         "a fully masked row left as NaN instead of zeros (a query that sees no key)"},
        {"no_max",
         "a softmax that does not subtract the row max first (exp overflowed to inf, inf/inf "
         "is NaN)"},
    });

// The mistakes the generator computes for a case without a mask, with one,
// and with one when T < S, in the table's order (the first that matches
// names a failure).
inline const std::vector<std::string> kUnmaskedMistakes = {"dmodel_scale", "no_scale",
                                                           "query_axis_softmax", "swapped_qk"};
inline const std::vector<std::string> kMaskedMistakes = {
    "dmodel_scale", "no_scale", "query_axis_softmax", "mask_ignored", "mask_after_softmax",
    "nan_row"};
inline const std::vector<std::string> kCrossMaskedMistakes = {"dmodel_scale", "no_scale",
                                                              "query_axis_softmax",
                                                              "mask_ignored"};

// What a failed shape check says ("mismatched shapes must throw ...; see
// docs/02_batched_attention.md, ..."), named as data for the grader
// (common/testing/misconception.h).
inline const MistakeTable kShapeMistakes(
    "docs/02_batched_attention.md",
    {{"shapes_unchecked", "mismatched shapes must throw std::invalid_argument naming them"}});
inline const MistakeNote kAttentionShapeChecks = kShapeMistakes.Named("shapes_unchecked");

// The table's nan_row, worded for softmax_rows alone.
inline const std::string kNanRow =
    "a fully masked row left as NaN instead of zeros (an all -inf row: -inf - (-inf) is NaN)";

// The axes of the weights, of the output and of softmax_rows, for messages.
inline const std::vector<std::string> kWeightAxes = {"head", "query", "key"};
inline const std::vector<std::string> kOutputAxes = {"head", "query", "column"};
inline const std::vector<std::string> kSoftmaxAxes = {"row", "column"};

// attention_loop or attention_batched.
using AttentionFn = AttentionResult (*)(const Tensor3&, const Tensor3&, const Tensor3&,
                                        const std::optional<Tensor2>&);

// Shared cases. `golden` is a golden set's folder ("labs/02_batched_attention/golden/").

// softmax_rows(<golden><name>_scores.npy) equals <name>_probs.npy; a failure
// names the first of `mistakes` it looks like.
inline void ExpectSoftmaxRowsMatchesGolden(const std::string& golden, const std::string& name,
                                           const std::vector<KnownMistake>& mistakes = {}) {
  const Tensor2 scores = LoadGolden<2>(golden + name + "_scores.npy");  // (rows, columns)
  EXPECT_TRUE(MatchesGolden(softmax_rows(scores), golden + name + "_probs.npy", kRowOp,
                            kSoftmaxAxes, mistakes));
}

// The rows of <golden><name>_scores.npy that are all -inf become zeros, not NaN.
inline void ExpectSoftmaxRowsTurnsMaskedRowsIntoZeros(const std::string& golden,
                                                      const std::string& name) {
  ExpectSoftmaxRowsMatchesGolden(
      golden, name,
      {{golden + name + "_probs_mistake_nan_row.npy",
        kNanRow + "; see " + kAttentionMistakes.doc() + ", \"Classic mistakes\"",
        {"nan_row", kNanRow, kAttentionMistakes.doc()}}});
}

// Which of attend's results a golden case compares: weights, output or both
// (weights first).
enum class AttentionPart { kWeights, kOutput, kBoth };

// attend(q, k, v, mask) of the golden inputs <qkv>_q/_k/_v.npy (and
// <mask>_mask.npy unless `mask` is empty) equals <name>_weights.npy and/or
// <name>_output.npy; a failure names the first of the generator's `mistakes`
// (kAttentionMistakes) it looks like.
inline void ExpectAttentionMatchesGolden(AttentionFn attend, const std::string& golden,
                                         const std::string& qkv, const std::string& mask,
                                         const std::string& name,
                                         const std::vector<std::string>& mistakes,
                                         AttentionPart part = AttentionPart::kBoth) {
  const AttentionInputs in = LoadAttentionInputs(golden, qkv, mask);
  const AttentionResult r = attend(in.q, in.k, in.v, in.mask);
  if (part != AttentionPart::kOutput) {
    EXPECT_TRUE(MatchesGolden(r.weights, golden + name + "_weights.npy", kAttention, kWeightAxes,
                              kAttentionMistakes.Of(golden + name + "_weights", mistakes)));
  }
  if (part != AttentionPart::kWeights) {
    EXPECT_TRUE(MatchesGolden(r.output, golden + name + "_output.npy", kAttention, kOutputAxes,
                              kAttentionMistakes.Of(golden + name + "_output", mistakes)));
  }
}

// A (S, T) mask where attend needs (T, S) is refused, naming both shapes.
inline void ExpectAttentionRejectsATransposedMask(AttentionFn attend, std::size_t T,
                                                  std::size_t S, std::size_t d_head) {
  const Tensor3 q = xt::zeros<float>({std::size_t{2}, T, d_head});   // (H=2, T, d_head)
  const Tensor3 kv = xt::zeros<float>({std::size_t{2}, S, d_head});  // (H=2, S, d_head)
  const Tensor2 mask = xt::zeros<float>({S, T});   // transposed: must be (T, S)
  const std::string given = "(" + std::to_string(S) + ", " + std::to_string(T) + ")";
  const std::string wanted = "(" + std::to_string(T) + ", " + std::to_string(S) + ")";
  EXPECT_TRUE(ThrowsInvalidArgument([&] { attend(q, kv, kv, mask); }, {given, wanted}))
      << kAttentionShapeChecks;
}

// attend on q, k and v of these shapes (zeros, no mask) is refused, naming
// the shapes that disagree (`mentions`, e.g. {"(2, 4, 3)", "(3, 4, 3)"}).
inline void ExpectAttentionRejectsShapes(AttentionFn attend,
                                         const std::array<std::size_t, 3>& q_shape,
                                         const std::array<std::size_t, 3>& k_shape,
                                         const std::array<std::size_t, 3>& v_shape,
                                         const std::vector<std::string>& mentions) {
  const Tensor3 q = xt::zeros<float>(q_shape);
  const Tensor3 k = xt::zeros<float>(k_shape);
  const Tensor3 v = xt::zeros<float>(v_shape);
  EXPECT_TRUE(ThrowsInvalidArgument([&] { attend(q, k, v, std::nullopt); }, mentions))
      << kAttentionShapeChecks;
}

inline void ExpectAttentionRejectsKeysWithAnotherHeadCount(AttentionFn attend) {
  ExpectAttentionRejectsShapes(attend, {2, 4, 3}, {3, 4, 3}, {3, 4, 3}, {"(2, 4, 3)", "(3, 4, 3)"});
}

// attention_batched gives attention_loop's weights and output on q, k, v,
// mask. Two answers that compute nothing (zeros, the values passed back)
// would agree with each other too, so attention_loop must first give the
// golden case <golden>masked (the self inputs, a query that sees no key).
inline void ExpectBatchedMatchesLoop(const std::string& golden, const Tensor3& q,
                                     const Tensor3& k, const Tensor3& v,
                                     const std::optional<Tensor2>& mask) {
  const AttentionInputs in = LoadAttentionInputs(golden, "self", "masked");
  ASSERT_TRUE(MatchesGolden(attention_loop(in.q, in.k, in.v, in.mask).output,
                            golden + "masked_output.npy", kAttention, kOutputAxes))
      << kLoopPrecondition;
  const AttentionResult loop = attention_loop(q, k, v, mask);
  const AttentionResult batched = attention_batched(q, k, v, mask);
  EXPECT_TRUE(AllClose(batched.weights, loop.weights, kAttention, kWeightAxes));
  EXPECT_TRUE(AllClose(batched.output, loop.output, kAttention, kOutputAxes));
}

}  // namespace testing
}  // namespace mha

// Defines LoopSuite.Behaviour and BatchedSuite.Behaviour, both running the
// body that follows with `attend` bound to that version:
//
//   ATTENTION_TEST_BOTH(AttentionLoop, AttentionBatched, OutputMatchesTorch) {
//     EXPECT_TRUE(... attend(q, k, v, mask) ...);
//   }
#define ATTENTION_TEST_BOTH(LoopSuite, BatchedSuite, Behaviour)                        \
  void Check##Behaviour(::mha::testing::AttentionFn attend);                           \
  TEST(LoopSuite, Behaviour) { Check##Behaviour(&::mha::attention_loop); }             \
  TEST(BatchedSuite, Behaviour) { Check##Behaviour(&::mha::attention_batched); }       \
  void Check##Behaviour(::mha::testing::AttentionFn attend)

#endif  // MHA_LABS_02_BATCHED_ATTENTION_ATTENTION_TEST_UTIL_H_
