// The copy task of the heads sweep, and the training loop shared by
// heads_sweep and ablate_heads.
//
// A sequence is `length` random tokens s_0 .. s_{L-1} from an alphabet of
// `alphabet` symbols, a separator, then the same tokens again:
//
//   inputs   s0 s1 ... s{L-1} SEP s0 s1 ... s{L-2}          (2L tokens)
//   targets  -  -  ...  -     s0  s1 s2 ... s{L-1}          (scored: the copy)
//
// The first half is unpredictable and not scored. In the second half, the
// token to predict at position L + i is s_i, sitting at position i: exactly
// L places back. One head that attends from position t to t - L and copies
// what it reads solves the task; the model has no other way to do it.
#ifndef MHA_LABS_10_ATTENTION_BACKWARD_COPY_TASK_H_
#define MHA_LABS_10_ATTENTION_BACKWARD_COPY_TASK_H_

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "labs/10_attention_backward/attention_only_model.h"

namespace mha {
namespace training {

// The task, and the training settings (d_model, steps, batch,
// learning_rate, seed, eval_examples: token_model.h).
struct CopyTaskConfig : TrainingConfig {
  int length = 8;          // L, tokens to copy
  int alphabet = 16;       // symbols; the separator is token `alphabet`
};

Example copy_example(const CopyTaskConfig& config, std::mt19937_64& gen);
std::vector<Example> copy_examples(const CopyTaskConfig& config, int count, std::uint64_t seed);

struct TrainResult {
  AttentionOnlyModel model;
  std::vector<double> loss_curve;  // training loss (mean per scored token) at each step
  std::vector<Example> held_out;   // config.eval_examples sequences drawn from seed + 1000
  Evaluation eval;                 // on held_out, after the last step
  double seconds = 0.0;            // wall time of the training loop
};

// The training loop of every task: Adam with a cosine decay from
// learning_rate to 0, `steps` steps of `batch` examples drawn by `draw` from
// mt19937_64(seed), the loss of a step being the mean cross-entropy over the
// batch's scored positions; then evaluate() on held_out.
struct Schedule {
  int steps;
  int batch;
  float learning_rate;
  std::uint64_t seed;
};
TrainResult train_model(AttentionOnlyModel model, const Schedule& schedule,
                        const std::function<Example(std::mt19937_64&)>& draw,
                        std::vector<Example> held_out);

// Trains AttentionOnlyModel(alphabet + 1, 2 * length, d_model, n_heads, seed)
// on the copy task with Adam (train_model). The same config gives the same weights, the
// same batches in the same order and the same numbers for every n_heads.
TrainResult train_copy_model(const CopyTaskConfig& config, int n_heads);

}  // namespace training
}  // namespace mha

#endif  // MHA_LABS_10_ATTENTION_BACKWARD_COPY_TASK_H_
