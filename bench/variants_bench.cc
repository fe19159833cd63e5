// Labs 5 and 6 benchmark: one forward pass of every attention variant at the
// same d_model, and the KV-cache size each one needs per token.
//
//   MHA      lab 3, 8 heads: caches K and V, 2 * d_model floats per token
//   GQA      lab 5, 8 query heads sharing 4 or 2 kv heads: 2 * n_kv * d_head
//   MQA      lab 5, one kv head: 2 * d_head
//   MLA      lab 6, caches the latent c only: kv_rank floats; timed both naive
//            (K and V rebuilt from c) and absorbed (scores taken against c)
//
// Each benchmark reports, besides time, the counters
//   kv_floats_per_token, kv_bytes_per_token (float32, one layer), params,
//   MFLOP (per forward, counted below: a multiply-add is 2) and FLOPS (those
//   per second).
// Before the benchmarks run the program prints the same cache table.
//
//   bazel run -c opt --config=solutions //bench:variants_bench
#include <benchmark/benchmark.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_inputs.h"
#include "labs/03_output_projection/multi_head_attention.h"
#include "labs/05_grouped_query_attention/grouped_query_attention.h"
#include "labs/06_latent_attention/latent_attention.h"

namespace mha {
namespace {

constexpr int kDModel = 512;
constexpr int kHeads = 8;
constexpr int kDHead = kDModel / kHeads;
constexpr int kRank = 128;  // MLA latent width: as small a cache as MQA's
constexpr std::size_t kTokens = 256;

using bench::attention_flops;
using bench::matmul_flops;

struct Variant {
  std::string name;       // benchmark name, also the row label of the table
  std::string family;     // MHA, GQA, MQA, MLA
  int n_kv_heads;         // 0 for MLA
  int kv_rank;            // 0 unless MLA
  bool absorbed;          // MLA only
};

const std::vector<Variant>& variants() {
  static const std::vector<Variant> v = {
      {"MHA/kv_heads:8", "MHA", kHeads, 0, false},
      {"GQA/kv_heads:4", "GQA", 4, 0, false},
      {"GQA/kv_heads:2", "GQA", 2, 0, false},
      {"MQA/kv_heads:1", "MQA", 1, 0, false},
      {"MLA_naive/rank:128", "MLA", 0, kRank, false},
      {"MLA_absorbed/rank:128", "MLA", 0, kRank, true},
  };
  return v;
}

// Floats each variant keeps per token and layer in its KV cache. MHA has no
// method for it in lab 3: it caches K and V, d_model floats each.
std::size_t cache_floats(const Variant& v) {
  if (v.family == "MHA") return 2 * static_cast<std::size_t>(kDModel);
  if (v.family == "MLA") {
    return MultiHeadLatentAttention(kDModel, kHeads, v.kv_rank).kv_cache_floats_per_token();
  }
  return GroupedQueryAttention(kDModel, kHeads, v.n_kv_heads).kv_cache_floats_per_token();
}

// FLOPs of one forward pass over T tokens (multiply-add = 2).
double forward_flops(const Variant& v, double T) {
  const double d = kDModel, H = kHeads, dh = kDHead;
  if (v.family != "MLA") {
    const double kv_width = v.n_kv_heads * dh;
    return matmul_flops(T, d, d)               // Q
           + 2 * matmul_flops(T, d, kv_width)  // K, V: the only products GQA shrinks
           + attention_flops(T, T, d)          // every query head still attends
           + matmul_flops(T, d, d);            // W_O
  }
  const double r = v.kv_rank;
  const double common = matmul_flops(T, d, d)    // Q
                        + matmul_flops(T, d, r)  // c = x @ W_DKV
                        + matmul_flops(T, d, d); // W_O
  if (!v.absorbed) {
    return common + 2 * matmul_flops(T, r, d)    // K = c @ W_UK, V = c @ W_UV
           + attention_flops(T, T, d);
  }
  // Absorbed, counted as solutions/06_latent_attention computes it, head by
  // head: q_h @ W_UK_h^T (T, r); scores against c and p @ c over r-wide
  // latents instead of d_head-wide keys (H * r / d_model = 2x the naive
  // attention FLOPs here); W_UV_h @ W_O_h (r, d), recomputed every call
  // because the weights are public; then (p_h @ c) @ that (T, d).
  return common + H * matmul_flops(T, dh, r)  // queries into latent space
         + H * attention_flops(T, T, r)       // scores and sum against c
         + H * matmul_flops(r, dh, d)         // W_UV_h @ W_O_h
         + H * matmul_flops(T, r, d)          // each head's share of the output
         - matmul_flops(T, d, d);             // ...which replaces the plain W_O
}

void BM_Forward(benchmark::State& state, const Variant& v) {
  const Tensor2 x = bench::random_matrix(kTokens, kDModel, 5);  // (T, d_model)
  try {
    std::function<Tensor2()> forward;
    std::size_t params = 0;
    if (v.family == "MHA") {
      auto layer = std::make_shared<MultiHeadAttention>(kDModel, kHeads);
      params = layer->parameter_count();
      forward = [layer, &x] { return layer->forward(x); };
    } else if (v.family == "MLA") {
      auto layer = std::make_shared<MultiHeadLatentAttention>(kDModel, kHeads, v.kv_rank);
      params = layer->parameter_count();
      if (v.absorbed) {
        forward = [layer, &x] { return layer->forward_absorbed(x); };
      } else {
        forward = [layer, &x] { return layer->forward(x); };
      }
    } else {
      auto layer = std::make_shared<GroupedQueryAttention>(kDModel, kHeads, v.n_kv_heads);
      params = layer->parameter_count();
      forward = [layer, &x] { return layer->forward(x); };
    }
    for (auto _ : state) {
      Tensor2 y = forward();  // (T, d_model)
      benchmark::DoNotOptimize(y.data());
    }
    const std::size_t floats = cache_floats(v);
    state.counters["params"] = static_cast<double>(params);
    state.counters["kv_floats_per_token"] = static_cast<double>(floats);
    state.counters["kv_bytes_per_token"] = static_cast<double>(floats * sizeof(float));
  } catch (const std::logic_error& e) {  // a stub: build with --config=solutions
    state.SkipWithError(e.what());
    return;
  }
  state.counters["MFLOP"] = forward_flops(v, kTokens) / 1e6;  // per forward
  state.counters["FLOPS"] = benchmark::Counter(
      forward_flops(v, kTokens), benchmark::Counter::kIsIterationInvariantRate);
}

void print_cache_table() {
  std::printf("KV cache per token and layer, d_model=%d, %d query heads, float32\n",
              kDModel, kHeads);
  std::printf("%-24s %8s %8s %10s\n", "variant", "floats", "bytes", "vs MHA");
  const double mha = 2.0 * kDModel;
  for (const Variant& v : variants()) {
    if (v.absorbed) continue;  // same cache as the naive MLA
    std::size_t floats = 0;
    try {
      floats = cache_floats(v);
    } catch (const std::logic_error&) {
      std::printf("%-24s %8s\n", v.name.c_str(), "(stub)");
      continue;
    }
    std::printf("%-24s %8zu %8zu %9.1fx\n", v.name.c_str(), floats, floats * sizeof(float),
                mha / static_cast<double>(floats));
  }
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace
}  // namespace mha

int main(int argc, char** argv) {
  for (const mha::Variant& v : mha::variants()) {
    benchmark::RegisterBenchmark(("BM_Forward/" + v.name).c_str(), mha::BM_Forward, v)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  mha::print_cache_table();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
