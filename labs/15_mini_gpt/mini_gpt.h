// Lab 15: a Mini-GPT that learns a verb grammar in English and Spanish.
//
// Your attention, inside a whole model: a token embedding, two of lab 14's
// pre-LN blocks (your RoPE attention of lab 11, your LayerNorm, GELU and
// feed-forward network), a final LayerNorm and an output layer TIED to the
// embedding (the same matrix reads tokens in and scores them out). Then
// everything that turns a model into something that learns and writes:
//
//   cross_entropy        the loss, and its gradient (softmax - onehot) / n_scored
//   gpt_loss_and_grads   every parameter's gradient, down the stack of blocks
//   clip_grad_norm       one global norm over every gradient
//   learning_rate_at     warm-up, then cosine
//   AdamW                Adam with decoupled weight decay, on matrices only
//   sample_token         greedy, temperature and top-k
//   GptDecoder           generation through a KV cache per block (lab 11's RotaryDecoder)
//   generate             prompt in, new tokens out
//
// With the default sizes, MiniGpt(64, 32, 64, 4, 256, 2) has 103,680
// parameters: embed 64 x 64 = 4,096; per block 4 * 64^2 (attention) +
// 2 * 64 * 256 + 256 + 64 (feed-forward) + 4 * 64 (two LayerNorms) = 49,728;
// the final LayerNorm 128.
//
// The tied output layer has two uses of `embed`, so its gradient has two
// parts: the output layer's, d_logits^T h (every row, every position), and
// the input's, each position's dx_0 added into the row of its token.
//
// The weights are public: a test may overwrite them, and every later call
// must use the new values. Nothing is cached across calls (a decoder's KV
// cache holds keys and values, never weights).
//
// Bad arguments throw std::invalid_argument naming the offending values:
//   "MiniGpt: d_model=10 is not divisible by n_heads=4"
//   "MiniGpt::logits: 33 tokens, expected 1 <= T <= max_len=32"
//   "cross_entropy: target 64 at row 3 outside [-1, vocab=64)"
//   "sample_token: u=1 outside [0, 1)"
//   "GptDecoder: capacity=32 cannot hold 30 + 3 positions"
//
// Lesson: docs/15_mini_gpt.md. The corpus: verb_grammar.h (given).
#ifndef MHA_LABS_15_MINI_GPT_MINI_GPT_H_
#define MHA_LABS_15_MINI_GPT_MINI_GPT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/tensor.h"
#include "labs/08_kv_cache/kv_cache.h"
#include "labs/14_transformer_block/transformer_block.h"

namespace mha {

// x_0 = embed[tokens]                                  (T, d_model)  no position vector: RoPE
// x_{l+1} = blocks[l].forward(x_l)                     (T, d_model)
// h = layer_norm(x_L, lnf_gamma, lnf_beta)             logits = h @ embed^T  (T, vocab)  tied
class MiniGpt {
 public:
  // embed = NumpyRng(seed).normal_matrix(vocab, d_model, d_model);
  // blocks[l] = TransformerBlock(d_model, n_heads, d_ff, seed + 1000 * (l + 1), base);
  // lnf_gamma 1, lnf_beta 0. Sizes < 1, d_model % n_heads != 0, odd d_head, base <= 1:
  // std::invalid_argument.
  MiniGpt(int vocab, int max_len, int d_model, int n_heads, int d_ff, int n_layers,
          std::uint64_t seed = 0, double base = 10000.0);
  // tokens: 1 <= T <= max_len ids in [0, vocab); otherwise std::invalid_argument.
  Tensor2 logits(const std::vector<int>& tokens) const;                          // (T, vocab)
  std::vector<Tensor3> attention_weights(const std::vector<int>& tokens) const;  // per block (H, T, T)
  // vocab * d + n_layers * (4 d^2 + 2 d d_ff + d_ff + 5 d) + 2 d
  // (MiniGpt(64, 32, 64, 4, 256, 2) has 4,096 + 2 * 49,728 + 128 = 103,680)
  std::size_t parameter_count() const;
  int vocab, max_len, d_model, n_heads, d_ff, n_layers;
  double base;
  Tensor2 embed;                        // (vocab, d_model): the input table and the output layer
  std::vector<TransformerBlock> blocks;
  Tensor1 lnf_gamma, lnf_beta;          // (d_model)

