// How the benchmarks in bench/ are run: the head counts of the lab 2 and 3
// benchmarks, the main() body of the decode benchmarks (labs 8, 11 and 15),
// and the --dump of the training-step ones (labs 13 and 15).
//
//   BENCHMARK(BM_LayerForward)->Apply(bench::head_counts);
//   return bench::run_on_one_thread("rope_bench", argc, argv);
#ifndef MHA_BENCH_BENCH_RUNS_H_
#define MHA_BENCH_BENCH_RUNS_H_

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace mha {
namespace bench {

// A benchmark's arguments (heads = 1, 2, 4, 8, 16) and unit (milliseconds).
inline void head_counts(benchmark::internal::Benchmark* b) {
  b->ArgName("heads")->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Unit(benchmark::kMillisecond);
}

// Runs the registered benchmarks with Google Benchmark's flags in argv; says
// on stderr when OPENBLAS_NUM_THREADS is not 1 (the timings are of one
// thread). 1 on an unknown flag, else 0.
inline int run_on_one_thread(const char* program, int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const char* threads = std::getenv("OPENBLAS_NUM_THREADS");
  if (threads == nullptr || std::string(threads) != "1") {
    std::fprintf(stderr, "%s: set OPENBLAS_NUM_THREADS=1 to time one thread\n", program);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

// `--dump FILE` of the training-step benchmarks (labs 13 and 15): writes one
// number (the batch's loss) as text for the script that runs PyTorch beside
// them to compare. 0 on success, 1 if the file cannot be written.
inline int write_number(const char* path, double value) {
  std::FILE* f = std::fopen(path, "w");
  if (!f) return 1;
  std::fprintf(f, "%.9g\n", value);
  return std::fclose(f) == 0 ? 0 : 1;
}

}  // namespace bench
}  // namespace mha

#endif  // MHA_BENCH_BENCH_RUNS_H_
