// An independent double-precision reference of lab 15, for the hidden tests:
// the model (on lab 14's double blocks, tests/14_transformer_block/reference.h),
// cross-entropy, the sampler and generation, as plain loops (no lab code).
// The gradient tests differentiate Loss by central differences
// (tests/common/naive.h).
#ifndef MHA_TESTS_15_MINI_GPT_REFERENCE_H_
#define MHA_TESTS_15_MINI_GPT_REFERENCE_H_

#include <cstdint>
#include <vector>

#include "labs/15_mini_gpt/mini_gpt.h"
#include "tests/14_transformer_block/reference.h"

namespace mha {
namespace reference {

// The model's parameters in double.
struct Gpt {
  int max_len = 1;
  D2 embed;                  // (vocab, d_model)
  std::vector<Block> blocks;
  D1 lnf_gamma, lnf_beta;    // (d_model)
};
Gpt FromModel(const MiniGpt& model);

// logits (T, vocab) of the tokens at positions 0 .. T-1. `weights` and
// `keys`, when given, receive each block's attention weights (H, T, T) and
// its rotated keys (H, T, d_head), what a decoder's cache holds.
D2 Logits(const Gpt& model, const std::vector<int>& tokens, std::vector<D3>* weights = nullptr,
          std::vector<D3>* keys = nullptr);

// The mean over the scored rows (targets >= 0) of logsumexp - the target's
// logit; d_logits, when given, receives its gradient.
double CrossEntropy(const D2& logits, const std::vector<int>& targets, D2* d_logits = nullptr);
double Loss(const Gpt& model, const std::vector<int>& inputs, const std::vector<int>& targets);

// The sampler of the API: greedy (lowest id) at temperature 0, else the
// top_k largest logits (ties to the lower ids) and the first kept id whose
// cumulative softmax(kept / temperature) exceeds u. `margin`, when given,
// receives how close the choice was (u to the nearest cumulative sum, or the
// gap between the two largest logits), to skip choices that float rounding
// may decide either way.
int SampleToken(const std::vector<double>& logits, double temperature, int top_k, double u,
                double* margin = nullptr);

// generate(), re-running the whole model at every token (no cache), with
// NumpyRng(seed).random() draws; `margin` receives the smallest margin.
std::vector<int> Generate(const Gpt& model, const std::vector<int>& prompt, int max_new_tokens,
                          double temperature, int top_k, int eos, std::uint64_t seed,
                          double* margin = nullptr);

// The API's AdamW in double over flattened parameters (decayed[i]: element i
// belongs to a matrix): the parameters after each step of grads[k] at lrs[k].
std::vector<std::vector<double>> AdamWSteps(std::vector<double> theta,
                                            const std::vector<bool>& decayed,
                                            const std::vector<std::vector<double>>& grads,
                                            const std::vector<double>& lrs, double beta1,
                                            double beta2, double eps, double weight_decay);

}  // namespace reference
}  // namespace mha

#endif  // MHA_TESTS_15_MINI_GPT_REFERENCE_H_
