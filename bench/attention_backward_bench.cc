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

#include <string>

#include "bench/backward_bench.h"
#include "bench/bench_inputs.h"
#include "labs/10_attention_backward/attention_backward.h"

namespace mha {
namespace {

struct Inputs : bench::BackwardData {
  explicit Inputs(int d_model)
      : BackwardData(d_model), layer(d_model, bench::kBackwardHeads, /*seed=*/0) {}
  MultiHeadAttention layer;
};

// Multiply-adds counted as 2 FLOPs, causal mask ignored (as PyTorch computes
// the masked scores too). Forward: 4 projections and the two attention
// contractions. Backward: twice the forward's products (each product
// A @ B has the two gradients dA and dB), which mha_backward does after
// recomputing the forward.
double forward_flops(double d) {
  constexpr double T = bench::kBackwardTokens;
  return 4 * bench::matmul_flops(T, d, d) + bench::attention_flops(T, T, d);
}

// FLOP/s of `flops` per iteration.
benchmark::Counter rate(double flops) {
  return benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Forward(benchmark::State& state) {
  const bool ran = bench::time_each<Inputs>(state, [](const Inputs& in) {
    Tensor2 y = in.layer.forward(in.x, in.mask);  // (T, d_model)
    benchmark::DoNotOptimize(y.data());
  });
  if (ran) state.counters["FLOPS"] = rate(forward_flops(state.range(0)));
}

void BM_MhaBackward(benchmark::State& state) {
  const bool ran = bench::time_each<Inputs>(state, [](const Inputs& in) {
    MhaGrads g = mha_backward(in.layer, in.x, in.mask, in.d_y);
    benchmark::DoNotOptimize(g.dx.data());
  });
  if (ran) state.counters["FLOPS"] = rate(3 * forward_flops(state.range(0)));
}

void BM_TrainingStep(benchmark::State& state) {
  const bool ran = bench::time_each<Inputs>(state, [](const Inputs& in) {
    Tensor2 y = in.layer.forward(in.x, in.mask);                   // for the loss
    MhaGrads g = mha_backward(in.layer, in.x, in.mask, in.d_y);   // for the update
    benchmark::DoNotOptimize(y.data());
    benchmark::DoNotOptimize(g.dx.data());
  });
  // Counted as PyTorch's step: one forward and one backward (3x the forward's
  // FLOPs), so that GFLOP/s compare; the recomputed forward is not counted.
  if (ran) state.counters["FLOPS"] = rate(3 * forward_flops(state.range(0)));
}

BENCHMARK(BM_Forward)->Apply(bench::backward_widths);
BENCHMARK(BM_MhaBackward)->Apply(bench::backward_widths);
BENCHMARK(BM_TrainingStep)->Apply(bench::backward_widths);

void dump(const std::string& dir, int d) {
  const Inputs in(d);
  const MhaGrads g = mha_backward(in.layer, in.x, in.mask, in.d_y);
  bench::write_dump(dir, d, {{"x", in.x}, {"d_y", in.d_y}, {"dx", g.dx}, {"dW_Q", g.dW_Q},
                             {"dW_K", g.dW_K}, {"dW_V", g.dW_V}, {"dW_O", g.dW_O}});
}

}  // namespace
}  // namespace mha

int main(int argc, char** argv) { return mha::bench::backward_main(argc, argv, mha::dump); }
