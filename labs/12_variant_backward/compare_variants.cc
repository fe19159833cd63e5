// compare_variants: what does a smaller KV cache cost? An experiment, run
// with your own forwards (labs 5, 6) and backwards (lab 12).
//
//   bazel run -c opt //labs/12_variant_backward:compare_variants
//   bazel run -c opt //labs/12_variant_backward:compare_variants -- --steps 3000 --seeds 5
//   bazel run -c opt //labs/12_variant_backward:compare_variants -- --quick
//
// It trains lab 10's one-layer attention-only model (variant_model.h) with
// the layer as MHA (8 heads), GQA (8 query heads, 2 kv heads), MQA (1 kv
// head) and MLA at the ranks of --ranks, all at d_model = 64, on
// associative recall (pairs (key, value), then queries of keys: the answer
// must be fetched from the keys and values seen earlier). Every variant gets
// the same embeddings, the same batches in the same order and the same
// steps, for each seed. It prints, per variant, the held-out loss (mean and
// min-max over seeds), the accuracy, the KV-cache floats per token, the
// parameters and the CPU time of training, answers the question "can the
// cache fall to 1/8 of MHA's while the held-out loss stays within 1 bit
// (ln 2 = 0.693 nats) of MHA's?", and writes a CSV and a chart of held-out
// loss against cache size under out/compare_variants/ in the repository
// (loss_vs_cache.json, drawn as loss_vs_cache.png by tools/plot/draw_chart.py).
//
// Deterministic: the same flags give the same numbers (times aside). It
// runs your labs: while one it needs is still a stub it says which and
// exits with status 1.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/programs/chart_spec.h"
#include "common/programs/lab_program.h"
#include "labs/12_variant_backward/variant_model.h"

