// A one-layer attention-only language model, trained with your labs 3 and 10.
// Not part of the lab's graded API: the programs heads_sweep and
// ablate_heads share it.
//
//   x      = embed[ids] + pos[0:T]                 (T, d_model)
//   y      = x + layer.forward(x, causal mask)     (T, d_model)   residual
//   logits = y @ unembed                           (T, vocab)
//
// No MLP and no layer norm: everything the model computes beyond a bigram
// table (embed @ unembed) has to go through the attention heads. The loss
// is the mean cross-entropy of the logits against the targets at the
// positions that have one.
//
// Forward uses layer.forward (lab 3); the gradients use mha_backward (lab 10)
// for the layer and plain matrix products for the rest (token_model.h: the
// parts lab 12's VariantModel shares).
#ifndef MHA_LABS_10_ATTENTION_BACKWARD_ATTENTION_ONLY_MODEL_H_
#define MHA_LABS_10_ATTENTION_BACKWARD_ATTENTION_ONLY_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/programs/optimizer.h"
#include "common/tensor.h"
#include "labs/03_output_projection/multi_head_attention.h"
#include "labs/10_attention_backward/attention_backward.h"
#include "labs/10_attention_backward/token_model.h"

namespace mha {
namespace training {

class AttentionOnlyModel {
 public:
  // embed, pos and unembed from NumpyRng(seed + 1) (embed with standard
  // deviation 1, pos 1, unembed 1/sqrt(d_model)); the layer is
  // MultiHeadAttention(d_model, n_heads, seed), whose four matrices do not
  // depend on n_heads: models that differ only in their head count start
  // from the same numbers.
  AttentionOnlyModel(int vocab, int max_len, int d_model, int n_heads, std::uint64_t seed);

  int vocab() const { return static_cast<int>(embed.shape(0)); }
  int max_len() const { return static_cast<int>(pos.shape(0)); }

  // (T, vocab) next-token logits for one sequence, T <= max_len.
  Tensor2 logits(const std::vector<int>& inputs) const;

  Tensor2 embed;    // (vocab, d_model)
  Tensor2 pos;      // (max_len, d_model)
  MultiHeadAttention layer;
  Tensor2 unembed;  // (d_model, vocab)
};

struct ModelGrads {
  explicit ModelGrads(const AttentionOnlyModel& model);  // all zero, shaped like the model
  void zero();
  Tensor2 embed, pos, W_Q, W_K, W_V, W_O, unembed;
};

// Adds weight * d(loss of this example)/d(parameters) to grads, where the
// example's loss is the SUM of the cross-entropies of its scored positions.
// Returns that sum; counts scored positions and correct argmax predictions.
double accumulate_gradients(const AttentionOnlyModel& model, const Example& example, float weight,
                            ModelGrads& grads, std::size_t* scored, std::size_t* correct);

// The model's parameters paired with their gradients, for an optimiser.
std::vector<Param> parameters(AttentionOnlyModel& model, const ModelGrads& grads);

// Mean loss and accuracy over the examples (Evaluation: token_model.h).
// evaluate_logits (token_model.h) gives the same from logits already
// computed, logits[i] = model.logits(examples[i].inputs), for a caller that
// also reads them.
Evaluation evaluate(const AttentionOnlyModel& model, const std::vector<Example>& examples);

// A copy of the model with head h silenced: its rows of W_O are zeroed, so
// its output never reaches y (what "Are Sixteen Heads Really Better than
// One?" calls masking a head).
AttentionOnlyModel without_head(const AttentionOnlyModel& model, int head);

}  // namespace training
}  // namespace mha

#endif  // MHA_LABS_10_ATTENTION_BACKWARD_ATTENTION_ONLY_MODEL_H_
