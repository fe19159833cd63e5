// Lab 12 benchmark: the backward of grouped-query and latent attention.
//
// At T = 128 tokens, 8 query heads, d_model = 64 and 512, with a causal mask:
//
//   BM_GqaBackward   gqa_backward(layer, x, mask, d_y), 2 kv heads      (lab 12)
//   BM_MlaBackward   mla_backward(layer, x, mask, d_y), kv_rank = d_model / 8
//
// Each recomputes the forward it needs inside: one forward and one backward.
//
//   bazel run --config=bench //bench:variant_backward_bench
//
// tools/perf/variant_backward_vs_torch.py runs this binary and PyTorch's
// autograd on the same layers in the same run, one thread each. With `--dump
// DIR` (before any benchmark flag) the binary instead writes, for each
// d_model, x, d_y and every gradient of both layers to DIR as raw float32
// files (x_<d>.f32, d_y_<d>.f32, gqa_dx_<d>.f32, mla_dW_DKV_<d>.f32, ...), so
// the script can check that PyTorch computes the same numbers: the layers'
// weights are NumpyRng(0) draws, which NumPy reproduces.
#include <benchmark/benchmark.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "bench/bench_inputs.h"
#include "labs/04_causal_mask/causal_mask.h"
#include "labs/12_variant_backward/variant_backward.h"

namespace mha {
namespace {

constexpr std::size_t kTokens = 128;
constexpr int kHeads = 8;
constexpr int kKvHeads = 2;

struct Inputs {
  explicit Inputs(int d_model)
      : gqa(d_model, kHeads, kKvHeads, /*seed=*/0),
        mla(d_model, kHeads, /*kv_rank=*/d_model / 8, /*seed=*/0),
        x(bench::random_matrix(kTokens, d_model, /*seed=*/10)),
        d_y(bench::random_matrix(kTokens, d_model, /*seed=*/11)),
        mask(causal_mask(static_cast<int>(kTokens))) {}
  GroupedQueryAttention gqa;
  MultiHeadLatentAttention mla;
  Tensor2 x, d_y, mask;  // (T, d_model), (T, d_model), (T, T)
};

void BM_GqaBackward(benchmark::State& state) {
  try {
    const Inputs in(static_cast<int>(state.range(0)));
    for (auto _ : state) {
      GqaGrads g = gqa_backward(in.gqa, in.x, in.mask, in.d_y);
      benchmark::DoNotOptimize(g.dx.data());
    }
  } catch (const std::logic_error& e) {  // a stub: build with --config=bench
    state.SkipWithError(e.what());
  }
}

void BM_MlaBackward(benchmark::State& state) {
  try {
    const Inputs in(static_cast<int>(state.range(0)));
    for (auto _ : state) {
      MlaGrads g = mla_backward(in.mla, in.x, in.mask, in.d_y);
      benchmark::DoNotOptimize(g.dx.data());
    }
  } catch (const std::logic_error& e) {
    state.SkipWithError(e.what());
  }
}

BENCHMARK(BM_GqaBackward)->ArgName("d_model")->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MlaBackward)->ArgName("d_model")->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);

void dump(const std::string& dir) {
  for (int d : {64, 512}) {
    const Inputs in(d);
    const std::string s = "_" + std::to_string(d) + ".f32";
    bench::write_f32(dir + "/x" + s, in.x);
    bench::write_f32(dir + "/d_y" + s, in.d_y);
    const GqaGrads g = gqa_backward(in.gqa, in.x, in.mask, in.d_y);
    bench::write_f32(dir + "/gqa_dx" + s, g.dx);
    bench::write_f32(dir + "/gqa_dW_Q" + s, g.dW_Q);
    bench::write_f32(dir + "/gqa_dW_K" + s, g.dW_K);
    bench::write_f32(dir + "/gqa_dW_V" + s, g.dW_V);
    bench::write_f32(dir + "/gqa_dW_O" + s, g.dW_O);
    const MlaGrads m = mla_backward(in.mla, in.x, in.mask, in.d_y);
    bench::write_f32(dir + "/mla_dx" + s, m.dx);
    bench::write_f32(dir + "/mla_dW_Q" + s, m.dW_Q);
    bench::write_f32(dir + "/mla_dW_DKV" + s, m.dW_DKV);
    bench::write_f32(dir + "/mla_dW_UK" + s, m.dW_UK);
    bench::write_f32(dir + "/mla_dW_UV" + s, m.dW_UV);
    bench::write_f32(dir + "/mla_dW_O" + s, m.dW_O);
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
