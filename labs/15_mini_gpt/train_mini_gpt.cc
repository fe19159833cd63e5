// train_mini_gpt: your Mini-GPT learns a verb grammar in English and Spanish.
// An experiment, run with your own model, gradients, optimiser and decoder
// (lab 15, on labs 14, 11, 8, 4 and 2 and what they build on) and your own
// head profiles (lab 7).
//
//   bazel run //labs/15_mini_gpt:train_mini_gpt
//   bazel run //labs/15_mini_gpt:train_mini_gpt -- --score all
//   bazel run //labs/15_mini_gpt:train_mini_gpt -- --no-attention --seed 1
//   bazel run //labs/15_mini_gpt:train_mini_gpt -- --checkpoint out/train_mini_gpt/checkpoint.npz
//
// It trains MiniGpt(64, 32, 64, 4, 256, 2) (103,680 parameters) on the 912
// training sentences of verb_grammar.h: AdamW (0.9, 0.95, weight decay 0.1 on
// the matrices), the global gradient norm clipped to 1, 16 sentences a step,
// the learning rate warmed up to 3e-3 over 100 steps then cosine to 3e-4 at
// step 1,000. Then it measures, on the 96 held-out sentences (four (verb,
// tense) pairs no step saw) and on the training sentences, the accuracy of
// the argmax at the positions whose next token the grammar fixes, by what
// fixes it, beside an n-gram model's; writes the Spanish half of each
// held-out sentence greedily from its English half; and shows every head on
// a held-out sentence with lab 7's profile.
//
// --score decided (the default) scores only those grammar-fixed positions;
// --score all scores every position (the loss then has a floor, the corpus's
// entropy, 0.296 nats); --no-attention keeps every W_O at zero, so that no
// position sees another. The lesson (docs/15_mini_gpt.md) compares the three.
//
// It writes under out/train_mini_gpt/ in the repository (each chart a .json
// that tools/plot/draw_chart.py draws as the .png of the same name):
//   loss.csv, loss.json    the loss by step (the batch's, and train and held out)
//   heads.json             every head's map on a held-out sentence, tokens on both axes
//   view.json              the same heads for the course reader's head viewer (./lab read)
//   checkpoint.npz         the trained model (checkpoint.h: np.load reads it)
// and, with --json FILE, every number it prints.
//
// Deterministic: the same flags give the same numbers on the same machine.
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/programs/chart_spec.h"
#include "common/programs/lab_program.h"
#include "common/programs/process_memory.h"
#include "labs/15_mini_gpt/checkpoint.h"
#include "labs/15_mini_gpt/head_report.h"
#include "labs/15_mini_gpt/mini_gpt.h"
#include "labs/15_mini_gpt/training.h"
#include "labs/15_mini_gpt/verb_grammar.h"

