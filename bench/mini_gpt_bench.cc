// Lab 15 benchmarks: one training step of the default Mini-GPT, and one
// generated token with the KV cache against re-running the whole model.
//
//   bazel run --config=bench //bench:mini_gpt_bench
//
// BM_TrainingStep: MiniGpt(64, 32, 64, 4, 256, 2, seed 0) and a fixed batch of
// 16 training sentences of the verb grammar (--score decided), as
// train_mini_gpt steps: gpt_loss_and_grads on each sentence, the mean of the
// gradients, clip_grad_norm(1.0) and one AdamW step. tools/perf/mini_gpt_step_vs_torch.py
// runs it beside the same step in PyTorch (tests/15_mini_gpt/pilot.py's model).
// With `--dump FILE` (before any benchmark flag) the binary writes the
// batch's mean loss at the first step, for that script to compare.
//
// BM_CachedToken/S and BM_Recompute/S: the same sizes with max_len 1024, a
// prefix of S - 1 tokens. Cached: one GptDecoder step of one token (the
// decoder holding S - 1 tokens is copied outside the timed region);
// recompute: MiniGpt::logits on all S tokens, whose last row is the same
// token's logits.
#include <benchmark/benchmark.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "bench/bench_runs.h"
#include "common/programs/process_memory.h"
#include "labs/15_mini_gpt/mini_gpt.h"
#include "labs/15_mini_gpt/training.h"
#include "labs/15_mini_gpt/verb_grammar.h"

namespace mha {
namespace {

constexpr int kBatch = 16;

// Sentences 0, 57, 114, ... of the training set, scored as --score decided.
std::vector<gpt::Example> Batch() {
  const std::vector<gpt::Example> all =
      gpt::examples(grammar::split().train, gpt::Score::kDecided);
  std::vector<gpt::Example> batch;
  for (int b = 0; b < kBatch; ++b) batch.push_back(all[(57 * b) % all.size()]);
  return batch;
}

MiniGpt DefaultModel(int max_len = 32) { return MiniGpt(64, max_len, 64, 4, 256, 2, 0); }

void BM_TrainingStep(benchmark::State& state) {
  try {
    MiniGpt model = DefaultModel();
    AdamW optimizer(model);
    const std::vector<gpt::Example> batch = Batch();
    std::vector<const gpt::Example*> pointers;
    for (const gpt::Example& e : batch) pointers.push_back(&e);
    for (auto _ : state) {
      double loss = 0.0;
      GptGrads g = gpt::mean_gradients(model, pointers, &loss);
      clip_grad_norm(g, 1.0);
      optimizer.step(model, g, 1e-3f);
      benchmark::DoNotOptimize(loss);
    }
  } catch (const std::logic_error& e) {  // a stub: build with --config=bench
    state.SkipWithError(e.what());
  }
}
BENCHMARK(BM_TrainingStep)->Unit(benchmark::kMicrosecond);

// S token ids: the training sentences one after another.
std::vector<int> Tokens(int S) {
  std::vector<int> ids;
  for (const grammar::Sentence& s : grammar::split().train) {
    for (int id : s.ids) {
      if (static_cast<int>(ids.size()) == S) return ids;
      ids.push_back(id);
    }
  }
  return ids;
}

void BM_CachedToken(benchmark::State& state) {
  const int S = static_cast<int>(state.range(0));
  try {
    const MiniGpt model = DefaultModel(1024);
    const std::vector<int> ids = Tokens(S);
    GptDecoder start(model, 1024);
    start.step(std::vector<int>(ids.begin(), ids.end() - 1));  // the prefix, S - 1 tokens
    for (auto _ : state) {
      state.PauseTiming();
      GptDecoder decoder = start;  // set-up, not part of the step
      state.ResumeTiming();
      Tensor2 logits = decoder.step({ids.back()});  // (1, vocab)
      benchmark::DoNotOptimize(logits.data());
    }
  } catch (const std::logic_error& e) {
    state.SkipWithError(e.what());
  }
  state.counters["S"] = S;
}

void BM_Recompute(benchmark::State& state) {
  const int S = static_cast<int>(state.range(0));
  try {
    const MiniGpt model = DefaultModel(1024);
    const std::vector<int> ids = Tokens(S);
    for (auto _ : state) {
      Tensor2 logits = model.logits(ids);  // (S, vocab): the last row is the new token's
      benchmark::DoNotOptimize(logits.data());
    }
  } catch (const std::logic_error& e) {
    state.SkipWithError(e.what());
  }
  state.counters["S"] = S;
}

void Prefixes(benchmark::internal::Benchmark* b) {
  b->ArgName("S")->Unit(benchmark::kMicrosecond);
  for (int S : {16, 32, 64, 128, 256, 512, 1024}) b->Arg(S);
}
BENCHMARK(BM_CachedToken)->Apply(Prefixes);
BENCHMARK(BM_Recompute)->Apply(Prefixes);

int Dump(const char* path) {
  const MiniGpt model = DefaultModel();
  const std::vector<gpt::Example> batch = Batch();
  std::vector<const gpt::Example*> pointers;
  for (const gpt::Example& e : batch) pointers.push_back(&e);
  double loss = 0.0;
  gpt::mean_gradients(model, pointers, &loss);
  return bench::write_number(path, loss);
}

}  // namespace
}  // namespace mha

int main(int argc, char** argv) {
  mha::KeepFreedMemory();  // as train_mini_gpt: each step frees and takes the same memory
  if (argc >= 3 && std::strcmp(argv[1], "--dump") == 0) return mha::Dump(argv[2]);
  return mha::bench::run_on_one_thread("mini_gpt_bench", argc, argv);
}
