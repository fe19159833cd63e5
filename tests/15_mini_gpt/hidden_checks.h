// What several of lab 15's hidden tests share: models whose every field the
// test installs (tests/common/seeded_weights.h), and comparisons with the
// double reference (tests/15_mini_gpt/reference.h).
#ifndef MHA_TESTS_15_MINI_GPT_HIDDEN_CHECKS_H_
#define MHA_TESTS_15_MINI_GPT_HIDDEN_CHECKS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "labs/15_mini_gpt/mini_gpt.h"
#include "labs/15_mini_gpt/mini_gpt_test_util.h"

namespace mha {
namespace hidden {

inline const std::string kGolden = "tests/15_mini_gpt/golden/";
inline const std::string kSeeDoc = "; see docs/15_mini_gpt.md";
inline const testing::Sizes kMiniSizes{64, 32, 64, 4, 256, 2, 0, 10000.0};

// The learner's model, then every field from the API's draws; with
// `moved_seed`, gammas, betas and biases moved away from 1 and 0 (normal,
// scale 0.3) so that a forward or gradient that ignores one of them shows.
MiniGpt SeededModel(const testing::Sizes& s, std::optional<std::uint64_t> moved_seed = {});
MiniGpt SmallModel();  // the golden case "small"
MiniGpt MiniModel();   // the seed course's sizes as the constructor draws them

// Sizes no file predicts: 1 to 3 blocks of 1 to 3 heads of width 2 or 4
// (d_model 4 to 12), a vocabulary of 3 to 9 and max_len 4 to 8 (seed and base
// drawn too).
testing::Sizes RandomSizes(testing::FreshDraws& gen);
std::vector<int> RandomIds(testing::FreshDraws& gen, int n, int vocab);

// The model's logits and attention weights on `tokens` against the reference.
void ExpectForwardMatchesReference(const MiniGpt& model, const std::vector<int>& tokens);
// gpt_loss_and_grads' loss and every gradient against central differences of
// the reference's loss.
void ExpectGradsMatchFiniteDifferences(const MiniGpt& model, const std::vector<int>& inputs,
                                       const std::vector<int>& targets);
// `rows` are rows [from, from + rows) of the reference's logits of `tokens`.
void ExpectRowsOfTheLogits(const Tensor2& rows, const MiniGpt& model,
                           const std::vector<int>& tokens, std::size_t from,
                           const std::string& what);

// Three steps of clip_grad_norm then AdamW on a fresh random model with
// fresh random gradients, settings and rates, against the reference's AdamW.
void ExpectClipAndAdamWMatchTheReference(testing::FreshDraws& gen);

}  // namespace hidden
}  // namespace mha

#endif  // MHA_TESTS_15_MINI_GPT_HIDDEN_CHECKS_H_
