// Lab 3 benchmark: the whole MultiHeadAttention::forward as the head count
// grows at a fixed d_model ("heads are nearly free").
//
// Parameters are 4 * d_model^2 whatever the head count, and so are the
// projection FLOPs (8 * T * d_model^2); the attention contractions are
// 4 * T^2 * d_model. Only the softmax (H * T^2) and per-head bookkeeping grow.
//
//   bazel run -c opt --config=solutions //bench:layer_bench
#include <benchmark/benchmark.h>

#include <stdexcept>

#include "bench/bench_inputs.h"
#include "bench/bench_runs.h"
#include "labs/03_output_projection/multi_head_attention.h"

namespace mha {
namespace {

constexpr int kDModel = 512;
constexpr std::size_t kTokens = 256;

void BM_LayerForward(benchmark::State& state) {
  const int H = static_cast<int>(state.range(0));
  const Tensor2 x = bench::random_matrix(kTokens, kDModel, 4);  // (T, d_model)
  try {
    const MultiHeadAttention layer(kDModel, H, /*seed=*/0);
    for (auto _ : state) {
      Tensor2 y = layer.forward(x);  // (T, d_model)
      benchmark::DoNotOptimize(y.data());
    }
    state.counters["params"] = static_cast<double>(layer.parameter_count());
  } catch (const std::logic_error& e) {  // a stub: build with --config=solutions
    state.SkipWithError(e.what());
    return;
  }
  const double flops = 4 * bench::matmul_flops(kTokens, kDModel, kDModel) +
                       bench::attention_flops(kTokens, kTokens, kDModel);
  state.counters["heads"] = H;
  state.counters["FLOPS"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_LayerForward)->Apply(bench::head_counts);

}  // namespace
}  // namespace mha

BENCHMARK_MAIN();