 private:
  // Lets the grader copy a model between processes (common/grading/remote.h).
  friend struct remote::Access;
  MiniGpt() = default;
};

// Mean cross-entropy over the scored rows (targets[t] >= 0; -1 = not scored; at least one):
//   loss = mean_t [logsumexp(logits[t]) - logits[t, targets[t]]]   (row max subtracted first)
// If d_logits is given it receives (softmax(logits[t]) - onehot(targets[t])) / n_scored on
// scored rows and 0 on the others. Logits of 1e4 neither overflow nor give NaN. Sizes that
// differ, a target out of [-1, vocab), no scored row: std::invalid_argument.
double cross_entropy(const Tensor2& logits, const std::vector<int>& targets,
                     Tensor2* d_logits = nullptr);

struct GptGrads {
  Tensor2 d_embed;                      // the tied weight: the output layer's part plus the rows'
  std::vector<BlockGrads> blocks;       // one per block; blocks[l].dx is dLoss/dx_l, block l's input
  Tensor1 d_lnf_gamma, d_lnf_beta;
};
struct GptLossAndGrads {
  double loss;
  std::size_t scored;
  GptGrads grads;
};
// inputs and targets of equal length T (1 <= T <= max_len), targets in [-1, vocab);
// the loss is cross_entropy(model.logits(inputs), targets) and grads its gradient with
// respect to every parameter (d_embed = d_logits^T h + the scatter-add of dx_0 into the
// rows of the input tokens).
GptLossAndGrads gpt_loss_and_grads(const MiniGpt& model, const std::vector<int>& inputs,
                                   const std::vector<int>& targets);

// The global L2 norm over every parameter gradient (the dx fields are neither counted nor
// scaled); if it is above max_norm every parameter gradient is multiplied by
// max_norm / (norm + 1e-6), as torch.nn.utils.clip_grad_norm_. Returns the norm before
// clipping. max_norm <= 0 throws.
double clip_grad_norm(GptGrads& grads, double max_norm);

// Linear warm-up, then cosine to min_lr:
//   step < warmup:          max_lr * step / warmup
//   warmup <= step <= total: min_lr + 0.5 (1 + cos(pi (step - warmup) / (total - warmup))) (max_lr - min_lr)
//   step > total:           min_lr
// step < 0, warmup < 0, total <= warmup, or min_lr > max_lr: std::invalid_argument.
double learning_rate_at(int step, double max_lr, double min_lr, int warmup, int total);

struct AdamWConfig {
  float beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f, weight_decay = 0.1f;
};
// torch.optim.AdamW over the model's parameters in declaration order (embed; per block
// ln1_gamma, ln1_beta, W_Q, W_K, W_V, W_O, ln2_gamma, ln2_beta, W_1, b_1, W_2, b_2; then
// lnf_gamma, lnf_beta). Step t counts from 1. Weight decay is applied to the matrices only
// (embed, W_Q, W_K, W_V, W_O, W_1, W_2), never to gammas, betas or biases:
//   theta *= 1 - lr * weight_decay                      (decayed parameters only)
//   m = b1 m + (1 - b1) g     v = b2 v + (1 - b2) g^2
//   theta -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
// Grads shaped unlike the model: std::invalid_argument, and nothing changes.
class AdamW {
 public:
  explicit AdamW(const MiniGpt& model, AdamWConfig config = {});  // zero moments
  void step(MiniGpt& model, const GptGrads& grads, float lr);
  int steps() const;

 private:
  friend struct remote::Access;
  AdamW() = default;

  AdamWConfig config_;
  int steps_ = 0;   // t, the number of step() calls so far
  GptGrads m_, v_;  // the first and second moments, shaped like the gradients (dx unused)
};

// The next token from one row of logits (vocab). temperature == 0: the argmax (the lowest
// id on ties); u is ignored. Otherwise keep the top_k largest logits (top_k 0, or >= vocab:
// all; ties at the k-th value go to the lower ids), p = softmax(kept / temperature) in
// increasing id order, and return the first kept id whose cumulative p exceeds u; the last
// kept id if rounding leaves u beyond the total. u outside [0, 1) (whatever the temperature),
// temperature < 0, top_k < 0 or empty logits: std::invalid_argument.
struct Sampling {
  float temperature = 0.0f;
  int top_k = 0;
};
int sample_token(const Tensor1& logits, const Sampling& sampling, double u);

// Incremental decoding: per block, lab 11's RotaryDecoder over blocks[l].attn (a key rotated
// once, at its own position, and cached rotated); the LayerNorms and the FFN run on the new
// rows only. step(new_tokens) equals rows [P, P + T_new) of model.logits(every token so far).
// Over capacity, an empty or out-of-range new_tokens: std::invalid_argument, unchanged.
// The model must outlive the decoder; each step reads its weights as they are then.
class GptDecoder {
 public:
  GptDecoder(const MiniGpt& model, int capacity);        // capacity < 1 or > model.max_len: throws
  Tensor2 step(const std::vector<int>& new_tokens);      // (T_new, vocab)
  int length() const;
  const KVCache& cache(int block) const;                 // keys rotated, (n_heads, length, d_head)

 private:
  friend struct remote::Access;
  GptDecoder() = default;

  const MiniGpt* model_ = nullptr;        // not owned; a pointer keeps decoders copyable
  std::vector<RotaryDecoder> attention_;  // one per block, over model_->blocks[l].attn
  int length_ = 0;                        // positions fed so far
};

// Prefills `prompt` (non-empty) through one GptDecoder, then adds one token at a time, chosen
// by sample_token(the last row, sampling, u) where u is the next NumpyRng(seed).random() (one
// draw per generated token, drawn even when temperature == 0). Stops after emitting `eos`,
// after max_new_tokens, or at model.max_len tokens in all (the decoder's capacity). Returns the
// new tokens only (empty when max_new_tokens is 0). An empty prompt or one longer than max_len,
// a token or eos outside [0, vocab), max_new_tokens < 0: std::invalid_argument.
std::vector<int> generate(const MiniGpt& model, const std::vector<int>& prompt,
                          int max_new_tokens, const Sampling& sampling, int eos,
                          std::uint64_t seed);

}  // namespace mha

#endif  // MHA_LABS_15_MINI_GPT_MINI_GPT_H_
