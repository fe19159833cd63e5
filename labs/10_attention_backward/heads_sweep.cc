// heads_sweep: does the number of heads matter? An experiment, run with your
// own forward (lab 3) and backward (lab 10).
//
//   bazel run -c opt //labs/10_attention_backward:heads_sweep
//   bazel run -c opt //labs/10_attention_backward:heads_sweep -- --task order --seeds 10
//   bazel run -c opt //labs/10_attention_backward:heads_sweep -- --quick
//
// For each head count (1, 2, 4, 8 and 16 at d_model = 64, so always the same
// four 64 x 64 matrices) it trains the same one-layer attention-only model
// (attention_only_model.h) on two tasks:
//
//   copy   (copy_task.h)   repeat 8 tokens: one attention pattern suffices
//                          (look 8 places back);
//   order  (order_task.h)  name three marked tokens in the order they came:
//                          one prediction needs several patterns at once.
//
// Within a task and a seed every head count starts from the same initial
// weights (the layer's four matrices do not depend on the head count) and
// sees the same batches in the same order, with the same steps and learning
// rate: only the way W_Q, W_K, W_V and W_O are cut into heads differs. It
// prints per task and head count the held-out loss and accuracy (mean, min
// and max over the seeds) and writes the loss curves as a CSV and a chart
// per task under out/heads_sweep/ in the repository (loss_curves.json, drawn
// as loss_curves.png by tools/plot/draw_chart.py).
//
// Deterministic: the same flags give the same numbers, bit for bit, on the
// same machine. It runs your labs: while lab 1, 2, 3 or 10 is still a stub
// it says which one and exits with status 1; `bazel run --config=solutions`
// runs the reference solutions instead (in the instructors' repository).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/programs/chart_spec.h"
#include "common/programs/lab_program.h"
#include "labs/10_attention_backward/copy_task.h"
#include "labs/10_attention_backward/order_task.h"

namespace {

using mha::training::CopyTaskConfig;
using mha::training::OrderTaskConfig;
using mha::training::TrainResult;

constexpr int kDModel = 64;

const mha::LabProgram kProgram = {
    "heads_sweep", "your labs 1-3 and 10",
    "bazel run -c opt --config=solutions //labs/10_attention_backward:heads_sweep"};  // in the instructors' repository

struct Options {
  std::string task = "both";       // --task
  bool copy = true, order = true;  // from task
  CopyTaskConfig copy_config;
  OrderTaskConfig order_config;
  std::vector<int> heads = {1, 2, 4, 8, 16};
  std::uint64_t seed = 0;  // first seed
  int copy_seeds = 3;      // seed, seed + 1, ...
  int order_seeds = 5;
  std::string out;  // empty: out/heads_sweep in the repository
};

// The flags; --steps, --batch, --lr and --seeds set both tasks.
mha::FlagSet flags_of(Options& o) {
  mha::FlagSet f(kProgram.name);
  f.Choice("--task", &o.task, {"copy", "order", "both"}, "which task to train (default both)")
      .IntList("--heads", &o.heads, 1, kDModel,
               "head counts to train, comma separated (each must divide d_model=64)")
      .Int("--steps", [&o](long long v) { o.copy_config.steps = o.order_config.steps = int(v); },
           2, 1000000, "Adam steps per model (default 1500, both tasks)")
      .Int("--batch", [&o](long long v) { o.copy_config.batch = o.order_config.batch = int(v); },
           1, 4096, "sequences per step (default 32)")
      .Number("--lr",
              [&o](double v) { o.copy_config.learning_rate = o.order_config.learning_rate = float(v); },
              1e-6, 10.0, "peak learning rate, cosine decay to 0 (default 0.003)")
      .Seed("--seed", &o.seed, "first seed of the weights and data (default 0)")
      .Int("--seeds", [&o](long long v) { o.copy_seeds = o.order_seeds = int(v); }, 1, 1000,
           "how many seeds to train per head count, from --seed on\n(default 3 for copy, 5 for order)")
      .Int("--length", &o.copy_config.length, 2, 256,
           "copy: tokens to copy, L (default 8; sequences are 2L long)")
      .Int("--alphabet", &o.copy_config.alphabet, 2, 10000, "copy: distinct tokens (default 16)")
      .Int("--symbols", &o.order_config.symbols, 2, 64, "order: plain symbols K (default 4)")
      .Int("--marks", &o.order_config.marks, 1, o.order_config.length - 1,
           "order: marked tokens to name in order (default 3; K^marks answers)")
      .Out(&o.out)
      .Switch("--quick", [&o] {
        o.heads = {1, 4, 16};
        o.copy_config.steps = o.order_config.steps = 30;
        o.copy_config.batch = o.order_config.batch = 8;
        o.copy_config.eval_examples = o.order_config.eval_examples = 50;
        o.copy_seeds = o.order_seeds = 1;
      }, "a small run for tests: 1, 4 and 16 heads, one seed, 30 steps of 8");
  return f;
}

// What parse cannot check flag by flag.
void check(Options& o) {
  o.copy = o.task != "order";
  o.order = o.task != "copy";
  for (int h : o.heads) {
    if (kDModel % h != 0) {
      throw std::invalid_argument("--heads: " + std::to_string(h) + " does not divide d_model = " +
                                  std::to_string(kDModel));
    }
  }
  mha::training::order_classes(o.order_config);  // throws on --symbols/--marks out of range
}

// Moving average over a centred window, for a readable chart.
std::vector<double> smooth(const std::vector<double>& v, std::size_t window) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::size_t a = i >= window / 2 ? i - window / 2 : 0;
    const std::size_t b = std::min(v.size(), i + window / 2 + 1);
    double s = 0.0;
    for (std::size_t j = a; j < b; ++j) s += v[j];
    out[i] = s / (b - a);
  }
  return out;
}

