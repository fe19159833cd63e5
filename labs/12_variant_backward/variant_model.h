// Lab 10's one-layer attention-only model with its layer swapped for lab 5's
// GroupedQueryAttention (MHA, GQA, MQA) or lab 6's MultiHeadLatentAttention,
// trained with your lab 12 backward on an associative-recall task. Not part
// of the lab's graded API: the program compare_variants uses it.
//
//   x      = embed[ids] + pos[0:T]                 (T, d_model)
//   y      = x + layer.forward(x, causal mask)     (T, d_model)   residual
//   logits = y @ unembed                           (T, vocab)
//
// The forward is your lab 5 or 6 layer.forward; the layer's gradients come
// from your gqa_backward or mla_backward; the rest (embedding, residual,
// unembedding, cross-entropy) is lab 10's token_model.h, which lab 10's
// AttentionOnlyModel uses too.
//
// The task (associative recall). A sequence holds n_pairs pair tokens, each
// standing for one (key, value) pair with distinct keys, then n_queries query
// tokens, each naming one of those keys:
//
//   inputs   (k3,v7) (k0,v2) ... (k9,v7)  ?k0  ?k9  ...
//   targets     -       -    ...    -     v2   v7   ...   (scored: the values)
//
// The answer to ?k is the value of the pair whose key is k: the query must
// find that pair among the keys seen earlier (the scores) and read its value
// (the values). Nothing else in the sequence predicts it; a model without
// attention scores ln(n_values).
#ifndef MHA_LABS_12_VARIANT_BACKWARD_VARIANT_MODEL_H_
#define MHA_LABS_12_VARIANT_BACKWARD_VARIANT_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/programs/optimizer.h"
#include "common/tensor.h"
#include "labs/10_attention_backward/token_model.h"
#include "labs/12_variant_backward/variant_backward.h"

namespace mha {
namespace variants {

// A sequence with its scored targets, and the loss and accuracy over many
// (lab 10's token_model.h).
using training::Evaluation;
using training::Example;

// Which attention layer: n_kv_heads kv heads (lab 5; n_kv_heads == n_heads is
// MHA, 1 is MQA), or, with kv_rank > 0, lab 6's latent layer of that rank.
struct Variant {
  std::string name;
  int n_kv_heads = 0;
  int kv_rank = 0;  // > 0: MLA
};

class VariantModel {
 public:
  // embed, pos and unembed from NumpyRng(seed + 1) as lab 10's model
  // (standard deviations 1, 1, 1/sqrt(d_model)); the layer from seed.
  VariantModel(const Variant& variant, int vocab, int max_len, int d_model, int n_heads,
               std::uint64_t seed);

  int vocab() const { return static_cast<int>(embed.shape(0)); }
  int max_len() const { return static_cast<int>(pos.shape(0)); }
  std::size_t parameter_count() const;            // embeddings, layer and unembedding
  std::size_t kv_cache_floats_per_token() const;  // the layer's

  Tensor2 logits(const std::vector<int>& inputs) const;  // (T, vocab)

  Tensor2 embed;                               // (vocab, d_model)
  Tensor2 pos;                                 // (max_len, d_model)
  std::optional<GroupedQueryAttention> gqa;    // exactly one of these two
  std::optional<MultiHeadLatentAttention> mla;
  Tensor2 unembed;                             // (d_model, vocab)
};

// Gradients shaped like the model's parameters, in parameters()'s order.
struct VariantGrads {
  explicit VariantGrads(const VariantModel& model);  // zero
  void zero();
  std::vector<Tensor2> tensors;
};

// Adds weight * d(sum of the scored cross-entropies of example)/d(parameters)
// to grads and returns that sum; counts the scored positions.
double accumulate_gradients(const VariantModel& model, const Example& example, float weight,
                            VariantGrads& grads, std::size_t* scored);

// The model's parameters paired with their gradients, for an optimiser.
std::vector<Param> parameters(VariantModel& model, const VariantGrads& grads);

Evaluation evaluate(const VariantModel& model, const std::vector<Example>& examples);

// ---------------------------------------------------------------- the task

// The task and the model's size, and the training settings (d_model, steps,
// batch, learning_rate, seed: the weights and the training batches,
// eval_examples: held-out sequences from seed + 1000; lab 10's token_model.h).
struct RecallConfig : training::TrainingConfig {
  int n_keys = 16;         // distinct keys
  int n_values = 16;       // distinct values
  int n_pairs = 8;         // (key, value) pairs per sequence, distinct keys
  int n_queries = 4;       // scored queries per sequence
  int n_heads = 8;
};

// Token ids: pair (k, v) is k * n_values + v; query ?k is n_keys * n_values + k.
int recall_vocab(const RecallConfig& config);
int recall_length(const RecallConfig& config);  // n_pairs + n_queries
Example recall_example(const RecallConfig& config, std::mt19937_64& gen);
std::vector<Example> recall_examples(const RecallConfig& config, int count, std::uint64_t seed);

struct TrainResult {
  std::size_t parameters = 0, cache_floats = 0;
  std::vector<double> loss_curve;  // training loss per step
  Evaluation eval;                 // held-out, after the last step
  double seconds = 0.0;            // CPU time of the training loop
};

// Trains VariantModel(variant, ...) with Adam; the same config gives the
// same initial embeddings and the same batches for every variant.
// progress(step) is called every `every` steps (not at all when every == 0).
TrainResult train_recall_model(const RecallConfig& config, const Variant& variant, int every,
                               void (*progress)(int step, double loss));

}  // namespace variants
}  // namespace mha

#endif  // MHA_LABS_12_VARIANT_BACKWARD_VARIANT_MODEL_H_
