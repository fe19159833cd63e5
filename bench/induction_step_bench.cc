// Lab 13 benchmark: one training step of grow_induction_heads' default
// two-layer model.
//
// AttentionOnlyTransformer(vocab=64, max_len=24, d_model=32, n_heads=4,
// n_layers=2, seed=0) and a batch of 16 sequences of T = 24 (a block of 12
// tokens repeated): BM_InductionStep calls loss_and_grads on each sequence,
// which is the forward, the loss and every gradient of one step (the Adam
// update is left out on both sides).
//
//   bazel run --config=bench //bench:induction_step_bench
//
// tools/perf/induction_step_vs_torch.py runs it beside PyTorch's autograd on
// the same model and batch, one thread each. With `--dump FILE` (before any
// benchmark flag) the binary instead writes the batch's tokens and the
// summed loss over the batch as text, so the script can check that PyTorch
// computes the same loss for the same weights (NumpyRng draws, which NumPy
// reproduces).
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "bench/bench_runs.h"
#include "labs/13_induction_heads/induction_heads.h"

namespace mha {
namespace {

constexpr int kVocab = 64, kBlock = 12, kBatch = 16;

// A fixed batch: block b is tokens (7 * b + 5 * i) mod 64 for i < 12 (12
// distinct tokens), repeated twice; the targets are the next tokens.
struct Batch {
  std::vector<std::vector<int>> inputs, targets;
  Batch() {
    for (int b = 0; b < kBatch; ++b) {
      std::vector<int> in;
      for (int r = 0; r < 2; ++r)
        for (int i = 0; i < kBlock; ++i) in.push_back((7 * b + 5 * i) % kVocab);
      std::vector<int> tgt(in.begin() + 1, in.end());
      tgt.push_back(-1);
      inputs.push_back(in);
      targets.push_back(tgt);
    }
  }
};

AttentionOnlyTransformer Model() { return AttentionOnlyTransformer(kVocab, 2 * kBlock, 32, 4, 2, 0); }

void BM_InductionStep(benchmark::State& state) {
  const AttentionOnlyTransformer model = Model();
  const Batch batch;
  for (auto _ : state) {
    for (int b = 0; b < kBatch; ++b) {
      LossAndGrads r = loss_and_grads(model, batch.inputs[b], batch.targets[b]);
      benchmark::DoNotOptimize(r.grads.d_embed.data());
    }
  }
}
BENCHMARK(BM_InductionStep)->Unit(benchmark::kMicrosecond);

int Dump(const char* path) {
  const AttentionOnlyTransformer model = Model();
  const Batch batch;
  double loss = 0.0;
  for (int b = 0; b < kBatch; ++b) loss += loss_and_grads(model, batch.inputs[b], batch.targets[b]).loss;
  return bench::write_number(path, loss);
}

}  // namespace
}  // namespace mha

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--dump") == 0) return mha::Dump(argv[2]);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
