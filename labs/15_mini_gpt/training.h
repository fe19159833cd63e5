// What train_mini_gpt does with your lab 15 (not part of the graded API):
// the training loop (batches of sentences, the mean of their gradients,
// clipping, the schedule, AdamW) and the measurements (loss, accuracy at the
// grammar-fixed positions by category, greedy translations, an n-gram
// baseline). The benchmark and the reader's playground use the same pieces.
//
//   const grammar::Split data = grammar::split();
//   MiniGpt model(64, 32, 64, 4, 256, 2, seed);
//   gpt::Trainer trainer(model, gpt::examples(data.train, gpt::Score::kDecided), settings);
//   for (int s = 0; s < settings.steps; ++s) trainer.step();
//   gpt::Accuracy held = gpt::accuracy(model, data.held_out);
//
// Deterministic: the same seed gives the same batches, and the same machine
// the same numbers.
#ifndef MHA_LABS_15_MINI_GPT_TRAINING_H_
#define MHA_LABS_15_MINI_GPT_TRAINING_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/rng.h"
#include "labs/15_mini_gpt/mini_gpt.h"
#include "labs/15_mini_gpt/verb_grammar.h"

namespace mha::gpt {

// What the loss scores: only the positions whose next token the grammar
// fixes (grammar::decisions), or every position.
enum class Score { kDecided, kAll };

// One sentence as the model trains on it: inputs = ids[0 .. n-2], targets =
// ids[1 .. n-1] where scored, -1 elsewhere.
struct Example {
  std::vector<int> inputs, targets;
};
std::vector<Example> examples(const std::vector<grammar::Sentence>& sentences, Score score);

struct Settings {
  int steps = 1000;
  int batch = 16;           // sentences a step
  double max_lr = 3e-3, min_lr = 3e-4;
  int warmup = 100;         // learning_rate_at(step, max_lr, min_lr, warmup, steps)
  double clip = 1.0;        // clip_grad_norm's max_norm
  bool attention = true;    // false: W_O = 0 in every block, kept there: no position sees another
  std::uint64_t seed = 0;   // the order of the sentences: NumpyRng(seed + 1), which no weight uses
};

// The mean of the examples' gpt_loss_and_grads gradients (your lab 15), and
// of their losses in *loss: one step's gradient.
GptGrads mean_gradients(const MiniGpt& model, const std::vector<const Example*>& batch,
                        double* loss);

// Sets every block's W_O to zero: the attention sub-layers add nothing.
void remove_attention(MiniGpt& model);

struct StepReport {
  int step;          // 1-based
  double loss;       // the mean of the batch's sentence losses, before the update
  double lr;
  double grad_norm;  // before clipping
};

// The loop: each step takes the next `batch` training sentences of a queue
// that holds the training set in a random order (refilled with a fresh order
// when fewer than `batch` are left: every sentence is seen once per pass),
// averages their gpt_loss_and_grads gradients, clips their global norm, and
// takes one AdamW step at learning_rate_at(step). An order is Fisher-Yates
// from the last position down, j = floor(u (i + 1)), u the next
// NumpyRng(seed + 1).random(). The model and the examples must outlive it.
class Trainer {
 public:
  Trainer(MiniGpt& model, const std::vector<Example>& train, const Settings& settings);
  StepReport step();

 private:
  MiniGpt* model_;
  const std::vector<Example>* train_;
  Settings settings_;
  AdamW optimizer_;
  NumpyRng draws_;
  std::vector<std::size_t> queue_;  // the sentences still to come, in order
  int done_ = 0;
};

// The mean over examples of each one's loss (its mean over scored positions).
double mean_loss(const MiniGpt& model, const std::vector<Example>& data);

// Right and total argmax predictions at the grammar-fixed positions, per
// grammar::Category (indexed by its value).
struct Accuracy {
  std::array<long, 5> right{}, total{};
  double fraction(grammar::Category c) const;  // NaN when there is no such position
};
// Teacher-forced: the model reads each whole sentence once.
Accuracy accuracy(const MiniGpt& model, const std::vector<grammar::Sentence>& sentences);
// Right and total at the positions whose fixed target is "s" (he or she with
// a present-tense verb: the English "-s").
std::array<long, 2> s_slot_accuracy(const MiniGpt& model,
                                    const std::vector<grammar::Sentence>& sentences);
// The same accuracy for an n-gram model of `train` (every position): the most
// frequent next token after the last n - 1 tokens, backing off to shorter
// contexts where a context was never seen, ties to the lowest id.
Accuracy ngram_accuracy(int n, const std::vector<grammar::Sentence>& train,
                        const std::vector<grammar::Sentence>& sentences);

// The Spanish half written greedily (generate, temperature 0) from the
// English half and "/", against the corpus's.
struct Translation {
  std::vector<int> prompt, expected, got;
  bool exact;
};
std::vector<Translation> translations(const MiniGpt& model,
                                      const std::vector<grammar::Sentence>& sentences);

}  // namespace mha::gpt

#endif  // MHA_LABS_15_MINI_GPT_TRAINING_H_
