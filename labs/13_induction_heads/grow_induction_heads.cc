// grow_induction_heads: two layers grow an induction head. An experiment,
// run with your own model and gradients (lab 13, on labs 1-4 and 10) and
// your own head scores (lab 7).
//
//   bazel run -c opt //labs/13_induction_heads:grow_induction_heads
//   bazel run -c opt //labs/13_induction_heads:grow_induction_heads -- --steps 4000 --seed 1
//   bazel run -c opt //labs/13_induction_heads:grow_induction_heads -- --quick
//   bazel run -c opt //labs/13_induction_heads:grow_induction_heads -- --positions rope
//
// The data: a block of L distinct random tokens (L drawn from
// [--min-len, --max-len] per sequence) followed by the same block again,
// T = 2L. In the first half the next token is a fresh random draw: nothing
// predicts it. In the repeated half it is the token that followed the
// current token's first occurrence, which a model can only find by looking
// at what came before the key it attends to. The block length varies, so no
// fixed positional offset finds it either.
//
// It trains a one-layer and a two-layer AttentionOnlyTransformer from the
// same seed (same embeddings and same first layer), on the same batches,
// with Adam (common/programs/optimizer.h) on loss_and_grads. Every --eval-every steps
// it measures, on held-out sequences, the loss on the first half (targets
// 1 .. L-1) and on the repeated half (targets L+1 .. 2L-1). At the end it
// prints each layer-2 head's induction score and each layer-1 head's
// previous-token score (lab 7, averaged over held-out sequences of length
// 2 * --max-len). Then it asks which circuit does the induction
// (circuits.h): the Q-, K- and V-composition scores of every layer-1 head
// into every layer-2 head, beside the level of random heads, and path
// ablations: the repeated-half loss when one layer-1 head's output (all of
// it, or only its position part, or only its token part) is removed from
// what the layer-2 queries, keys or values read, the residual untouched.
// It writes under out/grow_induction_heads/ in the repository (each chart a
// .json that tools/plot/draw_chart.py draws as the .png of the same name):
//   loss_curves.csv, loss_curves.json   the four curves by step
//   view.json                           the heads, their scores, the composition scores and
//                                       the induction score over training, for the course
//                                       reader's head viewer (./lab read)
//   heads.json                          every head's attention on one sequence
//   composition.json                    the three composition matrices
//   ablations.json                      the path ablations
//
// --positions rope trains the same models with no `pos`: every layer rotates
// its queries and keys with your lab 11's apply_rope instead, so a position
// can never be copied into the residual stream.
//
// The data, the measurements and the reports are in induction_experiment.h;
// this file holds the flags and the training.
//
// Deterministic: the same flags give the same numbers, bit for bit, on the
// same machine. On another CPU (another BLAS kernel, another summation
// order) the first steps agree to the printed digits and, after the phase
// change amplifies the rounding, the table drifts in the 2nd or 3rd digit.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/programs/chart_spec.h"
#include "common/programs/lab_program.h"
#include "common/programs/optimizer.h"
#include "labs/13_induction_heads/induction_experiment.h"
#include "labs/13_induction_heads/induction_heads.h"

