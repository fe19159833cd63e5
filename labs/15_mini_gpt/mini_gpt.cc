// Lab 15: a Mini-GPT that learns a verb grammar in English and Spanish. This is the file you edit.
// Read docs/15_mini_gpt.md first; the header labs/15_mini_gpt/mini_gpt.h says what each function must do.
// Check your work with:  bazel test //labs/15_mini_gpt/...
#include "labs/15_mini_gpt/mini_gpt.h"

#include <stdexcept>

// What you may call from earlier labs (and nothing else of theirs):
// #include <cmath>                                          // std::exp, std::log, std::sqrt, std::cos
// #include <xtensor-blas/xlinalg.hpp>                       // xt::linalg::dot
// #include "common/rng.h"                                   // NumpyRng: normal_matrix, random()
// #include "labs/02_batched_attention/attention.h"          // softmax_rows
// #include "labs/04_causal_mask/causal_mask.h"              // causal_mask
// Lab 14, all of it, comes with the header above: layer_norm, layer_norm_backward, gelu,
// FeedForward, feed_forward_backward, TransformerBlock, block_backward, ...; and with it
// lab 11's RotaryDecoder (its constructor, step, cache) and lab 8's KVCache (read only).

namespace mha {

// (The parameters end in _ so that they do not shadow the members they set.)
MiniGpt::MiniGpt(int vocab_, int max_len_, int d_model_, int n_heads_, int d_ff_, int n_layers_,
                 std::uint64_t seed, double base_) {
  // TODO:
  // 1. Reject sizes < 1, d_model % n_heads != 0, an odd d_head and base <= 1, naming the values.
  // 2. Store the sizes; embed = NumpyRng(seed).normal_matrix(vocab, d_model, d_model).
  // 3. blocks[l] = TransformerBlock(d_model, n_heads, d_ff, seed + 1000 * (l + 1), base);
  //    lnf_gamma ones, lnf_beta zeros.
  (void)vocab_, (void)max_len_, (void)d_model_, (void)n_heads_, (void)d_ff_, (void)n_layers_,
      (void)seed, (void)base_;
  throw std::logic_error("lab 15: MiniGpt is not implemented yet, see docs/15_mini_gpt.md");
}

Tensor2 MiniGpt::logits(const std::vector<int>& tokens) const {
  // TODO: check the tokens; x = embed[tokens]; x = block.forward(x) for each block;
  // h = layer_norm(x, lnf_gamma, lnf_beta); return h @ embed^T, (T, vocab).
  (void)tokens;
  throw std::logic_error("lab 15: MiniGpt::logits is not implemented yet, see docs/15_mini_gpt.md");
}

std::vector<Tensor3> MiniGpt::attention_weights(const std::vector<int>& tokens) const {
  // TODO: the same stream; block l's weights are blocks[l].attention_weights(x_l).
  (void)tokens;
  throw std::logic_error(
      "lab 15: MiniGpt::attention_weights is not implemented yet, see docs/15_mini_gpt.md");
}

std::size_t MiniGpt::parameter_count() const {
  // TODO: embed, every block's parameters, and the final LayerNorm's two vectors.
  throw std::logic_error(
      "lab 15: MiniGpt::parameter_count is not implemented yet, see docs/15_mini_gpt.md");
}

double cross_entropy(const Tensor2& logits, const std::vector<int>& targets, Tensor2* d_logits) {
  // TODO:
  // 1. Check the sizes, every target in [-1, vocab), at least one scored row.
  // 2. Per scored row: logsumexp (the row max subtracted first) - logit of the target.
  // 3. The mean over scored rows; d_logits (if given): (softmax - onehot) / n_scored on
  //    scored rows, 0 on the others.
  (void)logits, (void)targets, (void)d_logits;
  throw std::logic_error("lab 15: cross_entropy is not implemented yet, see docs/15_mini_gpt.md");
}

GptLossAndGrads gpt_loss_and_grads(const MiniGpt& model, const std::vector<int>& inputs,
                                   const std::vector<int>& targets) {
  // TODO:
  // 1. Check the arguments.
  // 2. Forward, keeping each block's input x_l and the final LayerNorm's input and output.
  // 3. cross_entropy with d_logits; the output layer's gradients (d_embed's first part, dh).
  // 4. Back through the final LayerNorm, then block_backward down the stack.
  // 5. d_embed's second part: row t of dx_0 added into the row of inputs[t].
  (void)model, (void)inputs, (void)targets;
  throw std::logic_error(
      "lab 15: gpt_loss_and_grads is not implemented yet, see docs/15_mini_gpt.md");
}

double clip_grad_norm(GptGrads& grads, double max_norm) {
  // TODO: one norm over every parameter gradient (not the dx fields); scale them all by
  // max_norm / (norm + 1e-6) when it is above max_norm; return the norm before.
  (void)grads, (void)max_norm;
  throw std::logic_error("lab 15: clip_grad_norm is not implemented yet, see docs/15_mini_gpt.md");
}

double learning_rate_at(int step, double max_lr, double min_lr, int warmup, int total) {
  // TODO: check the arguments; linear warm-up, cosine to min_lr, then min_lr.
  (void)step, (void)max_lr, (void)min_lr, (void)warmup, (void)total;
  throw std::logic_error(
      "lab 15: learning_rate_at is not implemented yet, see docs/15_mini_gpt.md");
}

AdamW::AdamW(const MiniGpt& model, AdamWConfig config) {
  // TODO: keep the config; m_ and v_ zero, shaped like the model's parameters.
  (void)model, (void)config;
  throw std::logic_error("lab 15: AdamW is not implemented yet, see docs/15_mini_gpt.md");
}

void AdamW::step(MiniGpt& model, const GptGrads& grads, float lr) {
  // TODO:
  // 1. Check every gradient's shape against its parameter before changing anything.
  // 2. t = t + 1; per parameter: decay the matrices only, then m, v, and the
  //    bias-corrected update.
  (void)model, (void)grads, (void)lr;
  throw std::logic_error("lab 15: AdamW::step is not implemented yet, see docs/15_mini_gpt.md");
}

int AdamW::steps() const {
  // TODO: how many steps so far.
  throw std::logic_error("lab 15: AdamW::steps is not implemented yet, see docs/15_mini_gpt.md");
}

int sample_token(const Tensor1& logits, const Sampling& sampling, double u) {
  // TODO:
  // 1. Check u in [0, 1), temperature >= 0, top_k >= 0, logits not empty.
  // 2. temperature 0: the argmax, the lowest id on ties.
  // 3. Otherwise keep the top_k largest (ties to the lower ids), softmax(kept / temperature)
  //    in increasing id order, and the first id whose cumulative probability exceeds u.
  (void)logits, (void)sampling, (void)u;
  throw std::logic_error("lab 15: sample_token is not implemented yet, see docs/15_mini_gpt.md");
}

GptDecoder::GptDecoder(const MiniGpt& model, int capacity) {
  // TODO: check 1 <= capacity <= model.max_len; keep a pointer to the model; one
  // RotaryDecoder(model.blocks[l].attn, capacity) per block.
  (void)model, (void)capacity;
  throw std::logic_error("lab 15: GptDecoder is not implemented yet, see docs/15_mini_gpt.md");
}

Tensor2 GptDecoder::step(const std::vector<int>& new_tokens) {
  // TODO:
  // 1. Check the tokens and the room left, before any change.
  // 2. x = embed[new_tokens]; per block: a = LN1(x), h = x + decoder.step(a),
  //    x = h + ffn(LN2(h)) (on the new rows only); then LN_f and @ embed^T.
  (void)new_tokens;
  throw std::logic_error("lab 15: GptDecoder::step is not implemented yet, see docs/15_mini_gpt.md");
}

int GptDecoder::length() const {
  // TODO: how many positions have been fed.
  throw std::logic_error("lab 15: GptDecoder::length is not implemented yet, see docs/15_mini_gpt.md");
}

const KVCache& GptDecoder::cache(int block) const {
  // TODO: block's cache (check the index).
  (void)block;
  throw std::logic_error("lab 15: GptDecoder::cache is not implemented yet, see docs/15_mini_gpt.md");
}

std::vector<int> generate(const MiniGpt& model, const std::vector<int>& prompt,
                          int max_new_tokens, const Sampling& sampling, int eos,
                          std::uint64_t seed) {
  // TODO: check the arguments; prefill the prompt through a GptDecoder; then one token at a
  // time: u = the next NumpyRng(seed).random(), sample_token(last row, sampling, u), until
  // eos, max_new_tokens or max_len tokens in all.
  (void)model, (void)prompt, (void)max_new_tokens, (void)sampling, (void)eos, (void)seed;
  throw std::logic_error("lab 15: generate is not implemented yet, see docs/15_mini_gpt.md");
}

}  // namespace mha
