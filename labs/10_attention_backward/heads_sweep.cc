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
// and max over the seeds) and writes the loss curves as a PNG (and a CSV)
// per task under out/heads_sweep/ in the repository.
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
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/programs/lab_program.h"
#include "labs/10_attention_backward/charts.h"
#include "labs/10_attention_backward/copy_task.h"
#include "labs/10_attention_backward/order_task.h"

namespace {

using mha::training::CopyTaskConfig;
using mha::training::OrderTaskConfig;
using mha::training::TrainResult;

constexpr int kDModel = 64;

struct Options {
  bool copy = true, order = true;  // --task
  CopyTaskConfig copy_config;
  OrderTaskConfig order_config;
  std::vector<int> heads = {1, 2, 4, 8, 16};
  std::uint64_t seed = 0;  // first seed
  int copy_seeds = 3;      // seed, seed + 1, ...
  int order_seeds = 5;
  std::string out;  // empty: out/heads_sweep in the repository
};

const char* const kUsage =
    "usage: heads_sweep [--task copy|order|both] [--heads 1,2,4,8,16] [--steps N] [--batch B]\n"
    "                   [--lr LR] [--seed S] [--seeds N] [--length L] [--alphabet A]\n"
    "                   [--symbols K] [--marks M] [--out DIR] [--quick]\n"
    "  --task      which task to train: copy, order or both (default both)\n"
    "  --heads     head counts to train, comma separated (each must divide d_model=64)\n"
    "  --steps     Adam steps per model (default 1500, both tasks)\n"
    "  --batch     sequences per step (default 32)\n"
    "  --lr        peak learning rate, cosine decay to 0 (default 0.003)\n"
    "  --seed      first seed of the weights and data (default 0)\n"
    "  --seeds     how many seeds to train per head count, from --seed on\n"
    "              (default 3 for copy, 5 for order)\n"
    "  --length    copy: tokens to copy, L (default 8; sequences are 2L long)\n"
    "  --alphabet  copy: distinct tokens (default 16)\n"
    "  --symbols   order: plain symbols K (default 4)\n"
    "  --marks     order: marked tokens to name in order (default 3; K^marks answers)\n"
    "  --out       where the PNGs and CSVs go (default: out/heads_sweep in the\n"
    "              repository when started with bazel run, else ./out/heads_sweep)\n"
    "  --quick     a small run for tests: 1, 4 and 16 heads, one seed, 30 steps of 8\n";

Options parse_args(int argc, char** argv) {
  Options o;
  mha::Flags flags(argc, argv, kUsage);
  std::optional<int> steps, batch, seeds;
  std::optional<float> lr;
  bool quick = false;
  while (flags.Next()) {
    if (flags.Is("--task")) {
      const std::string task = flags.String();
      if (task != "copy" && task != "order" && task != "both") {
        throw std::invalid_argument("--task: \"" + task + "\" is not a task; expected copy, order "
                                    "or both");
      }
      o.copy = task != "order";
      o.order = task != "copy";
    } else if (flags.Is("--heads")) {
      o.heads.clear();
      for (long long h : flags.IntList(1, kDModel)) o.heads.push_back(static_cast<int>(h));
    } else if (flags.Is("--steps")) {
      steps = static_cast<int>(flags.Int(2, 1000000));
    } else if (flags.Is("--batch")) {
      batch = static_cast<int>(flags.Int(1, 4096));
    } else if (flags.Is("--lr")) {
      lr = static_cast<float>(flags.Number(1e-6, 10.0));
    } else if (flags.Is("--seed")) {
      o.seed = flags.UInt64();
    } else if (flags.Is("--seeds")) {
      seeds = static_cast<int>(flags.Int(1, 1000));
    } else if (flags.Is("--length")) {
      o.copy_config.length = static_cast<int>(flags.Int(2, 256));
    } else if (flags.Is("--alphabet")) {
      o.copy_config.alphabet = static_cast<int>(flags.Int(2, 10000));
    } else if (flags.Is("--symbols")) {
      o.order_config.symbols = static_cast<int>(flags.Int(2, 64));
    } else if (flags.Is("--marks")) {
      o.order_config.marks = static_cast<int>(flags.Int(1, o.order_config.length - 1));
    } else if (flags.Is("--out")) {
      o.out = flags.String();
    } else if (flags.Is("--quick")) {
      quick = flags.Switch();
    } else {
      flags.Unknown();
    }
  }
  if (quick) {
    o.heads = {1, 4, 16};
    o.copy_config.steps = o.order_config.steps = 30;
    o.copy_config.batch = o.order_config.batch = 8;
    o.copy_config.eval_examples = o.order_config.eval_examples = 50;
    o.copy_seeds = o.order_seeds = 1;
  }
  // Explicit flags win over --quick, whatever their order.
  if (steps) o.copy_config.steps = o.order_config.steps = *steps;
  if (batch) o.copy_config.batch = o.order_config.batch = *batch;
  if (lr) o.copy_config.learning_rate = o.order_config.learning_rate = *lr;
  if (seeds) o.copy_seeds = o.order_seeds = *seeds;
  for (int h : o.heads) {
    if (kDModel % h != 0) {
      throw std::invalid_argument("--heads: " + std::to_string(h) + " does not divide d_model = " +
                                  std::to_string(kDModel));
    }
  }
  mha::training::order_classes(o.order_config);  // throws on --symbols/--marks out of range
  return o;
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
  std::vector<mha::charts::Curve> curves;
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
    curves.push_back({label, smooth(row.mean_curve, window)});
  }
  char subtitle[240];
  std::snprintf(subtitle, sizeof subtitle, "%s; mean of %d seed%s, %zu-step average",
                task.subtitle.c_str(), task.seeds, task.seeds == 1 ? "" : "s", window);
  const auto png_path = dir / (task.name == "copy" ? "loss_curves.png"
                                                   : task.name + "_loss_curves.png");
  mha::charts::loss_curves(png_path.string(),
                           "Training loss by number of heads: " + task.name + " task", subtitle,
                           "training loss (nats per scored token)", curves);
  std::cout << "wrote\n  " << png_path.string() << "\n  " << csv_path.string() << "\n\n";
}