namespace {

using mha::AttentionOnlyTransformer;
using mha::induction_experiment::HeadScores;
using mha::induction_experiment::Options;
using mha::induction_experiment::Sequence;
using mha::induction_experiment::ablation_report;
using mha::induction_experiment::composition_report;
using mha::induction_experiment::evaluate;
using mha::induction_experiment::heads_chart;
using mha::induction_experiment::heads_view;
using mha::induction_experiment::random_sequence;
using mha::induction_experiment::repeated_block;
using mha::induction_experiment::score_heads;

const mha::LabProgram kProgram = {
    "grow_induction_heads", "your labs 1-4, 7, 10 and 13",
    "bazel run -c opt --config=solutions //labs/13_induction_heads:grow_induction_heads"};  // in the instructors' repository

mha::FlagSet flags_of(Options& o) {
  mha::FlagSet f(kProgram.name);
  f.Int("--steps", &o.steps, 1, 1000000, "Adam steps per model (default 3000)")
      .Int("--batch", &o.batch, 1, 4096, "sequences per step (default 16)")
      .Number("--lr", &o.lr, 1e-6, 1.0,
              "learning rate, after a warm-up of 5% of the steps (default 0.003)")
      .Int("--vocab", &o.vocab, 2, 100000, "distinct tokens (default 64; at least --max-len)")
      .Int("--d-model", &o.d_model, 1, 1024, "width of the residual stream (default 32)")
      .Int("--heads", &o.heads, 1, 1024, "heads per layer, must divide --d-model (default 4)")
      .Int("--min-len", &o.min_len, 2, 512, "shortest block, L (default 6; sequences are 2L long)")
      .Int("--max-len", &o.max_len, 2, 512, "longest block (default 12)")
      .Int("--eval-every", &o.eval_every, 1, 1000000,
           "steps between two measurements of the held-out losses (default 50)")
      .Seed("--seed", &o.seed, "weights and data (default 0)")
      .Choice("--positions", &o.positions, {"learned", "rope"},
              "learned: x_0 = embed + pos (lab 13, the default); rope: no pos, every\n"
              "layer rotates its queries and keys (your lab 11)")
      .Out(&o.out)
      .Switch("--quick", [&o] {
        o.steps = 60;
        o.batch = 4;
        o.d_model = 16;
        o.heads = 2;
        o.vocab = 16;
        o.min_len = 4;
        o.max_len = 6;
        o.eval_every = 10;
        o.eval_sequences = 8;
      }, "a small run for tests: 60 steps of 4, d_model 16, 2 heads");
  return f;
}

void check(Options& o) {
  if (o.d_model % o.heads != 0) {
    throw std::invalid_argument("--heads " + std::to_string(o.heads) +
                                " does not divide --d-model " + std::to_string(o.d_model));
  }
  if (o.min_len > o.max_len) {
    throw std::invalid_argument("--min-len " + std::to_string(o.min_len) +
                                " is larger than --max-len " + std::to_string(o.max_len));
  }
  if (o.positions == "rope" && (o.d_model / o.heads) % 2 != 0) {
    throw std::invalid_argument("--positions rope needs an even d_head, not d_model " +
                                std::to_string(o.d_model) + " / " + std::to_string(o.heads) +
                                " heads = " + std::to_string(o.d_model / o.heads));
  }
  if (o.vocab < o.max_len) {
    throw std::invalid_argument("--vocab " + std::to_string(o.vocab) +
                                " is smaller than --max-len " + std::to_string(o.max_len) +
                                ": a block holds distinct tokens");
  }
}

// One model, its gradient accumulator and its optimiser.
struct Trainee {
  std::string name;
  AttentionOnlyTransformer model;
  mha::TransformerGrads sum;  // the batch's summed gradients
  mha::Adam adam;
  std::vector<double> first_half, repeated_half;  // held-out losses by evaluation
  double seconds = 0.0;
};

void zero_like(mha::TransformerGrads& g, const AttentionOnlyTransformer& m) {
  g.d_embed = xt::zeros<float>(m.embed.shape());
  g.d_pos = xt::zeros<float>(m.pos.shape());
  g.d_unembed = xt::zeros<float>(m.unembed.shape());
  g.layers.resize(m.layers.size());
  for (std::size_t l = 0; l < m.layers.size(); ++l) {
    const auto shape = m.layers[l].W_Q.shape();
    g.layers[l] = {xt::zeros<float>(shape), xt::zeros<float>(shape), xt::zeros<float>(shape),
                   xt::zeros<float>(shape)};
  }
}

// With rotary positions `pos` is not read, and not trained.
std::vector<mha::Param> parameters(AttentionOnlyTransformer& m, const mha::TransformerGrads& g,
                                   mha::Positions positions) {
  std::vector<mha::Param> p = {mha::param(m.embed, g.d_embed), mha::param(m.unembed, g.d_unembed)};
  if (positions == mha::Positions::kLearned) p.push_back(mha::param(m.pos, g.d_pos));
  for (std::size_t l = 0; l < m.layers.size(); ++l) {
    p.push_back(mha::param(m.layers[l].W_Q, g.layers[l].dW_Q));
    p.push_back(mha::param(m.layers[l].W_K, g.layers[l].dW_K));
    p.push_back(mha::param(m.layers[l].W_V, g.layers[l].dW_V));
    p.push_back(mha::param(m.layers[l].W_O, g.layers[l].dW_O));
  }
  return p;
}

// sum += w * g
void add(mha::TransformerGrads& sum, const mha::TransformerGrads& g, float w) {
  sum.d_embed += w * g.d_embed;
  sum.d_pos += w * g.d_pos;
  sum.d_unembed += w * g.d_unembed;
  for (std::size_t l = 0; l < sum.layers.size(); ++l) {
    sum.layers[l].dW_Q += w * g.layers[l].dW_Q;
    sum.layers[l].dW_K += w * g.layers[l].dW_K;
    sum.layers[l].dW_V += w * g.layers[l].dW_V;
    sum.layers[l].dW_O += w * g.layers[l].dW_O;
  }
}

// The best expected first-half loss (targets 1 .. L-1, L uniform in
// [min_len, max_len]). After t distinct tokens the next one is one of the
// vocab - t not yet seen. A predictor that knows L spreads its guess over
// them; the model does not know L, and training also scores the repeat's
// first token (a token already seen), so the best it can do keeps the
// probability P(L = t | L >= t) for "the block ends here".
void first_half_floors(const Options& o, double* knows_len, double* not_knowing) {
  double a = 0, b = 0;
  long n = 0;
  for (int L = o.min_len; L <= o.max_len; ++L) {
    for (int t = 1; t < L; ++t) {
      const double p_end = t < o.min_len ? 0.0 : 1.0 / (o.max_len - t + 1);
      a += std::log(double(o.vocab - t));
      b += std::log(double(o.vocab - t)) - std::log(1.0 - p_end);
      ++n;
    }
  }
  *knows_len = a / n;
  *not_knowing = b / n;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run(const Options& o) {
  std::printf("data: L distinct random tokens of %d, L in [%d, %d], then the same L again (T = 2L)\n",
              o.vocab, o.min_len, o.max_len);
  std::printf("models: attention-only, d_model=%d, %d heads, 1 and 2 layers, seed %llu, %s\n",
              o.d_model, o.heads, static_cast<unsigned long long>(o.seed),
              o.positions == "rope" ? "rotary positions (lab 11) instead of pos"
                                    : "learned positions (pos)");
  const mha::Positions positions = mha::parse_positions(o.positions);
  std::printf("training: Adam lr %g (warm-up %d steps), %d steps of %d sequences\n", o.lr,
              std::max(1, o.steps / 20), o.steps, o.batch);
#ifndef NDEBUG
  std::printf("(built without -c opt: this takes many times longer than it needs to)\n");
#endif
  const int max_T = 2 * o.max_len;
  std::vector<Trainee> models;
  for (int layers : {1, 2}) {
    Trainee t{std::to_string(layers) + " layer" + (layers == 1 ? "" : "s"),
              AttentionOnlyTransformer(o.vocab, max_T, o.d_model, o.heads, layers, o.seed),
              {},
              mha::Adam(o.lr),
              {},
              {}};
    zero_like(t.sum, t.model);
    models.push_back(std::move(t));
  }
  std::mt19937_64 held_gen(o.seed ^ 0x9e3779b97f4a7c15ULL);
  std::vector<Sequence> held_out, probes;
  for (int i = 0; i < o.eval_sequences; ++i) held_out.push_back(random_sequence(held_gen, o));
  for (int i = 0; i < o.eval_sequences; ++i) probes.push_back(repeated_block(held_gen, o.vocab, o.max_len));

  std::mt19937_64 gen(o.seed);
  std::vector<int> eval_steps;
  std::vector<std::vector<double>> induction_by_step;  // per evaluation, each layer-2 head's
  const int warmup = std::max(1, o.steps / 20);
  for (int step = 0; step <= o.steps; ++step) {
    if (step % o.eval_every == 0 || step == o.steps) {
      eval_steps.push_back(step);
      for (Trainee& t : models) {
        double f, r;
        evaluate(t.model, positions, held_out, &f, &r);
        t.first_half.push_back(f);
        t.repeated_half.push_back(r);
      }
      induction_by_step.push_back(score_heads(models[1].model, positions, probes).induction);
      char progress[160];
      std::snprintf(progress, sizeof progress,
                    "step %5d/%d   repeated-half loss: 1 layer %.3f, 2 layers %.3f   "
                    "first half: %.3f, %.3f ",
                    step, o.steps, models[0].repeated_half.back(), models[1].repeated_half.back(),
                    models[0].first_half.back(), models[1].first_half.back());
      mha::PrintProgress(progress);
    }
    if (step == o.steps) break;
    std::vector<Sequence> batch;
    for (int b = 0; b < o.batch; ++b) batch.push_back(random_sequence(gen, o));
    const float lr = o.lr * std::min(1.0f, float(step + 1) / warmup);
    for (Trainee& t : models) {
      const auto t0 = std::chrono::steady_clock::now();
      zero_like(t.sum, t.model);
      for (const Sequence& s : batch) {
        add(t.sum, mha::model_loss_and_grads(t.model, s.inputs, s.targets, positions).grads,
            1.0f / o.batch);
      }
      t.adam.set_learning_rate(lr);
      t.adam.step(parameters(t.model, t.sum, positions));
      t.seconds += seconds_since(t0);
    }
  }
  mha::EndProgress();

  const double ln_v = std::log(double(o.vocab));
  std::printf("\nheld-out loss (nats per token; ln %d = %.3f is a uniform guess)\n", o.vocab, ln_v);
  double floor_known, floor_unknown;
  first_half_floors(o, &floor_known, &floor_unknown);
  std::printf("the first half's best: %.3f for a model that does not know L (%.3f if it knew L)\n",
              floor_unknown, floor_known);
  std::printf("%8s  %12s %14s  %12s %14s\n", "step", "1L first", "1L repeated", "2L first",
              "2L repeated");
  const std::size_t n = eval_steps.size();
  const std::size_t every = std::max<std::size_t>(1, n / 12);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % every != 0 && i + 1 != n) continue;
    std::printf("%8d  %12.3f %14.3f  %12.3f %14.3f\n", eval_steps[i], models[0].first_half[i],
                models[0].repeated_half[i], models[1].first_half[i], models[1].repeated_half[i]);
  }
  // The phase change: the largest drop of the two-layer repeated-half loss
  // between two consecutive measurements, after the first tenth of the run
  // (where every curve falls from its random start).
  std::size_t drop_at = 1;
  double drop = -1e300;
  for (std::size_t i = 1; i < n; ++i) {
    if (eval_steps[i - 1] < o.steps / 10) continue;
    const double d = models[1].repeated_half[i - 1] - models[1].repeated_half[i];
    if (d > drop) {
      drop = d;
      drop_at = i;
    }
  }
  if (n > 1 && drop > -1e300) {
    std::printf("largest drop of the 2-layer repeated-half loss: %.3f nats between steps %d and %d\n",
                drop, eval_steps[drop_at - 1], eval_steps[drop_at]);
  }

