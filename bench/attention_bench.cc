// Lab 2 benchmark: attention_loop vs attention_batched as the head count grows
// at a fixed d_model.
//
// At fixed d_model the two big contractions (q k^T and p v) cost
// 4 * T^2 * d_model FLOPs whatever the head count: more heads means narrower
// heads, not more arithmetic. What does grow with H is the softmax (H * T^2
// exponentials) and the per-head overhead. The loop pays that overhead once
// per head; the batched version once per call.
//
// A third series times the batched contraction written as one xtensor
// broadcast expression (q as (H, T, 1, d_head) times k as (H, 1, S, d_head),
// summed over d_head), the form docs/02_batched_attention.md shows first:
// same numbers, no BLAS.
//
//   bazel run -c opt --config=solutions //bench:attention_bench
//   ./lab bench            (all benchmarks, JSON in out/bench/, charts in docs/images/)
#include <benchmark/benchmark.h>

#include <cmath>
#include <stdexcept>
#include <utility>

#include <xtensor/xmanipulation.hpp>
#include <xtensor/xreducer.hpp>
#include <xtensor/xview.hpp>

#include "bench/bench_inputs.h"
#include "bench/bench_runs.h"
#include "labs/02_batched_attention/attention.h"

namespace mha {
namespace {

constexpr std::size_t kDModel = 512;
constexpr std::size_t kTokens = 256;

using AttentionFn = AttentionResult (*)(const Tensor3&, const Tensor3&, const Tensor3&,
                                        const std::optional<Tensor2>&);

void run_attention(benchmark::State& state, AttentionFn fn) {
  const std::size_t H = static_cast<std::size_t>(state.range(0));
  const std::size_t d_head = kDModel / H;
  // Unit-variance q and k give scores of order 1 after the 1/sqrt(d_head)
  // scale, like a trained layer's.
  const Tensor3 q = bench::random_heads(H, kTokens, d_head, 1);  // (H, T, d_head)
  const Tensor3 k = bench::random_heads(H, kTokens, d_head, 2);  // (H, T, d_head)
  const Tensor3 v = bench::random_heads(H, kTokens, d_head, 3);  // (H, T, d_head)
  try {
    for (auto _ : state) {
      AttentionResult r = fn(q, k, v, std::nullopt);
      benchmark::DoNotOptimize(r.output.data());
      benchmark::DoNotOptimize(r.weights.data());
    }
  } catch (const std::logic_error& e) {  // a stub: build with --config=solutions
    state.SkipWithError(e.what());
    return;
  }
  state.counters["heads"] = static_cast<double>(H);
  state.counters["d_head"] = static_cast<double>(d_head);
  state.counters["FLOPS"] = benchmark::Counter(
      bench::attention_flops(kTokens, kTokens, kDModel),
      benchmark::Counter::kIsIterationInvariantRate);
}

// attention_batched with both contractions as broadcast-multiply-then-sum.
AttentionResult attention_broadcast(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                    const std::optional<Tensor2>& mask) {
  const std::size_t H = q.shape(0), T = q.shape(1), S = k.shape(1), d_head = q.shape(2);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_head));
  auto q_4d = xt::view(q, xt::all(), xt::all(), xt::newaxis(), xt::all());  // (H, T, 1, d_head)
  auto k_4d = xt::view(k, xt::all(), xt::newaxis(), xt::all(), xt::all());  // (H, 1, S, d_head)
  Tensor3 scores = xt::sum(q_4d * k_4d, {3}) * scale;                       // (H, T, S)
  if (mask.has_value()) scores += *mask;
  const Tensor2 rows = xt::reshape_view(scores, {H * T, S});          // (H*T, S)
  Tensor3 weights = xt::reshape_view(softmax_rows(rows), {H, T, S});  // (H, T, S)
  auto w_4d = xt::view(weights, xt::all(), xt::all(), xt::all(), xt::newaxis());  // (H, T, S, 1)
  auto v_4d = xt::view(v, xt::all(), xt::newaxis(), xt::all(), xt::all());        // (H, 1, S, d_head)
  Tensor3 output = xt::sum(w_4d * v_4d, {2});                                      // (H, T, d_head)
  return AttentionResult{std::move(output), std::move(weights)};
}

void BM_AttentionLoop(benchmark::State& state) { run_attention(state, &attention_loop); }
void BM_AttentionBatched(benchmark::State& state) { run_attention(state, &attention_batched); }
void BM_AttentionBroadcast(benchmark::State& state) { run_attention(state, &attention_broadcast); }

BENCHMARK(BM_AttentionLoop)->Apply(bench::head_counts);
BENCHMARK(BM_AttentionBatched)->Apply(bench::head_counts);
BENCHMARK(BM_AttentionBroadcast)->Apply(bench::head_counts);

}  // namespace
}  // namespace mha

BENCHMARK_MAIN();
