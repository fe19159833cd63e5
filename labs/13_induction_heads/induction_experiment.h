// The induction-head experiment's data, measurements and reports (grow_induction_heads.cc
// runs it; its header comment says what the experiment asks). Not part of the graded API.
//
//   Sequence s = repeated_block(gen, 64, 8);             // 8 distinct tokens, twice
//   evaluate(model, Positions::kLearned, held_out, &first, &repeated);
//   const HeadScores scores = score_heads(model, Positions::kLearned, probes);
#ifndef LABS_13_INDUCTION_HEADS_INDUCTION_EXPERIMENT_H_
#define LABS_13_INDUCTION_HEADS_INDUCTION_EXPERIMENT_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common/programs/chart_spec.h"
#include "labs/13_induction_heads/circuits.h"
#include "labs/13_induction_heads/induction_heads.h"

namespace mha::induction_experiment {

// The experiment's settings, which the program's flags set (its --help lists them).
struct Options {
  int vocab = 64;
  int d_model = 32;
  int heads = 4;
  int min_len = 6;
  int max_len = 12;
  int steps = 3000;
  int batch = 16;
  float lr = 3e-3f;
  int eval_every = 50;
  int eval_sequences = 64;
  std::uint64_t seed = 0;
  std::string positions = "learned";  // or "rope" (circuits.h)
  std::string out;  // empty: out/grow_induction_heads in the repository
};

// A block of L distinct tokens, then the same block: inputs (2L) and the
// next-token targets (the last position has none).
struct Sequence {
  int block_len;
  std::vector<int> inputs, targets;
};

Sequence repeated_block(std::mt19937_64& gen, int vocab, int block_len);

// A block of a length drawn from [o.min_len, o.max_len].
Sequence random_sequence(std::mt19937_64& gen, const Options& o);

// Mean cross-entropy per half on held-out sequences: first half = inputs
// 0 .. L-2 (targets 1 .. L-1), repeated half = inputs L .. 2L-2. `logits_of`
// is the model's forward, or an ablated one.
template <class LogitsOf>
void evaluate_with(LogitsOf logits_of, const std::vector<Sequence>& held_out, double* first,
                   double* repeated) {
  double f = 0, r = 0;
  long nf = 0, nr = 0;
  for (const Sequence& s : held_out) {
    const mha::Tensor2 logits = logits_of(s.inputs);  // (T, vocab)
    const int L = s.block_len, V = static_cast<int>(logits.shape(1));
    for (int t = 0; t < 2 * L - 1; ++t) {
      if (t == L - 1) continue;  // the second block's first token: unpredictable, and not "first half"
      const float* row = &logits(t, 0);
      const float max = *std::max_element(row, row + V);
      double sum = 0;
      for (int c = 0; c < V; ++c) sum += std::exp(double(row[c]) - max);
      const double loss = std::log(sum) - (double(row[s.targets[t]]) - max);
      if (t < L - 1) {
        f += loss;
        ++nf;
      } else {
        r += loss;
        ++nr;
      }
    }
  }
  *first = f / nf;
  *repeated = r / nr;
}

// evaluate_with on the model's own forward.
void evaluate(const AttentionOnlyTransformer& m, mha::Positions positions,
              const std::vector<Sequence>& held_out, double* first, double* repeated);

// Head scores of a trained model on held-out sequences of length 2 * block.
struct HeadScores {
  std::vector<double> previous_token;  // layer 1's heads
  std::vector<double> induction;       // the last layer's heads
  // Layer 1's heads, by half: mean p_{i,i-1} over the first half's queries
  // 1 .. L-1 (where the keys an induction head needs are), and mean
  // p_{i,i-L} over the repeated half's queries L .. 2L-1 (the earlier copy of
  // the current token: a duplicate-token head).
  std::vector<double> previous_token_first_half, duplicate_token;
};

HeadScores score_heads(const AttentionOnlyTransformer& m, mha::Positions positions,
                       const std::vector<Sequence>& probes);

// The data of the course reader's head viewer (./lab read): every head's
// weights on one sequence, its lab 7 score, the composition scores of the two
// layers, and each layer-2 head's induction score at every evaluation.
mha::Json heads_view(const AttentionOnlyTransformer& m, mha::Positions positions,
                     const Sequence& seq, const HeadScores& scores, const std::vector<int>& steps,
                     const std::vector<std::vector<double>>& induction_by_step,
                     const std::string& title);

// Every head's attention on one sequence: a row of heatmaps per layer.
mha::Json heads_chart(const AttentionOnlyTransformer& m, mha::Positions positions,
                      const Sequence& seq, const HeadScores& scores, const std::string& subtitle);

// ------------------------------------------------------------ which circuit?
// The Q-, K- and V-composition of every layer-1 head (column a) into every
// layer-2 head (row b), from the weights alone, beside the level of random
// heads of the same shape; and their chart.
mha::Json composition_report(const AttentionOnlyTransformer& m, const Options& o);

// Path ablations: the repeated-half loss when one layer-1 head's output (or
// one part of it) is removed from one input of layer 2, the residual
// untouched; and their chart.
mha::Json ablation_report(const AttentionOnlyTransformer& m, const Options& o,
                          const std::vector<Sequence>& held_out, double intact);

}  // namespace mha::induction_experiment

#endif  // LABS_13_INDUCTION_HEADS_INDUCTION_EXPERIMENT_H_