  const HeadScores two = score_heads(models[1].model, positions, probes);
  const HeadScores one = score_heads(models[0].model, positions, probes);
  std::printf("\nhead scores (lab 7), mean over %zu sequences of T = %d:\n", probes.size(), max_T);
  std::printf("  2 layers, layer 1, previous-token:");
  for (double v : two.previous_token) std::printf(" %.2f", v);
  std::printf("\n    previous-token, first half only: ");
  for (double v : two.previous_token_first_half) std::printf(" %.2f", v);
  std::printf("\n    duplicate-token, repeated half:  ");
  for (double v : two.duplicate_token) std::printf(" %.2f", v);
  std::printf("\n  2 layers, layer 2, induction:     ");
  for (double v : two.induction) std::printf(" %.2f", v);
  std::printf("\n  1 layer,  induction:              ");
  for (double v : one.induction) std::printf(" %.2f", v);
  std::printf("\n");
  const mha::Json composition = composition_report(models[1].model, o);
  const mha::Json ablations =
      ablation_report(models[1].model, o, held_out, models[1].repeated_half.back());
  std::printf("\ntraining wall-clock time (grows with the machine's load): 1 layer %.1f s, "
              "2 layers %.1f s\n",
              models[0].seconds, models[1].seconds);

  const std::filesystem::path dir = mha::OutputFolder(o.out, kProgram.name);
  const auto csv_path = dir / "loss_curves.csv";
  std::ofstream csv(csv_path);
  csv << "step,one_layer_first_half,one_layer_repeated_half,two_layers_first_half,"
         "two_layers_repeated_half\n";
  for (std::size_t i = 0; i < n; ++i) {
    csv << eval_steps[i] << "," << models[0].first_half[i] << "," << models[0].repeated_half[i]
        << "," << models[1].first_half[i] << "," << models[1].repeated_half[i] << "\n";
  }
  char subtitle[200];
  std::snprintf(subtitle, sizeof subtitle,
                "vocab %d, L in [%d, %d], d_model %d, %d heads, Adam %g, %d steps x %d; "
                "held-out, every %d steps",
                o.vocab, o.min_len, o.max_len, o.d_model, o.heads, o.lr, o.steps, o.batch,
                o.eval_every);
  csv.close();
  std::vector<double> x(eval_steps.begin(), eval_steps.end());
  const mha::Json curves =
      mha::LinesChart("Held-out loss: first half and repeated half", subtitle, "step",
                      "loss (nats per token)",
                      {{"1 layer, first half", x, models[0].first_half},
                       {"1 layer, repeated half", x, models[0].repeated_half},
                       {"2 layers, first half", x, models[1].first_half},
                       {"2 layers, repeated half", x, models[1].repeated_half}})
          .Set("y_scale", "log");
  char heads_subtitle[200];
  std::snprintf(heads_subtitle, sizeof heads_subtitle,
                "the 2-layer model after %d steps, on a block of %d tokens repeated; scores "
                "are means over %zu sequences",
                o.steps, o.max_len, probes.size());
  std::cout << "\n";
  mha::WriteChart(heads_view(models[1].model, positions, probes.front(), two, eval_steps,
                             induction_by_step, heads_subtitle),
                  dir / "view.json");
  mha::WriteAndDrawCharts(
      {csv_path, dir / "view.json"},
      {{dir / "loss_curves.json", curves},
       {dir / "heads.json",
        heads_chart(models[1].model, positions, probes.front(), two, heads_subtitle)},
       {dir / "composition.json", composition},
       {dir / "ablations.json", ablations}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return mha::RunLabProgram<Options>(kProgram, argc, argv, flags_of, check, run);
}
