// heads_sweep: does the number of heads matter? An experiment, run with your
// own forward (lab 3) and backward (lab 10).
//
//   bazel run -c opt //labs/10_attention_backward:heads_sweep
//   bazel run -c opt //labs/10_attention_backward:heads_sweep -- --steps 3000 --seed 1
//   bazel run -c opt //labs/10_attention_backward:heads_sweep -- --quick
//
// For each head count (1, 2, 4, 8 and 16 at d_model = 64) it trains the same
// one-layer attention-only model (attention_only_model.h) on the copy task
// (copy_task.h): same initial weights (the layer's four matrices do not
// depend on the head count), same batches in the same order, same steps and
// learning rate. Only the way W_Q, W_K, W_V and W_O are cut into heads
// differs. It prints the final training loss, the held-out loss and the
// copy accuracy per head count, and writes the loss curves as a PNG (and a
// CSV) under out/heads_sweep/ in the repository.
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
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/lab_program.h"
#include "labs/10_attention_backward/charts.h"
#include "labs/10_attention_backward/copy_task.h"

namespace {

using mha::training::CopyTaskConfig;
using mha::training::TrainResult;

struct Options {
  CopyTaskConfig config;
  std::vector<int> heads = {1, 2, 4, 8, 16};
  std::uint64_t seed = 0;  // first seed
  int seeds = 3;           // seed, seed + 1, ...
  std::string out;  // empty: out/heads_sweep in the repository
};

const char* const kUsage =
    "usage: heads_sweep [--heads 1,2,4,8,16] [--steps N] [--batch B] [--lr LR] [--seed S]\n"
    "                   [--seeds N] [--length L] [--alphabet A] [--out DIR] [--quick]\n"
    "  --heads     head counts to train, comma separated (each must divide d_model=64)\n"
    "  --steps     Adam steps per model (default 1500)\n"
    "  --batch     sequences per step (default 32)\n"
    "  --lr        peak learning rate, cosine decay to 0 (default 0.003)\n"
    "  --seed      first seed of the weights and data (default 0)\n"
    "  --seeds     how many seeds to train per head count, from --seed on (default 3)\n"
    "  --length    tokens to copy, L (default 8; sequences are 2L long)\n"
    "  --alphabet  distinct tokens (default 16)\n"
    "  --out       where the PNG and CSV go (default: out/heads_sweep in the\n"
    "              repository when started with bazel run, else ./out/heads_sweep)\n"
    "  --quick     a small run for tests: 1, 4 and 16 heads, one seed, 30 steps of 8\n";

Options parse_args(int argc, char** argv) {
  Options o;
  mha::Flags flags(argc, argv, kUsage);
  while (flags.Next()) {
    if (flags.Is("--heads")) {
      o.heads.clear();
      for (long long h : flags.IntList(1, 64)) o.heads.push_back(static_cast<int>(h));
    } else if (flags.Is("--steps")) {
      o.config.steps = static_cast<int>(flags.Int(2, 1000000));
    } else if (flags.Is("--batch")) {
      o.config.batch = static_cast<int>(flags.Int(1, 4096));
    } else if (flags.Is("--lr")) {
      o.config.learning_rate = static_cast<float>(flags.Number(1e-6, 10.0));
    } else if (flags.Is("--seed")) {
      o.seed = flags.UInt64();
    } else if (flags.Is("--seeds")) {
      o.seeds = static_cast<int>(flags.Int(1, 1000));
    } else if (flags.Is("--length")) {
      o.config.length = static_cast<int>(flags.Int(2, 256));
    } else if (flags.Is("--alphabet")) {
      o.config.alphabet = static_cast<int>(flags.Int(2, 10000));
    } else if (flags.Is("--out")) {
      o.out = flags.String();
    } else if (flags.Is("--quick")) {
      flags.Switch();
      o.heads = {1, 4, 16};
      o.config.steps = 30;
      o.config.batch = 8;
      o.config.eval_examples = 50;
      o.seeds = 1;
    } else {
      flags.Unknown();
    }
  }
  for (int h : o.heads) {
    if (o.config.d_model % h != 0) {
      throw std::invalid_argument("--heads: " + std::to_string(h) + " does not divide d_model = " +
                                  std::to_string(o.config.d_model));
    }
  }
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

// One head count over every seed.
struct Row {
  int heads;
  std::vector<TrainResult> runs;     // one per seed
  std::vector<double> mean_curve;    // training loss per step, mean over seeds
  std::vector<int> steps_to_level;   // per seed, on its smoothed curve
};

std::string min_max(double lo, double hi, const char* format) {
  char a[32], b[32];
  std::snprintf(a, sizeof a, format, lo);
  std::snprintf(b, sizeof b, format, hi);
  return std::string(a) + "-" + b;
}

constexpr double kLevel = 0.01;  // "learned": smoothed training loss below this

int run(const Options& o) {
  CopyTaskConfig c = o.config;
  std::printf("copy task: L=%d tokens from %d symbols, then a separator and the copy (T=%d)\n",
              c.length, c.alphabet, 2 * c.length);
  std::printf("model: embed + pos -> x + MultiHeadAttention(d_model=%d, causal) -> unembed\n",
              c.d_model);
  std::printf("training: Adam lr %g (cosine to 0), %d steps of %d sequences, seeds %llu..%llu\n",
              c.learning_rate, c.steps, c.batch, static_cast<unsigned long long>(o.seed),
              static_cast<unsigned long long>(o.seed + o.seeds - 1));
#ifndef NDEBUG
  std::printf("(built without -c opt: this takes about twenty times longer than it needs to)\n");
#endif
  std::printf("\n%5s %6s %11s %19s %13s %17s %8s\n", "heads", "d_head", "eval loss",
              "(min-max)", "copy accuracy", "steps to 0.01", "seconds");

  const std::size_t window = std::max(1, c.steps / 60);
  std::vector<Row> rows;
  for (int h : o.heads) {
    Row row{h, {}, std::vector<double>(c.steps, 0.0), {}};
    for (int s = 0; s < o.seeds; ++s) {
      c.seed = o.seed + static_cast<std::uint64_t>(s);
      row.runs.push_back(mha::training::train_copy_model(c, h));
      const TrainResult& r = row.runs.back();
      for (int i = 0; i < c.steps; ++i) row.mean_curve[i] += r.loss_curve[i] / o.seeds;
      row.steps_to_level.push_back(first_step_below(smooth(r.loss_curve, window), kLevel));
    }
    double loss = 0, lo = 1e300, hi = 0, acc = 0, secs = 0, steps = 0;
    int lo_steps = c.steps, hi_steps = -1;
    bool all_reached = true;
    for (std::size_t s = 0; s < row.runs.size(); ++s) {
      const TrainResult& r = row.runs[s];
      loss += r.eval.loss / o.seeds;
      lo = std::min(lo, r.eval.loss);
      hi = std::max(hi, r.eval.loss);
      acc += r.eval.accuracy / o.seeds;
      secs += r.seconds;
      const int st = row.steps_to_level[s];
      if (st < 0) all_reached = false;
      steps += double(st) / o.seeds;
      lo_steps = std::min(lo_steps, st);
      hi_steps = std::max(hi_steps, st);
    }
    char steps_text[32];
    if (all_reached) {
      std::snprintf(steps_text, sizeof steps_text, "%.0f (%d-%d)", steps, lo_steps, hi_steps);
    } else {
      std::snprintf(steps_text, sizeof steps_text, "not reached");
    }
    std::printf("%5d %6d %11.2e %19s %13.4f %17s %8.1f\n", h, c.d_model / h, loss,
                ("(" + min_max(lo, hi, "%.1e") + ")").c_str(), acc, steps_text, secs);
    std::fflush(stdout);
    rows.push_back(std::move(row));
  }
  std::printf(
      "(means over %d seed%s; eval: %d held-out sequences per seed; steps to 0.01: first step\n"
      "whose training loss, averaged over %zu steps, is below 0.01 nats; a uniform guess over\n"
      "the %d symbols has loss ln %d = %.3f and accuracy %.3f)\n",
      o.seeds, o.seeds == 1 ? "" : "s", c.eval_examples, window, c.alphabet, c.alphabet,
      std::log(double(c.alphabet)), 1.0 / c.alphabet);

  const std::filesystem::path dir =
      o.out.empty() ? mha::WorkspaceRoot() / "out" / "heads_sweep" : std::filesystem::path(o.out);
  std::filesystem::create_directories(dir);
  // The CSV: one row per step, one column per head count and seed.
  const auto csv_path = dir / "loss_curves.csv";
  std::ofstream csv(csv_path);
  csv << "step";
  for (const Row& row : rows)
    for (int s = 0; s < o.seeds; ++s) csv << ",heads_" << row.heads << "_seed_" << o.seed + s;
  csv << "\n";
  for (int i = 0; i < c.steps; ++i) {
    csv << i;
    for (const Row& row : rows)
      for (const TrainResult& r : row.runs) csv << "," << r.loss_curve[i];
    csv << "\n";
  }
  std::vector<mha::charts::Curve> curves;
  for (const Row& row : rows) {
    double loss = 0, acc = 0;
    for (const TrainResult& r : row.runs) {
      loss += r.eval.loss / o.seeds;
      acc += r.eval.accuracy / o.seeds;
    }
    char label[96];
    std::snprintf(label, sizeof label, "%d head%s (d_head %d): eval loss %.1e, accuracy %.3f",
                  row.heads, row.heads == 1 ? "" : "s", c.d_model / row.heads, loss, acc);
    curves.push_back({label, smooth(row.mean_curve, window)});
  }
  char subtitle[200];
  std::snprintf(subtitle, sizeof subtitle,
                "copy L=%d of %d symbols, d_model=%d, Adam %g, %d steps x %d; mean of %d seed%s, "
                "moving average of %zu steps",
                c.length, c.alphabet, c.d_model, c.learning_rate, c.steps, c.batch, o.seeds,
                o.seeds == 1 ? "" : "s", window);
  const auto png_path = dir / "loss_curves.png";
  mha::charts::loss_curves(png_path.string(), "Training loss by number of heads", subtitle,
                           "training loss (nats per copied token)", curves);
  std::cout << "\nwrote\n  " << png_path.string() << "\n  " << csv_path.string() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return mha::RunLabProgram(
      {"heads_sweep", "your labs 1-3 and 10",
       "bazel run -c opt --config=solutions //labs/10_attention_backward:heads_sweep", kUsage},  // in the instructors' repository
      [&] { return run(parse_args(argc, argv)); });
}
