// Lab 11 benchmark: what RoPE costs, and what the cache buys with it.
//
//   BM_PlainForward/round:<r>     lab 3's MultiHeadAttention::forward, T = 512,
//                                 d_model = 512, 8 heads, causal mask
//   BM_RotaryForward/round:<r>    RotaryAttention::forward on the same weights
//                                 (same seed), the same x and mask
//   BM_RotaryStep/round:<r>       one RotaryDecoder::step (T_new = 1) with S - 1 = 4095
//                                 tokens cached (the decoder is copied from a
//                                 prefilled one outside the timed region)
//   BM_RotaryRecompute/round:<r>  RotaryAttention::forward over all S = 4096 tokens
//                                 with causal_mask(S), whose last row is that step's output
//
// The four are registered in alternation, round after round, so that each
// ratio compares numbers measured seconds apart under the same load. Run with
// one BLAS thread, and let tools/perf/rope_summary.py print the ratios (CPU time,
// median over rounds):
//
//   bazel build --config=bench //bench:rope_bench
//   OPENBLAS_NUM_THREADS=1 bazel-bin/bench/rope_bench --benchmark_out=out/bench/rope_bench.json \
//       --benchmark_out_format=json
//   /usr/bin/python3 tools/perf/rope_summary.py out/bench/rope_bench.json
#include <benchmark/benchmark.h>

#include <memory>
#include <stdexcept>
#include <string>

#include <xtensor/xview.hpp>

#include "bench/bench_inputs.h"
#include "bench/bench_runs.h"
#include "labs/03_output_projection/multi_head_attention.h"
#include "labs/04_causal_mask/causal_mask.h"
#include "labs/11_rotary_embeddings/rotary_embeddings.h"

namespace mha {
namespace {

constexpr int kDModel = 512;
constexpr int kHeads = 8;
constexpr int kForwardT = 512;
constexpr int kDecodeS = 4096;
constexpr int kRounds = 5;

const MultiHeadAttention& plain_layer() {
  static const MultiHeadAttention layer(kDModel, kHeads, /*seed=*/1);
  return layer;
}

const RotaryAttention& rotary_layer() {
  static const RotaryAttention layer(kDModel, kHeads, /*seed=*/1);  // the same weights
  return layer;
}

const Tensor2& forward_x() {
  static const Tensor2 x = bench::random_matrix(kForwardT, kDModel, 11);  // (512, 512)
  return x;
}

const Tensor2& decode_x() {
  static const Tensor2 x = bench::random_matrix(kDecodeS, kDModel, 12);  // (4096, 512)
  return x;
}

// Built once: the prefill of 4095 tokens costs as much as one recomputation.
const RotaryDecoder& prefilled() {
  static std::unique_ptr<RotaryDecoder> decoder;
  if (!decoder) {
    decoder = std::make_unique<RotaryDecoder>(rotary_layer(), kDecodeS);
    decoder->step(xt::view(decode_x(), xt::range(0, kDecodeS - 1), xt::all()));
  }
  return *decoder;
}

template <class F>
void guarded(benchmark::State& state, F&& body) {
  try {
    body();
  } catch (const std::logic_error& e) {  // a stub: build with --config=bench
    state.SkipWithError(e.what());
  }
}

void BM_PlainForward(benchmark::State& state) {
  guarded(state, [&] {
    const Tensor2 mask = causal_mask(kForwardT);  // (T, T), not part of the timing
    for (auto _ : state) {
      Tensor2 y = plain_layer().forward(forward_x(), mask);  // (T, d_model)
      benchmark::DoNotOptimize(y.data());
    }
  });
}

void BM_RotaryForward(benchmark::State& state) {
  guarded(state, [&] {
    const Tensor2 mask = causal_mask(kForwardT);
    for (auto _ : state) {
      Tensor2 y = rotary_layer().forward(forward_x(), mask);  // (T, d_model)
      benchmark::DoNotOptimize(y.data());
    }
  });
}

void BM_RotaryStep(benchmark::State& state) {
  guarded(state, [&] {
    const RotaryDecoder& start = prefilled();
    const Tensor2 last = xt::view(decode_x(), xt::range(kDecodeS - 1, kDecodeS), xt::all());
    for (auto _ : state) {
      state.PauseTiming();
      RotaryDecoder decoder = start;  // the same 4095 cached tokens every time
      state.ResumeTiming();
      Tensor2 y = decoder.step(last);  // (1, d_model)
      benchmark::DoNotOptimize(y.data());
    }
    state.counters["S"] = kDecodeS;
  });
}

void BM_RotaryRecompute(benchmark::State& state) {
  guarded(state, [&] {
    const Tensor2 mask = causal_mask(kDecodeS);  // (S, S)
    for (auto _ : state) {
      Tensor2 y = rotary_layer().forward(decode_x(), mask);  // (S, d_model): last row = the step
      benchmark::DoNotOptimize(y.data());
    }
    state.counters["S"] = kDecodeS;
  });
}

}  // namespace
}  // namespace mha

int main(int argc, char** argv) {
  for (int r = 0; r < mha::kRounds; ++r) {
    const std::string round = "/round:" + std::to_string(r);
    benchmark::RegisterBenchmark(("BM_PlainForward" + round).c_str(), mha::BM_PlainForward)
        ->Unit(benchmark::kMillisecond)->MinTime(0.5);
    benchmark::RegisterBenchmark(("BM_RotaryForward" + round).c_str(), mha::BM_RotaryForward)
        ->Unit(benchmark::kMillisecond)->MinTime(0.5);
    benchmark::RegisterBenchmark(("BM_RotaryStep" + round).c_str(), mha::BM_RotaryStep)
        ->Unit(benchmark::kMillisecond)->MinTime(0.3);
    benchmark::RegisterBenchmark(("BM_RotaryRecompute" + round).c_str(), mha::BM_RotaryRecompute)
        ->Unit(benchmark::kMillisecond)->Iterations(1);
  }
  return mha::bench::run_on_one_thread("rope_bench", argc, argv);
}
