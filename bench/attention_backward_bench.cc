// Lab 10 benchmark: what one training step of the layer costs.
//
// At T = 128 tokens, 8 heads, d_model = 64 and 512, with a causal mask:
//
//   BM_Forward        layer.forward(x, mask)                      (lab 3)
//   BM_MhaBackward    mha_backward(layer, x, mask, d_y)           (lab 10; it
//                     recomputes the forward it needs inside)
//   BM_TrainingStep   both: the loss needs y, the update needs the gradients,
//                     and the API keeps no state between the two calls
//
//   bazel run --config=bench //bench:attention_backward_bench
//
// tools/perf/backward_vs_torch.py runs this binary and PyTorch's autograd on
// the same sizes in the same run, one thread each. With `--dump DIR` (before
// any benchmark flag) the binary instead writes, for each d_model, the input
// x, the upstream gradient d_y and its five gradients to DIR as raw float32
// files (x_<d>.f32, d_y_<d>.f32, dx_<d>.f32, dW_Q_<d>.f32, ...), so the
// script can check that PyTorch computes the same numbers: the layer's
// weights are NumpyRng(0) draws, which NumPy reproduces.
#include <benchmark/benchmark.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "bench/bench_inputs.h"
#include "labs/04_causal_mask/causal_mask.h"
#include "labs/10_attention_backward/attention_backward.h"

namespace mha {
namespace {

constexpr std::size_t kTokens = 128;
constexpr int kHeads = 8;

// The same inputs for every benchmark and for --dump.
struct Inputs {
  explicit Inputs(int d_model)
      : layer(d_model, kHeads, /*seed=*/0),
        x(bench::random_matrix(kTokens, d_model, /*seed=*/10)),
        d_y(bench::random_matrix(kTokens, d_model, /*seed=*/11)),
        mask(causal_mask(static_cast<int>(kTokens))) {}
  MultiHeadAttention layer;
  Tensor2 x, d_y, mask;  // (T, d_model), (T, d_model), (T, T)
};

// Multiply-adds counted as 2 FLOPs, causal mask ignored (as PyTorch computes
// the masked scores too). Forward: 4 projections and the two attention
// contractions. Backward: twice the forward's products (each product
// A @ B has the two gradients dA and dB), which mha_backward does after
// recomputing the forward.
double forward_flops(double d) {
  return 4 * bench::matmul_flops(kTokens, d, d) + bench::attention_flops(kTokens, kTokens, d);
}

void BM_Forward(benchmark::State& state) {
  try {
    const Inputs in(static_cast<int>(state.range(0)));
    for (auto _ : state) {
      Tensor2 y = in.layer.forward(in.x, in.mask);  // (T, d_model)
      benchmark::DoNotOptimize(y.data());
    }
  } catch (const std::logic_error& e) {  // a stub: build with --config=bench
    state.SkipWithError(e.what());
    return;
  }
  state.counters["FLOPS"] = benchmark::Counter(forward_flops(state.range(0)),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

void BM_MhaBackward(benchmark::State& state) {
  try {
    const Inputs in(static_cast<int>(state.range(0)));
    for (auto _ : state) {
      MhaGrads g = mha_backward(in.layer, in.x, in.mask, in.d_y);
      benchmark::DoNotOptimize(g.dx.data());
    }
  } catch (const std::logic_error& e) {
    state.SkipWithError(e.what());
    return;
  }
  state.counters["FLOPS"] = benchmark::Counter(3 * forward_flops(state.range(0)),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

void BM_TrainingStep(benchmark::State& state) {
  try {
    const Inputs in(static_cast<int>(state.range(0)));
    for (auto _ : state) {
      Tensor2 y = in.layer.forward(in.x, in.mask);                   // for the loss
      MhaGrads g = mha_backward(in.layer, in.x, in.mask, in.d_y);   // for the update
      benchmark::DoNotOptimize(y.data());
      benchmark::DoNotOptimize(g.dx.data());
    }
  } catch (const std::logic_error& e) {
    state.SkipWithError(e.what());
    return;
  }
  // Counted as PyTorch's step: one forward and one backward (3x the forward's
  // FLOPs), so that GFLOP/s compare; the recomputed forward is not counted.
  state.counters["FLOPS"] = benchmark::Counter(3 * forward_flops(state.range(0)),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_Forward)->ArgName("d_model")->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MhaBackward)->ArgName("d_model")->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TrainingStep)->ArgName("d_model")->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);

void dump(const std::string& dir) {
  for (int d : {64, 512}) {
    const Inputs in(d);
    const MhaGrads g = mha_backward(in.layer, in.x, in.mask, in.d_y);
    const std::string s = "_" + std::to_string(d) + ".f32";
    bench::write_f32(dir + "/x" + s, in.x);
    bench::write_f32(dir + "/d_y" + s, in.d_y);
    bench::write_f32(dir + "/dx" + s, g.dx);
    bench::write_f32(dir + "/dW_Q" + s, g.dW_Q);
    bench::write_f32(dir + "/dW_K" + s, g.dW_K);
    bench::write_f32(dir + "/dW_V" + s, g.dW_V);
    bench::write_f32(dir + "/dW_O" + s, g.dW_O);
  }
}

}  // namespace
}  // namespace mha

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--dump") == 0) {
    mha::dump(argv[2]);
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