// The first step at which the smoothed curve is below `level`; -1 if never.
int first_step_below(const std::vector<double>& smoothed, double level) {
  for (std::size_t i = 0; i < smoothed.size(); ++i) {
    if (smoothed[i] < level) return static_cast<int>(i);
  }
  return -1;
}

// What the sweep needs to know about one task.
struct Task {
  std::string name;         // "copy": the file names and the chart's title
  std::string description;  // printed above its table
  std::string subtitle;     // of the chart
  int steps, seeds, eval_examples;
  double level;             // "learned": smoothed training loss below this
  int answers;              // classes of a scored position (uniform guess: ln answers)
  std::function<TrainResult(int heads, std::uint64_t seed)> train;
};

// One head count over every seed.
struct Row {
  int heads;
  std::vector<TrainResult> runs;     // one per seed
  std::vector<double> mean_curve;    // training loss per step, mean over seeds
  std::vector<int> steps_to_level;   // per seed, on its smoothed curve
  double cpu_seconds = 0.0;          // of the whole row
};

struct Spread {
  double mean = 0, lo = 1e300, hi = -1e300;
  void add(double v, int n) {
    mean += v / n;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
};

std::string spread_text(const Spread& s, const char* format) {
  char m[32], a[32], b[32];
  std::snprintf(m, sizeof m, format, s.mean);
  std::snprintf(a, sizeof a, format, s.lo);
  std::snprintf(b, sizeof b, format, s.hi);
  return std::string(m) + " (" + a + "-" + b + ")";
}

double cpu_now() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// Trains every head count on one task, prints its table, writes its files.
void sweep(const Task& task, const Options& o, const std::filesystem::path& dir) {
  std::printf("%s", task.description.c_str());
  char level_title[32];
  std::snprintf(level_title, sizeof level_title, "steps to %g", task.level);
  std::printf("\n%5s %6s %24s %24s %17s %8s\n", "heads", "d_head", "eval loss (min-max)",
              "accuracy (min-max)", level_title, "CPU s");

  const std::size_t window = std::max(1, task.steps / 60);
  std::vector<Row> rows;
  for (int h : o.heads) {
    Row row{h, {}, std::vector<double>(task.steps, 0.0), {}};
    const double start = cpu_now();
    for (int s = 0; s < task.seeds; ++s) {
      row.runs.push_back(task.train(h, o.seed + static_cast<std::uint64_t>(s)));
      const TrainResult& r = row.runs.back();
      for (int i = 0; i < task.steps; ++i) row.mean_curve[i] += r.loss_curve[i] / task.seeds;
      row.steps_to_level.push_back(first_step_below(smooth(r.loss_curve, window), task.level));
    }
    row.cpu_seconds = cpu_now() - start;
    Spread loss, acc, steps;
    bool all_reached = true;
    for (std::size_t s = 0; s < row.runs.size(); ++s) {
      loss.add(row.runs[s].eval.loss, task.seeds);
      acc.add(row.runs[s].eval.accuracy, task.seeds);
      if (row.steps_to_level[s] < 0) all_reached = false;
      steps.add(row.steps_to_level[s], task.seeds);
    }
    const std::string steps_text = all_reached ? spread_text(steps, "%.0f") : "not reached";
    std::printf("%5d %6d %24s %24s %17s %8.1f\n", h, kDModel / h,
                spread_text(loss, "%.2e").c_str(), spread_text(acc, "%.4f").c_str(),
                steps_text.c_str(), row.cpu_seconds);
    std::fflush(stdout);
    rows.push_back(std::move(row));
  }
  std::printf(
      "(means over %d seed%s, min-max in brackets; eval: %d held-out sequences per seed; steps\n"
      "to %g: first step whose training loss, averaged over %zu steps, is below %g nats;\n"
      "a uniform guess over the %d answers has loss ln %d = %.3f and accuracy %.4f)\n",
      task.seeds, task.seeds == 1 ? "" : "s", task.eval_examples, task.level, window, task.level, task.answers, task.answers,
      std::log(double(task.answers)), 1.0 / task.answers);

  // The CSV: one row per step, one column per head count and seed.
  const auto csv_path = dir / (task.name == "copy" ? "loss_curves.csv"
                                                   : task.name + "_loss_curves.csv");
  std::ofstream csv(csv_path);
  csv << "step";
  for (const Row& row : rows)
    for (int s = 0; s < task.seeds; ++s) csv << ",heads_" << row.heads << "_seed_" << o.seed + s;
  csv << "\n";
  for (int i = 0; i < task.steps; ++i) {
    csv << i;
    for (const Row& row : rows)
      for (const TrainResult& r : row.runs) csv << "," << r.loss_curve[i];
    csv << "\n";
  }
  std::vector<mha::Series> curves;
  for (const Row& row : rows) {
    Spread loss, acc;
    for (const TrainResult& r : row.runs) {
      loss.add(r.eval.loss, task.seeds);
      acc.add(r.eval.accuracy, task.seeds);
    }
    char label[128];
    std::snprintf(label, sizeof label,
                  "%d head%s (d_head %d): eval loss %.1e, accuracy %.3f (%.3f-%.3f)", row.heads,
                  row.heads == 1 ? "" : "s", kDModel / row.heads, loss.mean, acc.mean, acc.lo,
                  acc.hi);
    curves.push_back({label, {}, smooth(row.mean_curve, window)});
  }
  char subtitle[240];
  std::snprintf(subtitle, sizeof subtitle, "%s; mean of %d seed%s, %zu-step average",
                task.subtitle.c_str(), task.seeds, task.seeds == 1 ? "" : "s", window);
  const auto chart_path = dir / (task.name == "copy" ? "loss_curves.json"
                                                     : task.name + "_loss_curves.json");
  mha::WriteAndDrawCharts(
      {csv_path}, {{chart_path, mha::LinesChart("Training loss by number of heads: " + task.name +
                                                    " task",
                                                subtitle, "step",
                                                "training loss (nats per scored token)", curves)
                                    .Set("y_scale", "log")}});
  std::cout << "\n";
}

// Completes `task` from its training configuration c (steps, batch, learning
// rate, held-out examples; each seed's copy of c trains one model with
// `train`) and sweeps it. `what` is the first line of its description.
template <typename Config, typename Train>
void sweep_task(const std::string& what, Task task, const Config& c, Train train,
                const Options& o, const std::filesystem::path& dir) {
  task.description =
      what + mha::Format("training: Adam lr %g (cosine to 0), %d steps of %d sequences, seeds "
                         "%llu..%llu\n",
                         c.learning_rate, c.steps, c.batch,
                         static_cast<unsigned long long>(o.seed),
                         static_cast<unsigned long long>(o.seed + task.seeds - 1));
  task.subtitle += mha::Format(", d_model=%d, Adam %g, %d steps x %d", kDModel, c.learning_rate,
                               c.steps, c.batch);
  task.steps = c.steps;
  task.eval_examples = c.eval_examples;
  task.train = [c, train](int heads, std::uint64_t seed) {
    Config config = c;
    config.seed = seed;
    return train(config, heads);
  };
  sweep(task, o, dir);
}

int run(const Options& o) {
  std::printf("model: embed + pos -> x + MultiHeadAttention(d_model=%d, causal) -> unembed\n",
              kDModel);
#ifndef NDEBUG
  std::printf("(built without -c opt: this takes about twenty times longer than it needs to)\n");
#endif
  const std::filesystem::path dir = mha::OutputFolder(o.out, kProgram.name);
  const double start = cpu_now();
  if (o.copy) {
    const CopyTaskConfig& c = o.copy_config;
    sweep_task(mha::Format("\n== copy task: L=%d tokens from %d symbols, a separator, the copy "
                           "(T=%d)\n",
                           c.length, c.alphabet, 2 * c.length),
               {"copy", "", mha::Format("copy L=%d of %d symbols", c.length, c.alphabet), 0,
                o.copy_seeds, 0, /*level=*/0.01, /*answers=*/c.alphabet, {}},
               c, mha::training::train_copy_model, o, dir);
  }
  if (o.order) {
    const OrderTaskConfig& c = o.order_config;
    const int answers = mha::training::order_classes(c);
    sweep_task(mha::Format("\n== order task: T=%d tokens from %d symbols, %d of them marked; "
                           "after the last\nmark, name the marked symbols in order (one of %d "
                           "answers)\n",
                           c.length, c.symbols, c.marks, answers),
               {"order", "",
                mha::Format("order: %d marked of T=%d, %d symbols", c.marks, c.length, c.symbols),
                0, o.order_seeds, 0, /*level=*/0.1, answers, {}},
               c, mha::training::train_order_model, o, dir);
  }
  std::printf("CPU time of the whole sweep: %.0f s\n", cpu_now() - start);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return mha::RunLabProgram<Options>(kProgram, argc, argv, flags_of, check, run);
}
