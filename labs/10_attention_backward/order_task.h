// The order task of the heads sweep: one prediction that needs several
// attention patterns at once.
//
// A sequence is `length` tokens drawn from `symbols` plain symbols
// 0 .. K-1; `marks` of them, at random distinct places before the last
// token, are replaced by the marked form of the same symbol (token K + s).
// At every position after the last mark the model must name the marked
// symbols in the order they appeared, as one of K^marks classes:
//
//   inputs   2 0 6 1 7 1 0 5 2 3 ...   (K = 4: tokens 4..7 are 0..3 marked)
//                ^   ^     ^           the marks: 2, then 3, then 1
//   targets  - - - - - - - - 45 45 ... (2*16 + 3*4 + 1, at every position
//                                       after the last mark)
//
// Why one head cannot simply do it: a head's output is a weighted average of
// its values, and W_V turns a marked symbol into the same vector wherever it
// sits (the position is added to the token, not attached to it). One head
// that reads the three marks gets a blend of their symbols, which says which
// symbols were marked but not in which order, unless its weights differ from
// mark to mark; and the gaps between the marks change from one sequence to
// the next. Several heads can each read one thing (the earliest mark, the
// latest, all of them) through their own W_V and rows of W_O, into
// different directions of y, where the unembedding can name the triple.
#ifndef MHA_LABS_10_ATTENTION_BACKWARD_ORDER_TASK_H_
#define MHA_LABS_10_ATTENTION_BACKWARD_ORDER_TASK_H_

#include <cstdint>
#include <random>
#include <vector>

#include "labs/10_attention_backward/attention_only_model.h"
#include "labs/10_attention_backward/copy_task.h"

namespace mha {
namespace training {

// The task, and the training settings (d_model, steps, batch,
// learning_rate, seed, eval_examples: token_model.h).
struct OrderTaskConfig : TrainingConfig {
  int length = 16;          // T, tokens per sequence
  int symbols = 4;          // K plain symbols; tokens K .. 2K-1 are their marked forms
  int marks = 3;            // marked tokens per sequence; the answer is one of K^marks
};

// The number of answers, symbols^marks. Throws std::invalid_argument unless
// symbols >= 2, 1 <= marks < length and symbols^marks <= 4096.
int order_classes(const OrderTaskConfig& config);

Example order_example(const OrderTaskConfig& config, std::mt19937_64& gen);
std::vector<Example> order_examples(const OrderTaskConfig& config, int count, std::uint64_t seed);

// Trains AttentionOnlyModel(max(2K, K^marks), length, d_model, n_heads, seed)
// on the order task (train_model). The same config gives the same weights
// and the same batches in the same order for every n_heads.
TrainResult train_order_model(const OrderTaskConfig& config, int n_heads);

}  // namespace training
}  // namespace mha

#endif  // MHA_LABS_10_ATTENTION_BACKWARD_ORDER_TASK_H_
