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

#include <string>

#include "bench/backward_bench.h"
#include "labs/12_variant_backward/variant_backward.h"

namespace mha {
namespace {

constexpr int kKvHeads = 2;

struct Inputs : bench::BackwardData {
  explicit Inputs(int d_model)
      : BackwardData(d_model),
        gqa(d_model, bench::kBackwardHeads, kKvHeads, /*seed=*/0),
        mla(d_model, bench::kBackwardHeads, /*kv_rank=*/d_model / 8, /*seed=*/0) {}
  GroupedQueryAttention gqa;
  MultiHeadLatentAttention mla;
};

void BM_GqaBackward(benchmark::State& state) {
  bench::time_each<Inputs>(state, [](const Inputs& in) {
    GqaGrads g = gqa_backward(in.gqa, in.x, in.mask, in.d_y);
    benchmark::DoNotOptimize(g.dx.data());
  });
}

void BM_MlaBackward(benchmark::State& state) {
  bench::time_each<Inputs>(state, [](const Inputs& in) {
    MlaGrads g = mla_backward(in.mla, in.x, in.mask, in.d_y);
    benchmark::DoNotOptimize(g.dx.data());
  });
}

BENCHMARK(BM_GqaBackward)->Apply(bench::backward_widths);
BENCHMARK(BM_MlaBackward)->Apply(bench::backward_widths);

void dump(const std::string& dir, int d) {
  const Inputs in(d);
  const GqaGrads g = gqa_backward(in.gqa, in.x, in.mask, in.d_y);
  const MlaGrads m = mla_backward(in.mla, in.x, in.mask, in.d_y);
  bench::write_dump(dir, d, {{"x", in.x}, {"d_y", in.d_y},
                             {"gqa_dx", g.dx}, {"gqa_dW_Q", g.dW_Q}, {"gqa_dW_K", g.dW_K},
                             {"gqa_dW_V", g.dW_V}, {"gqa_dW_O", g.dW_O},
                             {"mla_dx", m.dx}, {"mla_dW_Q", m.dW_Q}, {"mla_dW_DKV", m.dW_DKV},
                             {"mla_dW_UK", m.dW_UK}, {"mla_dW_UV", m.dW_UV},
                             {"mla_dW_O", m.dW_O}});
}

}  // namespace
}  // namespace mha

int main(int argc, char** argv) { return mha::bench::backward_main(argc, argv, mha::dump); }
