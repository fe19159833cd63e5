// What the backward benchmarks of labs 10 and 12 share: their inputs, the
// timing loop (which skips a stub), the --dump files and main().
//
//   struct Inputs : bench::BackwardData {
//     explicit Inputs(int d_model) : BackwardData(d_model), layer(...) {}
//     MultiHeadAttention layer;
//   };
//   void BM_X(benchmark::State& state) {
//     bench::time_each<Inputs>(state, [](const Inputs& in) { ... });
//   }
//   BENCHMARK(BM_X)->Apply(bench::backward_widths);
//   void dump(const std::string& dir, int d_model) { bench::write_dump(dir, d_model, {...}); }
//   int main(int argc, char** argv) { return mha::bench::backward_main(argc, argv, dump); }
//
// tools/perf/backward_vs_torch.py and variant_backward_vs_torch.py read the
// --dump files: raw float32, <name>_<d_model>.f32.
#ifndef MHA_BENCH_BACKWARD_BENCH_H_
#define MHA_BENCH_BACKWARD_BENCH_H_

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

#include "bench/bench_inputs.h"
#include "common/tensor.h"
#include "labs/04_causal_mask/causal_mask.h"

namespace mha {
namespace bench {

constexpr std::size_t kBackwardTokens = 128;  // T
constexpr int kBackwardHeads = 8;             // query heads
constexpr int kBackwardWidths[] = {64, 512};  // d_model, the benchmarks' argument

// A benchmark's arguments (d_model = each of kBackwardWidths) and unit.
inline void backward_widths(benchmark::internal::Benchmark* b) {
  b->ArgName("d_model")->Unit(benchmark::kMicrosecond);
  for (int d : kBackwardWidths) b->Arg(d);
}

// The same x and upstream gradient d_y (T, d_model) and causal mask (T, T)
// for every benchmark and for --dump (the scripts rebuild the layers' weights
// from their NumpyRng seed, and read these).
struct BackwardData {
  explicit BackwardData(int d_model)
      : x(random_matrix(kBackwardTokens, d_model, /*seed=*/10)),
        d_y(random_matrix(kBackwardTokens, d_model, /*seed=*/11)),
        mask(causal_mask(static_cast<int>(kBackwardTokens))) {}
  Tensor2 x, d_y, mask;  // (T, d_model), (T, d_model), (T, T)
};

// Times body(in) once per iteration, with in = Inputs(d_model), d_model the
// benchmark's argument. A stub's std::logic_error skips the benchmark with
// its message (build with --config=bench). Returns whether it ran.
template <class Inputs, class Body>
bool time_each(benchmark::State& state, Body body) {
  try {
    const Inputs in(static_cast<int>(state.range(0)));
    for (auto _ : state) body(in);
  } catch (const std::logic_error& e) {
    state.SkipWithError(e.what());
    return false;
  }
  return true;
}

// Writes each named tensor to dir/<name>_<d_model>.f32.
inline void write_dump(const std::string& dir, int d_model,
                       std::initializer_list<std::pair<const char*, const Tensor2&>> named) {
  const std::string suffix = "_" + std::to_string(d_model) + ".f32";
  for (const auto& [name, tensor] : named) write_f32(dir + "/" + name + suffix, tensor);
}

// main(): with `--dump DIR` (before any benchmark flag) calls dump(DIR, d)
// for each d of kBackwardWidths and runs nothing; otherwise runs the
// benchmarks.
inline int backward_main(int argc, char** argv, void (*dump)(const std::string&, int)) {
  if (argc >= 3 && std::strcmp(argv[1], "--dump") == 0) {
    for (int d : kBackwardWidths) dump(argv[2], d);
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}

}  // namespace bench
}  // namespace mha

#endif  // MHA_BENCH_BACKWARD_BENCH_H_