int run(const Options& o) {
  std::printf("model: embed + pos -> x + MultiHeadAttention(d_model=%d, causal) -> unembed\n",
              kDModel);
#ifndef NDEBUG
  std::printf("(built without -c opt: this takes about twenty times longer than it needs to)\n");
#endif
  const std::filesystem::path dir =
      o.out.empty() ? mha::WorkspaceRoot() / "out" / "heads_sweep" : std::filesystem::path(o.out);
  std::filesystem::create_directories(dir);
  const double start = cpu_now();
  char text[400];
  if (o.copy) {
    const CopyTaskConfig& c = o.copy_config;
    Task task;
    task.name = "copy";
    std::snprintf(text, sizeof text,
                  "\n== copy task: L=%d tokens from %d symbols, a separator, the copy (T=%d)\n"
                  "training: Adam lr %g (cosine to 0), %d steps of %d sequences, seeds %llu..%llu\n",
                  c.length, c.alphabet, 2 * c.length, c.learning_rate, c.steps, c.batch,
                  static_cast<unsigned long long>(o.seed),
                  static_cast<unsigned long long>(o.seed + o.copy_seeds - 1));
    task.description = text;
    std::snprintf(text, sizeof text, "copy L=%d of %d symbols, d_model=%d, Adam %g, %d steps x %d",
                  c.length, c.alphabet, kDModel, c.learning_rate, c.steps, c.batch);
    task.subtitle = text;
    task.steps = c.steps;
    task.seeds = o.copy_seeds;
    task.eval_examples = c.eval_examples;
    task.level = 0.01;
    task.answers = c.alphabet;
    task.train = [c](int heads, std::uint64_t seed) {
      CopyTaskConfig config = c;
      config.seed = seed;
      return mha::training::train_copy_model(config, heads);
    };
    sweep(task, o, dir);
  }
  if (o.order) {
    const OrderTaskConfig& c = o.order_config;
    Task task;
    task.name = "order";
    std::snprintf(text, sizeof text,
                  "\n== order task: T=%d tokens from %d symbols, %d of them marked; after the last\n"
                  "mark, name the marked symbols in order (one of %d answers)\n"
                  "training: Adam lr %g (cosine to 0), %d steps of %d sequences, seeds %llu..%llu\n",
                  c.length, c.symbols, c.marks, mha::training::order_classes(c), c.learning_rate,
                  c.steps, c.batch, static_cast<unsigned long long>(o.seed),
                  static_cast<unsigned long long>(o.seed + o.order_seeds - 1));
    task.description = text;
    std::snprintf(text, sizeof text, "order: %d marked of T=%d, %d symbols, d_model=%d, Adam %g, "
                  "%d steps x %d", c.marks, c.length, c.symbols, kDModel, c.learning_rate,
                  c.steps, c.batch);
    task.subtitle = text;
    task.steps = c.steps;
    task.seeds = o.order_seeds;
    task.eval_examples = c.eval_examples;
    task.level = 0.1;
    task.answers = mha::training::order_classes(c);
    task.train = [c](int heads, std::uint64_t seed) {
      OrderTaskConfig config = c;
      config.seed = seed;
      return mha::training::train_order_model(config, heads);
    };
    sweep(task, o, dir);
  }
  std::printf("CPU time of the whole sweep: %.0f s\n", cpu_now() - start);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return mha::RunLabProgram(
      {"heads_sweep", "your labs 1-3 and 10",
       "bazel run -c opt --config=solutions //labs/10_attention_backward:heads_sweep", kUsage},  // in the instructors' repository
      [&] { return run(parse_args(argc, argv)); });
}
