// What a one-layer token model needs around its attention layer, whatever
// the layer is: lab 10's AttentionOnlyModel (MultiHeadAttention) and lab 12's
// VariantModel (GQA or MLA) both use it. Not part of the lab's graded API.
//
//   x      = embed[ids] + pos[0:T]                 (T, d_model)   embed_sequence
//   y      = x + layer.forward(x, causal(T))       (T, d_model)   the model's own
//   logits = y @ unembed                           (T, vocab)
//   loss   = sum of the cross-entropies of the scored positions   cross_entropy_backward
//
// and back: the residual passes d_y to x unchanged and the layer adds its dx;
// embedding_backward sends each row of the total to its token's and its
// position's rows. Also the examples, their evaluation, and the settings and
// learning-rate schedule the training loops share.
#ifndef MHA_LABS_10_ATTENTION_BACKWARD_TOKEN_MODEL_H_
#define MHA_LABS_10_ATTENTION_BACKWARD_TOKEN_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "common/tensor.h"

namespace mha {
namespace training {

// One training sequence: the model reads inputs[t] and is scored on
// predicting targets[t]; a target of -1 is not scored.
struct Example {
  std::vector<int> inputs;
  std::vector<int> targets;  // same length as inputs
};

struct Evaluation {
  double loss = 0.0;      // mean cross-entropy per scored position, nats
  double accuracy = 0.0;  // fraction of scored positions whose argmax is the target
  std::size_t scored = 0;
};

// The settings every task's training shares (each task adds its own).
struct TrainingConfig {
  int d_model = 64;
  int steps = 1500;        // optimiser steps
  int batch = 32;          // sequences per step
  float learning_rate = 3e-3f;  // Adam, cosine decay to 0 over the steps
  std::uint64_t seed = 0;  // the model's weights and the training data
  int eval_examples = 500; // held-out sequences, drawn from seed + 1000
};

// The learning rate at `step` of `steps`: a cosine decay from `base` to 0.
float cosine_learning_rate(float base, int step, int steps);

// `count` examples draw(gen) from one mt19937_64(seed), in order.
std::vector<Example> draw_examples(int count, std::uint64_t seed,
                                   const std::function<Example(std::mt19937_64&)>& draw);

// (T, T) additive causal mask: 0 where key j <= query i, -inf above.
Tensor2 causal(std::size_t T);

// Throws std::invalid_argument, naming `model`, unless 1 <= inputs.size() <=
// max_len and every id is in [0, vocab).
void check_sequence(const char* model, const std::vector<int>& inputs, int vocab, int max_len);

// x = embed[ids] + pos[0:T]: (T, d_model). embed (vocab, d_model), pos
// (max_len, d_model).
Tensor2 embed_sequence(const Tensor2& embed, const Tensor2& pos, const std::vector<int>& ids);

// The cross-entropy of the scored rows of logits (T, vocab) against targets,
// and its gradient, in place: a scored row becomes weight * (softmax(row) -
// onehot(target)), an unscored one 0. Returns the SUM of the scored rows'
// cross-entropies; counts the scored rows and those whose argmax is the
// target (either counter may be null).
double cross_entropy_backward(Tensor2& logits, const std::vector<int>& targets, float weight,
                              std::size_t* scored, std::size_t* correct);

// x = embed[ids] + pos: adds row t of d_x (T, d_model) to d_embed's row
// ids[t] and to d_pos's row t, where d_x = d_residual + d_layer (the two
// paths from y = x + layer(x)).
void embedding_backward(const std::vector<int>& ids, const Tensor2& d_residual,
                        const Tensor2& d_layer, Tensor2& d_embed, Tensor2& d_pos);

// Loss and accuracy of logits[i] (T, vocab) against examples[i].targets.
Evaluation evaluate_logits(const std::vector<Tensor2>& logits,
                           const std::vector<Example>& examples);

}  // namespace training
}  // namespace mha

#endif  // MHA_LABS_10_ATTENTION_BACKWARD_TOKEN_MODEL_H_
