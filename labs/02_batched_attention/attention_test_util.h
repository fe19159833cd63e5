// Helpers of lab 2's tests: the public tests here and the grading tests (in
// the instructors' repository) use the same ones, so that both name a
// classic mistake in the same words and run every attention test on both
// versions alike.
#ifndef MHA_LABS_02_BATCHED_ATTENTION_ATTENTION_TEST_UTIL_H_
#define MHA_LABS_02_BATCHED_ATTENTION_ATTENTION_TEST_UTIL_H_

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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

// What a failed shape check says.
inline const char kAttentionShapeChecks[] =
    "mismatched shapes must throw std::invalid_argument naming them; see "
    "docs/02_batched_attention.md, \"Classic mistakes\"";

// attention_loop or attention_batched.
using AttentionFn = AttentionResult (*)(const Tensor3&, const Tensor3&, const Tensor3&,
                                        const std::optional<Tensor2>&);

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
