// Lab 8 benchmark: the time to generate one token with a KV cache against
// recomputing the whole prefix, for prefixes of S = 64 .. 4096 tokens.
//
//   BM_CachedStep/<variant>/S:<S>   the decoder holds S - 1 tokens; time one
//                                   step() with the S-th (T_new = 1): O(S)
//   BM_Recompute/<variant>/S:<S>    layer.forward over all S tokens with
//                                   causal_mask(S), whose last row is the new
//                                   token's output: O(S^2)
//
// Variants, all d_model = 512 with 8 query heads (d_head 64):
//   MHA   GqaDecoder on GroupedQueryAttention(512, 8, 8)
//   GQA   GqaDecoder on GroupedQueryAttention(512, 8, 2)
//   MLA   MlaDecoder on MultiHeadLatentAttention(512, 8, 64); recomputed with
//         the naive forward (the faster of lab 6's two on a full sequence)
//
// Counters: S; cache_bytes_per_token (float32, one layer); cache_bytes, what
// the cache holds after the step (S tokens; for BM_Recompute, what a cache
// would hold). Run with one BLAS thread:
//
//   OPENBLAS_NUM_THREADS=1 bazel run --config=bench //bench:kv_cache_bench
//
// tools/perf/kv_cache_plot.py turns the JSON into docs/images/kv_cache_decode.png
// and the table of docs/PERFORMANCE.md.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <xtensor/xview.hpp>

#include "bench/bench_inputs.h"
#include "bench/bench_runs.h"
#include "labs/04_causal_mask/causal_mask.h"
#include "labs/05_grouped_query_attention/grouped_query_attention.h"
#include "labs/06_latent_attention/latent_attention.h"
#include "labs/08_kv_cache/kv_cache.h"

namespace mha {
namespace {

constexpr int kDModel = 512;
constexpr int kHeads = 8;
constexpr int kGqaKvHeads = 2;
constexpr int kMlaRank = 64;
const std::vector<int> kSizes = {64, 128, 256, 512, 1024, 2048, 4096};

enum class Variant { kMha, kGqa, kMla };

const char* name(Variant v) {
  switch (v) {
    case Variant::kMha: return "MHA";
    case Variant::kGqa: return "GQA";
    case Variant::kMla: return "MLA";
  }
  return "?";
}

// The layers live as long as the program: the decoders point at them.
// MHA is GQA with as many kv heads as query heads.
const GroupedQueryAttention& gqa_layer(Variant v) {
  static std::map<Variant, std::unique_ptr<GroupedQueryAttention>> layers;
  auto& p = layers[v];
  const int n_kv_heads = v == Variant::kMha ? kHeads : kGqaKvHeads;
  if (!p) p = std::make_unique<GroupedQueryAttention>(kDModel, kHeads, n_kv_heads, /*seed=*/1);
  return *p;
}

const MultiHeadLatentAttention& mla_layer() {
  static const MultiHeadLatentAttention layer(kDModel, kHeads, kMlaRank, /*seed=*/1);
  return layer;
}

// The S tokens of one benchmark: the first S - 1 are the prefix.
const Tensor2& tokens(int S) {
  static std::map<int, Tensor2> memo;
  auto it = memo.find(S);
  if (it == memo.end()) {
    it = memo.emplace(S, bench::random_matrix(static_cast<std::size_t>(S), kDModel, 8)).first;
  }
  return it->second;
}

// A decoder that already holds the first S - 1 tokens (one prefill step),
// built once per (variant, S): Google Benchmark calls a benchmark function
// several times, and the prefill costs as much as one recomputation.
template <class Decoder>
const Decoder& prefilled(Variant v, int S) {
  static std::map<std::pair<int, int>, std::unique_ptr<Decoder>> memo;
  auto& p = memo[{static_cast<int>(v), S}];
  if (!p) {
    if constexpr (std::is_same<Decoder, GqaDecoder>::value) {
      p = std::make_unique<Decoder>(gqa_layer(v), S);
    } else {
      p = std::make_unique<Decoder>(mla_layer(), S);
    }
    p->step(xt::view(tokens(S), xt::range(0, S - 1), xt::all()));  // (S - 1, d_model)
  }
  return *p;
}

// As the layer counts it (labs 5 and 6), in float32 bytes.
std::size_t cache_bytes_per_token(Variant v) {
  const std::size_t floats = v == Variant::kMla ? mla_layer().kv_cache_floats_per_token()
                                                : gqa_layer(v).kv_cache_floats_per_token();
  return floats * sizeof(float);
}

template <class Decoder>
void cached_step(benchmark::State& state, Variant v, int S) {
  const Decoder& start = prefilled<Decoder>(v, S);
  const Tensor2 last = xt::view(tokens(S), xt::range(S - 1, S), xt::all());  // (1, d_model)
  std::size_t bytes = 0;
  for (auto _ : state) {
    // Each timed step starts from the same S - 1 cached tokens: copying the
    // decoder (its cache) is set-up, not part of the step.
    state.PauseTiming();
    Decoder decoder = start;
    state.ResumeTiming();
    Tensor2 y = decoder.step(last);  // (1, d_model)
    benchmark::DoNotOptimize(y.data());
    bytes = decoder.cache().bytes();
  }
  state.counters["cache_bytes"] = static_cast<double>(bytes);
}

void BM_CachedStep(benchmark::State& state, Variant v, int S) {
  try {
    if (v == Variant::kMla) {
      cached_step<MlaDecoder>(state, v, S);
    } else {
      cached_step<GqaDecoder>(state, v, S);
    }
  } catch (const std::logic_error& e) {  // a stub: build with --config=bench
    state.SkipWithError(e.what());
    return;
  }
  state.counters["S"] = S;
  state.counters["cache_bytes_per_token"] = static_cast<double>(cache_bytes_per_token(v));
}

void BM_Recompute(benchmark::State& state, Variant v, int S) {
  const Tensor2& x = tokens(S);        // (S, d_model): the prefix and the new token
  try {
    const Tensor2 mask = causal_mask(S);  // (S, S), built once: not part of the step
    for (auto _ : state) {
      Tensor2 y = v == Variant::kMla ? mla_layer().forward(x, mask)
                                     : gqa_layer(v).forward(x, mask);  // (S, d_model)
      benchmark::DoNotOptimize(y.data());  // its last row is the new token's output
    }
  } catch (const std::logic_error& e) {
    state.SkipWithError(e.what());
    return;
  }
  state.counters["S"] = S;
  state.counters["cache_bytes_per_token"] = static_cast<double>(cache_bytes_per_token(v));
  state.counters["cache_bytes"] = static_cast<double>(cache_bytes_per_token(v) * S);
}

}  // namespace
}  // namespace mha

int main(int argc, char** argv) {
  using mha::Variant;
  // Side by side: for each S, every variant's cached step next to its recomputation.
  for (int S : mha::kSizes) {
    for (Variant v : {Variant::kMha, Variant::kGqa, Variant::kMla}) {
      const std::string suffix = std::string(mha::name(v)) + "/S:" + std::to_string(S);
      benchmark::RegisterBenchmark(("BM_CachedStep/" + suffix).c_str(), mha::BM_CachedStep, v, S)
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("BM_Recompute/" + suffix).c_str(), mha::BM_Recompute, v, S)
          ->Unit(benchmark::kMicrosecond);
    }
  }
  return mha::bench::run_on_one_thread("kv_cache_bench", argc, argv);
}