namespace {

using mha::grammar::Category;

const mha::LabProgram kProgram = {
    "train_mini_gpt", "your labs 1, 2, 4, 7, 8, 10, 11, 14 and 15",
    "bazel run --config=solutions //labs/15_mini_gpt:train_mini_gpt"};  // in the instructors' repository

struct Options {
  int d_model = 64, heads = 4, d_ff = 256, layers = 2;
  mha::gpt::Settings train;
  std::string score = "decided";
  int eval_every = 100;
  int ngram = 3;
  std::string checkpoint, json, out;
};

mha::FlagSet flags_of(Options& o) {
  mha::FlagSet f(kProgram.name);
  f.Choice("--score", &o.score, {"decided", "all"},
           "what the loss scores: the grammar-fixed positions (default) or every position")
      .Switch("--no-attention", [&o] { o.train.attention = false; },
              "W_O = 0 in every block, kept there: no position sees another")
      .Seed("--seed", &o.train.seed, "the weights (MiniGpt's seed) and the batches (default 0)")
      .Int("--steps", &o.train.steps, 2, 1000000, "AdamW steps (default 1000)")
      .Int("--batch", &o.train.batch, 1, 4096, "sentences a step (default 16)")
      .Int("--warmup", &o.train.warmup, 0, 1000000,
           "warm-up steps, fewer than --steps (default 100)")
      .Int("--d-model", &o.d_model, 2, 1024, "width of the residual stream (default 64)")
      .Int("--heads", &o.heads, 1, 256, "heads per block; d_model / heads even (default 4)")
      .Int("--d-ff", &o.d_ff, 1, 16384, "width of the feed-forward layer (default 256)")
      .Int("--layers", &o.layers, 1, 64, "blocks (default 2)")
      .Int("--eval-every", &o.eval_every, 1, 1000000,
           "steps between two measurements of the train and held-out loss (default 100)")
      .Int("--ngram", &o.ngram, 1, 25, "the n of the n-gram baseline (default 3)")
      .Text("--checkpoint", &o.checkpoint, "FILE",
            "load this trained model (checkpoint.npz) instead of training")
      .Text("--json", &o.json, "FILE", "also write every printed number to FILE")
      .Out(&o.out)
      .Switch("--quick", [&o] {
        o.train.steps = 20;
        o.train.batch = 8;
        o.train.warmup = 2;
        o.d_model = 16;
        o.heads = 2;
        o.d_ff = 32;
        o.eval_every = 20;
      }, "a small run for tests: 20 steps of 8 sentences, d_model 16, 2 heads, d_ff 32");
  return f;
}

void check(Options& o) {
  if (o.d_model % o.heads != 0 || (o.d_model / o.heads) % 2 != 0) {
    throw std::invalid_argument("--heads " + std::to_string(o.heads) + " must divide --d-model " +
                                std::to_string(o.d_model) + " into heads of an even width");
  }
  if (o.train.warmup >= o.train.steps) {
    throw std::invalid_argument("--warmup " + std::to_string(o.train.warmup) +
                                " must be below --steps " + std::to_string(o.train.steps));
  }
}

double cpu_seconds() {  // user + system time of this process
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string thousands(std::size_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(std::size_t(i), ",");
  return s;
}

// Prints the table and returns its numbers (for --json).
mha::Json print_parameters(const mha::MiniGpt& m) {
  const std::size_t V = m.vocab, d = m.d_model, f = m.d_ff, L = m.n_layers;
  const std::size_t block = 4 * d * d + 2 * d * f + f + 5 * d;
  auto row = [](const std::string& what, const std::string& shape, std::size_t n) {
    std::printf("  %-44s %-18s %9s\n", what.c_str(), shape.c_str(), thousands(n).c_str());
  };
  const std::string D = std::to_string(d), F = std::to_string(f);
  std::printf("parameters\n");
  row("embed (tied: input table and output layer)", std::to_string(V) + " x " + D, V * d);
  std::printf("  per block (x%zu):\n", L);
  row("  ln1 gamma, beta", "2 x " + D, 2 * d);
  row("  attention W_Q, W_K, W_V, W_O (no bias)", "4 x " + D + " x " + D, 4 * d * d);
  row("  ln2 gamma, beta", "2 x " + D, 2 * d);
  row("  ffn W_1, b_1", D + " x " + F + " + " + F, d * f + f);
  row("  ffn W_2, b_2", F + " x " + D + " + " + D, f * d + d);
  row("  one block", "", block);
  row("final LayerNorm gamma, beta", "2 x " + D, 2 * d);
  row("total", "", V * d + L * block + 2 * d);
  std::printf("  (your MiniGpt::parameter_count(): %s)\n", thousands(m.parameter_count()).c_str());
  return mha::Json::Object()
      .Set("embed", V * d)
      .Set("block", block)
      .Set("final_layer_norm", 2 * d)
      .Set("total", V * d + L * block + 2 * d)
      .Set("parameter_count", m.parameter_count());
}

mha::Json accuracy_table(const mha::gpt::Accuracy& held, const mha::gpt::Accuracy& train,
                         const mha::gpt::Accuracy& ngram_held,
                         const mha::gpt::Accuracy& ngram_train, int n) {
  std::printf("\naccuracy of the argmax at the grammar-fixed positions (how many positions)\n");
  std::printf("  %-18s %17s %17s   %d-gram: held out / train\n", "", "held out", "train", n);
  mha::Json json = mha::Json::Object();
  for (Category c : {Category::kEnglishAgreement, Category::kSpanishForm,
                     Category::kSpanishStem, Category::kSpanishPronoun, Category::kOther}) {
    const auto i = static_cast<std::size_t>(c);
    std::string name = mha::grammar::category_name(c);
    for (char& ch : name) ch = ch == '_' ? ' ' : ch;
    std::printf("  %-18s %8.1f%% (%5ld) %8.1f%% (%5ld)   %6.1f%% / %5.1f%%\n", name.c_str(),
                100 * held.fraction(c), held.total[i], 100 * train.fraction(c), train.total[i],
                100 * ngram_held.fraction(c), 100 * ngram_train.fraction(c));
    json.Set(mha::grammar::category_name(c), mha::Json::Object()
                                            .Set("held_out", held.fraction(c))
                                            .Set("train", train.fraction(c))
                                            .Set("held_out_positions", static_cast<long long>(held.total[i]))
                                            .Set("train_positions", static_cast<long long>(train.total[i]))
                                            .Set("ngram_held_out", ngram_held.fraction(c))
                                            .Set("ngram_train", ngram_train.fraction(c)));
  }
  return json;
}

int run(const Options& o) {
  mha::KeepFreedMemory();  // each step frees and takes the same memory again: keep it
  const auto t_start = std::chrono::steady_clock::now();
  const double cpu_start = cpu_seconds();
  const mha::grammar::Split data = mha::grammar::split();
  const mha::gpt::Score score =
      o.score == "all" ? mha::gpt::Score::kAll : mha::gpt::Score::kDecided;
  const double floor = mha::grammar::entropy_floor(data.train);
  std::printf("corpus: %zu sentences, %zu for training, %zu held out (walk and listen in the "
              "present,\n  help in the past, cook in the future), 64 tokens; entropy floor %.4f "
              "nats per position\n",
              data.train.size() + data.held_out.size(), data.train.size(), data.held_out.size(),
              floor);
  const mha::checkpoint::Config config{64, 32, o.d_model, o.heads, o.d_ff, o.layers, 10000.0};
  mha::MiniGpt model(config.vocab, config.max_len, config.d_model, config.n_heads, config.d_ff,
                     config.n_layers, o.train.seed, config.base);
  std::uint64_t seed = o.train.seed;
  if (!o.checkpoint.empty()) {
    mha::checkpoint::Checkpoint c = mha::checkpoint::Load(o.checkpoint);
    mha::checkpoint::Expect(c, config, mha::grammar::tokens(), o.checkpoint);
    model = std::move(c.model);
    seed = c.seed;
    std::printf("model: loaded from %s (trained with seed %llu)\n", o.checkpoint.c_str(),
                static_cast<unsigned long long>(seed));
  }
  std::printf("model: MiniGpt(vocab %d, max_len %d, d_model %d, %d heads, d_ff %d, %d blocks), "
              "seed %llu%s\n",
              config.vocab, config.max_len, config.d_model, config.n_heads, config.d_ff,
              config.n_layers, static_cast<unsigned long long>(seed),
              o.train.attention || !o.checkpoint.empty() ? "" : ", attention removed (W_O = 0)");
  mha::Json parameters = print_parameters(model);

  const std::vector<mha::gpt::Example> train = mha::gpt::examples(data.train, score);
  const std::vector<mha::gpt::Example> held = mha::gpt::examples(data.held_out, score);
  std::vector<double> steps, batch_loss, eval_steps, train_loss, held_loss;
  double train_seconds = 0.0, train_cpu = 0.0;
  mha::Json losses = mha::Json::Array();
  if (o.checkpoint.empty()) {
    std::printf("\ntraining: --score %s, AdamW (0.9, 0.95, weight decay 0.1 on the matrices), "
                "clip 1.0,\n  %d sentences a step, learning rate 0 -> %g over %d steps, cosine "
                "to %g at step %d\n",
                o.score.c_str(), o.train.batch, o.train.max_lr, o.train.warmup, o.train.min_lr,
                o.train.steps);
#ifndef NDEBUG
    std::printf("(built without -c opt: this takes many times longer than it needs to)\n");
#endif
    std::printf("loss by step (nats per scored position; train and held out: the mean over "
                "every sentence)\n  %6s %9s %9s %9s %10s\n", "step", "batch", "train",
                "held out", "lr");
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_seconds();
    mha::gpt::Trainer trainer(model, train, o.train);
    auto measure = [&](int step, double batch, double lr) {
      eval_steps.push_back(step);
      train_loss.push_back(mha::gpt::mean_loss(model, train));
      held_loss.push_back(mha::gpt::mean_loss(model, held));
      mha::EndProgress();
      const std::string b = std::isnan(batch) ? "-" : mha::Format("%.4f", batch);
      std::printf("  %6d %9s %9.4f %9.4f %10.2e\n", step, b.c_str(), train_loss.back(),
                  held_loss.back(), lr);
      losses.Add(mha::Json::Object()
                     .Set("step", step)
                     .Set("batch", batch)
                     .Set("train", train_loss.back())
                     .Set("held_out", held_loss.back())
                     .Set("lr", lr));
    };
    measure(0, std::nan(""), 0.0);
    for (int s = 1; s <= o.train.steps; ++s) {
      const mha::gpt::StepReport r = trainer.step();
      steps.push_back(r.step);
      batch_loss.push_back(r.loss);
      const double elapsed = since(t0);
      mha::PrintProgress(mha::Format("step %d/%d  batch loss %.4f  lr %.2e  %.0f s, about %.0f s "
                                     "to go",
                                     s, o.train.steps, r.loss, r.lr, elapsed,
                                     elapsed / s * (o.train.steps - s)));
      if (s % o.eval_every == 0 || s == o.train.steps) measure(s, r.loss, r.lr);
    }
    mha::EndProgress();
    train_seconds = since(t0);
    train_cpu = cpu_seconds() - c0;
    std::printf("training: %.1f s (CPU %.1f s, user + system)\n", train_seconds, train_cpu);
  }

  // ------------------------------------------------------------ measurements
  const mha::gpt::Accuracy acc_held = mha::gpt::accuracy(model, data.held_out);
  const mha::gpt::Accuracy acc_train = mha::gpt::accuracy(model, data.train);
  const mha::gpt::Accuracy ng_held = mha::gpt::ngram_accuracy(o.ngram, data.train, data.held_out);
  const mha::gpt::Accuracy ng_train = mha::gpt::ngram_accuracy(o.ngram, data.train, data.train);
  mha::Json accuracy = accuracy_table(acc_held, acc_train, ng_held, ng_train, o.ngram);
  const std::array<long, 2> s_slot = mha::gpt::s_slot_accuracy(model, data.held_out);
  std::printf("  held out, the English \"-s\" alone (he, she + a present verb): %ld of %ld\n",
              s_slot[0], s_slot[1]);

  const std::vector<mha::gpt::Translation> tr = mha::gpt::translations(model, data.held_out);
  long exact = 0;
  for (const auto& t : tr) exact += t.exact;
  std::printf("\ngreedy translations of the held-out English halves: %ld of %zu exact\n", exact,
              tr.size());
  mha::Json shown = mha::Json::Array();
  const std::size_t every = std::max<std::size_t>(1, tr.size() / 4);
  for (std::size_t i = 0; i < tr.size(); i += every) {  // one per held-out (verb, tense)
    const auto& t = tr[i];
    std::printf("  %s\n    -> %s  %s\n", mha::grammar::text(t.prompt).c_str(),
                mha::grammar::text(t.got).c_str(),
                t.exact ? "(exact)" : ("(expected " + mha::grammar::text(t.expected) + ")").c_str());
    shown.Add(mha::Json::Object()
                  .Set("english", mha::grammar::text(t.prompt))
                  .Set("spanish", mha::grammar::text(t.got))
                  .Set("exact", t.exact));
  }

  const mha::grammar::Sentence& probe = data.held_out.front();
  const mha::gpt::HeadReport heads = mha::gpt::report_heads(model, probe.ids);
  std::printf("\nthe heads on a held-out sentence (lab 7's profile; at this scale roles are "
              "partial and noisy)\n  %s\n", mha::grammar::text(probe.ids).c_str());
  mha::gpt::print_heads(heads);
  std::printf("  (\"from walk -> s\": the key the head weighs most, at the query that predicts "
              "that token, @ its position)\n");

  const double seconds = since(t_start), cpu = cpu_seconds() - cpu_start;
  std::printf("\nseconds: %.1f in all (CPU %.1f)\n", seconds, cpu);

  // ------------------------------------------------------------------ files
  const std::filesystem::path dir = mha::OutputFolder(o.out, kProgram.name);
  std::vector<std::filesystem::path> written;
  std::vector<std::pair<std::filesystem::path, mha::Json>> charts;
  char subtitle[240];
  if (o.checkpoint.empty()) {
    std::snprintf(subtitle, sizeof subtitle,
                  "MiniGpt d_model %d, %d heads, %d blocks, seed %llu; --score %s%s; %d steps of "
                  "%d sentences",
                  o.d_model, o.heads, o.layers, static_cast<unsigned long long>(seed),
                  o.score.c_str(), o.train.attention ? "" : ", no attention", o.train.steps,
                  o.train.batch);
  } else {  // the checkpoint keeps the seed, not how it was trained: say only what is known
    std::snprintf(subtitle, sizeof subtitle,
                  "MiniGpt d_model %d, %d heads, %d blocks, seed %llu; loaded from %s", o.d_model,
                  o.heads, o.layers, static_cast<unsigned long long>(seed),
                  std::filesystem::path(o.checkpoint).filename().c_str());
  }
  if (o.checkpoint.empty()) {
    const auto csv_path = dir / "loss.csv";
    std::ofstream csv(csv_path);
    csv << "step,train,held_out\n";
    for (std::size_t i = 0; i < eval_steps.size(); ++i) {
      csv << eval_steps[i] << "," << train_loss[i] << "," << held_loss[i] << "\n";
    }
    written.push_back(csv_path);
    std::vector<mha::Series> series = {{"batch (each step)", steps, batch_loss},
                                       {"train", eval_steps, train_loss, "line+points"},
                                       {"held out", eval_steps, held_loss, "line+points"}};
    if (score == mha::gpt::Score::kAll) {
      series.push_back({"entropy floor", {0.0, double(o.train.steps)}, {floor, floor}});
    }
    charts.push_back({dir / "loss.json",
                      mha::LinesChart("Loss of the Mini-GPT by step", subtitle, "step",
                                      "loss (nats per scored position)", series)
                          .Set("y_scale", "log")});
    const auto ck = dir / "checkpoint.npz";
    mha::checkpoint::Save(ck, model, seed, mha::grammar::tokens(), mha::checkpoint::CodeHash());
    written.push_back(ck);
  }
  charts.push_back({dir / "heads.json", mha::gpt::heads_chart(heads, subtitle)});
  mha::WriteChart(mha::gpt::heads_view(heads, std::string("Mini-GPT: ") + subtitle),
                  dir / "view.json");
  written.push_back(dir / "view.json");
  if (!o.json.empty()) {
    mha::Json all = mha::Json::Object()
                        .Set("program", kProgram.name)
                        .Set("score", o.score)
                        .Set("attention", o.train.attention)
                        .Set("seed", static_cast<double>(seed))
                        .Set("steps", o.checkpoint.empty() ? o.train.steps : 0)
                        .Set("parameters", std::move(parameters))
                        .Set("entropy_floor", floor)
                        .Set("losses", std::move(losses))
                        .Set("accuracy", std::move(accuracy))
                        .Set("held_out_s", mha::Json::Object()
                                               .Set("right", static_cast<long long>(s_slot[0]))
                                               .Set("total", static_cast<long long>(s_slot[1])))
                        .Set("translations_exact", double(exact) / double(tr.size()))
                        .Set("translations", std::move(shown))
                        .Set("heads", mha::gpt::heads_json(heads))
                        .Set("training_seconds", train_seconds)
                        .Set("training_cpu_seconds", train_cpu)
                        .Set("seconds", seconds)
                        .Set("cpu_seconds", cpu);
    std::ofstream(o.json) << all.Dump() << "\n";
    written.push_back(o.json);
  }
  std::printf("\n");
  mha::WriteAndDrawCharts(written, charts);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return mha::RunLabProgram<Options>(kProgram, argc, argv, flags_of, check, run);
}