namespace {

using mha::variants::RecallConfig;
using mha::variants::TrainResult;
using mha::variants::Variant;

const mha::LabProgram kProgram = {
    "compare_variants", "your labs 1-6, 10 and 12",
    "bazel run -c opt --config=solutions //labs/12_variant_backward:compare_variants"};  // in the instructors' repository

struct Options {
  RecallConfig config;
  std::vector<int> ranks = {16, 8, 4, 2};
  std::uint64_t seed = 0;
  int seeds = 3;
  std::string out;
  bool quick = false;  // --quick: a smoke run whose verdict is not the lesson's
};

mha::FlagSet flags_of(Options& o) {
  mha::FlagSet f(kProgram.name);
  f.Int("--steps", &o.config.steps, 2, 1000000, "Adam steps per model (default 1500)")
      .Int("--batch", &o.config.batch, 1, 4096, "sequences per step (default 32)")
      .Number("--lr", &o.config.learning_rate, 1e-6, 10.0,
              "peak learning rate, cosine decay to 0 (default 0.003)")
      .Seed("--seed", &o.seed, "first seed of the weights and data (default 0)")
      .Int("--seeds", &o.seeds, 1, 1000, "seeds per variant, from --seed on (default 3)")
      .IntList("--ranks", &o.ranks, 1, 64,
               "MLA latent ranks, comma separated, each 1..64 (default 16,8,4,2)")
      .Int("--pairs", &o.config.n_pairs, 2, 1000,
           "(key, value) pairs per sequence, 2..--keys (default 8)")
      .Int("--keys", [&o](long long v) { o.config.n_keys = o.config.n_values = int(v); }, 2, 1000,
           "distinct keys, and distinct values (default 16)")
      .Out(&o.out)
      .Switch("--quick", [&o] {
        o.config.steps = 600;
        o.config.eval_examples = 200;
        o.seeds = 2;
        o.ranks = {16, 4};
        o.quick = true;
      }, "a smaller run (about 20 s of CPU): 2 seeds, 600 steps, ranks 16 and 4");
  return f;
}

void check(Options& o) {
  if (o.config.n_pairs > o.config.n_keys) {
    throw std::invalid_argument("--pairs " + std::to_string(o.config.n_pairs) +
                                " is more than --keys " + std::to_string(o.config.n_keys) +
                                ": the keys of a sequence are distinct");
  }
}

struct Row {
  Variant variant;
  std::vector<TrainResult> runs;  // one per seed
  double loss = 0, lo = 1e300, hi = 0, accuracy = 0, seconds = 0;
};

// The progress line of the run being trained (train_recall_model calls it).
std::string g_current;
void print_progress(int step, double loss) {
  char text[160];
  std::snprintf(text, sizeof text, "  %-24s step %6d  training loss %.3f", g_current.c_str(), step,
                loss);
  mha::PrintProgress(text);
}

// Held-out loss against cache size: x = floats per token (log scale), one
// dot per seed, a square at the mean; a dashed line at MHA's loss + ln 2 and
// one at 1/8 of MHA's cache.
mha::Json chart(const std::vector<Row>& rows, double mha_loss, std::size_t mha_cache,
                const std::string& subtitle) {
  mha::Json series = mha::Json::Array();
  std::vector<double> ticks;
  std::vector<std::string> tick_labels;
  for (const Row& r : rows) {
    std::vector<double> x, y;
    for (const TrainResult& run : r.runs) {
      x.push_back(double(run.cache_floats));
      y.push_back(run.eval.loss);
    }
    char label[80];
    std::snprintf(label, sizeof label, "%s: %.3f nats", r.variant.name.c_str(), r.loss);
    series.Add(mha::Json::Object()
                   .Set("label", label)
                   .Set("style", "points")
                   .Set("x", x)
                   .Set("y", y)
                   .Set("mean", std::vector<double>{x[0], r.loss}));
    if (std::find(ticks.begin(), ticks.end(), x[0]) == ticks.end()) {
      ticks.push_back(x[0]);
      tick_labels.push_back(std::to_string(r.runs[0].cache_floats));
    }
  }
  return mha::Json::Object()
      .Set("kind", "lines")
      .Set("title", "Held-out loss against KV-cache size (associative recall)")
      .Set("subtitle", subtitle)
      .Set("x_label", "KV-cache floats per token (log scale)")
      .Set("y_label", "held-out loss (nats)")
      .Set("x_scale", "log2")
      .Set("x_ticks", ticks)
      .Set("x_tick_labels", tick_labels)
      .Set("series", series)
      .Set("hlines", mha::Json::Array().Add(
                         mha::Json::Object().Set("at", mha_loss + std::log(2.0)).Set("label", "MHA + ln 2")))
      .Set("vlines", mha::Json::Array().Add(mha::Json::Object()
                                               .Set("at", double(mha_cache) / 8.0)
                                               .Set("label", "1/8 of MHA")));
}

int run(const Options& o) {
  RecallConfig c = o.config;
  std::vector<Variant> variants = {{"MHA (8 kv heads)", 8, 0},
                                   {"GQA (2 kv heads)", 2, 0},
                                   {"MQA (1 kv head)", 1, 0}};
  for (int r : o.ranks) variants.push_back({"MLA rank " + std::to_string(r), 0, r});

  std::printf("associative recall: %d (key, value) pairs of %d keys x %d values, then %d queries"
              " (T=%d)\n",
              c.n_pairs, c.n_keys, c.n_values, c.n_queries, mha::variants::recall_length(c));
  std::printf("model: embed + pos -> x + attention(d_model=%d, %d query heads, causal) -> "
              "unembed\n",
              c.d_model, c.n_heads);
  std::printf("training: Adam lr %g (cosine to 0), %d steps of %d sequences, seeds %llu..%llu\n",
              c.learning_rate, c.steps, c.batch, static_cast<unsigned long long>(o.seed),
              static_cast<unsigned long long>(o.seed + o.seeds - 1));
#ifndef NDEBUG
  std::printf("(built without -c opt: this takes about twenty times longer than it needs to)\n");
#endif
  std::printf("\n");

  std::vector<Row> rows;
  for (const Variant& v : variants) {
    Row row{v, {}};
    for (int s = 0; s < o.seeds; ++s) {
      c.seed = o.seed + static_cast<std::uint64_t>(s);
      g_current = v.name + ", seed " + std::to_string(c.seed);
      row.runs.push_back(mha::variants::train_recall_model(c, v, std::max(1, c.steps / 10),
                                                           print_progress));
      const TrainResult& r = row.runs.back();
      mha::EndProgress();
      std::printf("  %-24s held-out loss %.3f, accuracy %.3f, %.1f s\n", g_current.c_str(),
                  r.eval.loss, r.eval.accuracy, r.seconds);
      std::fflush(stdout);
      row.loss += r.eval.loss / o.seeds;
      row.lo = std::min(row.lo, r.eval.loss);
      row.hi = std::max(row.hi, r.eval.loss);
      row.accuracy += r.eval.accuracy / o.seeds;
      row.seconds += r.seconds / o.seeds;
    }
    rows.push_back(std::move(row));
  }
  std::printf("\n%-18s %7s %7s %7s %8s %17s %9s %8s\n", "variant", "cache", "of MHA", "params",
              "loss", "(min-max)", "accuracy", "cpu s");
  for (const Row& row : rows) {
    const std::size_t cache = row.runs[0].cache_floats;
    char range[40];
    std::snprintf(range, sizeof range, "(%.3f-%.3f)", row.lo, row.hi);
    std::printf("%-18s %7zu %7.4f %7zu %8.3f %17s %9.3f %8.1f\n", row.variant.name.c_str(), cache,
                double(cache) / double(rows[0].runs[0].cache_floats), row.runs[0].parameters,
                row.loss, range, row.accuracy, row.seconds);
  }
  const double mha_loss = rows[0].loss;
  const std::size_t mha_cache = rows[0].runs[0].cache_floats;
  std::printf(
      "(means over %d seed%s; loss: held-out cross-entropy per answer, %d sequences x %d queries "
      "per seed;\n cache: floats per token of one layer; cpu s: training CPU time per seed; a "
      "uniform guess\n over %d values has loss ln %d = %.3f and accuracy %.3f)\n",
      o.seeds, o.seeds == 1 ? "" : "s", c.eval_examples, c.n_queries, c.n_values, c.n_values,
      std::log(double(c.n_values)), 1.0 / c.n_values);

  // The question: cache at most 1/8 of MHA's, loss within ln 2 of MHA's?
  const Row* best = nullptr;  // the smallest cache within 1 bit
  const Row* closest = nullptr;  // among caches <= 1/8, the lowest loss
  for (const Row& r : rows) {
    if (r.runs[0].cache_floats * 8 > mha_cache) continue;
    if (!closest || r.loss < closest->loss) closest = &r;
    if (r.loss - mha_loss <= std::log(2.0) &&
        (!best || r.runs[0].cache_floats < best->runs[0].cache_floats))
      best = &r;
  }
  std::printf("\nCan the cache fall to 1/8 of MHA's (%zu floats per token) while the held-out "
              "loss stays within\n1 bit (ln 2 = 0.693 nats) of MHA's %.3f?\n",
              mha_cache / 8, mha_loss);
  if (best) {
    std::printf("Yes: %s keeps %zu floats per token (1/%zu of MHA's %zu) at %.3f nats, %.3f above "
                "MHA's %.3f (within 0.693).\n",
                best->variant.name.c_str(), best->runs[0].cache_floats,
                mha_cache / best->runs[0].cache_floats, mha_cache, best->loss,
                best->loss - mha_loss, mha_loss);
  } else if (closest) {
    std::printf("No: the best variant with at most 1/8 of the cache, %s (%zu floats per token), "
                "has %.3f nats, %.3f above MHA's %.3f (more than 0.693).\n",
                closest->variant.name.c_str(), closest->runs[0].cache_floats, closest->loss,
                closest->loss - mha_loss, mha_loss);
  } else {
    std::printf("Not measured: no variant here has at most 1/8 of MHA's cache (see --ranks).\n");
  }
  if (o.quick) {
    // 600 steps leave even MHA far from 0 nats, so the gap to it says little.
    std::printf("(--quick: this verdict is not the lesson's. 600 steps leave MHA itself at %.2f "
                "nats, undertrained,\nso the comparison above is between models that have not "
                "learned the task yet; the lesson's\nanswer comes from the default run: 1500 "
                "steps, 3 seeds, ranks 16, 8, 4 and 2.)\n",
                mha_loss);
  }

  const std::filesystem::path dir = mha::OutputFolder(o.out, kProgram.name);
  const auto csv_path = dir / "variants.csv";
  std::ofstream csv(csv_path);
  csv << "variant,seed,kv_cache_floats_per_token,parameters,held_out_loss,accuracy\n";
  for (const Row& r : rows) {
    for (int s = 0; s < o.seeds; ++s) {
      const TrainResult& run = r.runs[s];
      csv << r.variant.name << "," << o.seed + s << "," << run.cache_floats << ","
          << run.parameters << "," << run.eval.loss << "," << run.eval.accuracy << "\n";
    }
  }
  char subtitle[200];
  std::snprintf(subtitle, sizeof subtitle,
                "d_model %d, %d query heads; %d pairs of %d keys; Adam %g, %d steps x %d; "
                "dots: seeds, squares: means of %d",
                c.d_model, c.n_heads, c.n_pairs, c.n_keys, c.learning_rate, c.steps, c.batch,
                o.seeds);
  csv.close();
  std::cout << "\n";
  mha::WriteAndDrawCharts({csv_path}, {{dir / "loss_vs_cache.json",
                                        chart(rows, mha_loss, mha_cache, subtitle)}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return mha::RunLabProgram<Options>(kProgram, argc, argv, flags_of, check, run);
}
