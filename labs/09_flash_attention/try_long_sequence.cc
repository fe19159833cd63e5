// Tries your attention_tiled and attention_tiled_causal at the size of the
// grader's long-sequence tests, under the grader's limits, and says whether
// they would pass them:
//
//   bazel run -c opt //labs/09_flash_attention:try_long_sequence
//   bazel run -c opt //labs/09_flash_attention:try_long_sequence -- --only causal --block_k 256
//
// One head, T = S = 32768 queries and keys, d_head = 16: the inputs and the
// output take 2 MiB each, but the (T, S) score matrix (or a (T, S) causal
// mask) would take 4 GiB. The grader runs your code with
//   - 2048 MiB of address space (tools/lab/limits.py, RUN_DEFAULTS memory_mb;
//     lab 9 keeps the default),
//   - 30 s for one call (lab 9's test_seconds in the instructors' rubric),
//   - and its test fails when the resident memory grows by 1 GiB or more
//     during the call.
// Like the grading test under `bazel test`, this program caps its own address
// space at what it maps now plus 2048 MiB (setrlimit RLIMIT_AS, soft limit)
// around each call, so an implementation that forms the score matrix fails
// here at once with std::bad_alloc instead of swapping, and it stops a call
// that runs past 30 s. It checks time and memory only: the values are what
// `bazel test //labs/09_flash_attention/...` checks, at small sizes.
//
// The grader compiles your file with -O2: build with -c opt, as above, or the
// times mean little. Exit status: 0 when every call would pass, 1 otherwise
// (a call over a limit, a bad flag, or the lab still a stub).
#include <sys/resource.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <thread>

#include "common/programs/lab_program.h"
#include "common/programs/process_memory.h"
#include "common/rng.h"
#include "common/tensor.h"
#include "labs/09_flash_attention/flash_attention.h"

namespace {

// The grading test's size and the grader's limits for lab 9 (see the top).
constexpr std::size_t kT = 32768;
constexpr std::size_t kDHead = 16;
constexpr std::size_t kMemoryMiB = 2048;       // address space the call may add
constexpr std::size_t kGrowthMiB = 1024;       // resident growth the test allows
constexpr double kCallSeconds = 30;            // one call
constexpr int kBlockQ = 64, kBlockK = 512;     // the blocks the grading test uses

const mha::LabProgram kProgram = {
    "try_long_sequence", "your lab 9",
    "bazel run -c opt --config=solutions //labs/09_flash_attention:try_long_sequence"};  // in the instructors' repository

struct Options {
  std::string only;  // "tiled", "causal", or "" for both
  int block_q = kBlockQ, block_k = kBlockK;
  bool tiled() const { return only != "causal"; }
  bool causal() const { return only != "tiled"; }
};

mha::FlagSet flags_of(Options& o) {
  mha::FlagSet f(kProgram.name);
  f.Choice("--only", &o.only, {"tiled", "causal"},
           "run only attention_tiled (tiled) or attention_tiled_causal (causal);\n"
           "default: both, as the grader does")
      .Int("--block_q", &o.block_q, 1, static_cast<long long>(kT),
           "query rows per tile (default 64, as the grading test)")
      .Int("--block_k", &o.block_k, 1, static_cast<long long>(kT),
           "keys per tile (default 512, as the grading test)")
      .Note("Run with -c opt (the grader compiles with -O2):\n"
            "  bazel run -c opt //labs/09_flash_attention:try_long_sequence");
  return f;
}

// (1, kT, kDHead) draws from default_rng(seed), times `spread`: q and k with
// a spread of 1.4, as the grading test, so the running max keeps moving.
mha::Tensor3 random_input(std::uint64_t seed, float spread) {
  mha::NumpyRng rng(seed);
  const mha::Tensor2 rows = rng.normal_matrix(kT, kDHead, 1);  // (T, d_head)
  mha::Tensor3 out = xt::zeros<float>({std::size_t(1), kT, kDHead});  // (1, T, d_head)
  for (std::size_t i = 0; i < rows.size(); ++i) out.data()[i] = rows.data()[i] * spread;
  return out;
}

// Ends the program if the call it watches runs past kCallSeconds of wall
// clock, as the grader does: a call that slow fails whatever it would return
// (on a busy machine, compare the CPU time printed for a call that ends).
class Watchdog {
 public:
  explicit Watchdog(const char* what) : thread_([this, what] { watch(what); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }

 private:
  void watch(const char* what) {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto limit = std::chrono::duration<double>(kCallSeconds);
    if (!wake_.wait_for(lock, limit, [this] { return done_; })) {
      std::printf("%s: still running after %.0f s, the grader's limit for one call: would FAIL "
                  "(too slow; see docs/09_flash_attention.md)\n", what, kCallSeconds);
      std::fflush(stdout);
      std::_Exit(1);
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

// CPU seconds this process has used (every thread): next to the wall clock,
// it tells a slow implementation from a busy machine.
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Runs one call under the limits and prints what it took. True if it passes.
template <class F>
bool try_call(const char* what, F call) {
  const std::size_t rss_before = mha::StatusBytes("VmRSS");
  const bool reset = mha::ResetPeak();
  mha::Tensor3 out;
  const double cpu0 = cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  {
    Watchdog watchdog(what);
    mha::AddressSpaceCap cap(kMemoryMiB << 20);
    try {
      out = call();
    } catch (const std::bad_alloc&) {
      std::printf("%s: ran out of memory under the cap of %zu MiB more than the program maps: "
                  "would FAIL (it seems to form a (T, S) matrix: 4 GiB at T = S = 32768)\n",
                  what, kMemoryMiB);
      return false;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_seconds() - cpu0;
  const std::size_t peak = mha::PeakBytes();
  const std::size_t growth = peak > rss_before ? peak - rss_before : 0;
  const bool shape_ok = out.dimension() == 3 && out.shape(0) == 1 && out.shape(1) == kT &&
                        out.shape(2) == kDHead;
  const bool pass = seconds < kCallSeconds && growth < (kGrowthMiB << 20) && shape_ok;
  std::printf("%s: %.2f s (CPU %.2f s); peak resident memory %zu MiB, %zu MiB above the %zu "
              "MiB before the call%s%s: would %s\n",
              what, seconds, cpu, peak >> 20, growth >> 20, rss_before >> 20,
              reset ? "" : " (peak since the program started)",
              shape_ok ? "" : "; the output is not (1, 32768, 16)", pass ? "pass" : "FAIL");
  return pass;
}

int run(const Options& o) {
#ifndef NDEBUG
  std::printf("note: built without -c opt; the grader compiles with -O2, so these times are "
              "slower than the grader's (bazel run -c opt ...)\n");
#endif
  std::printf("one head, T = S = %zu, d_head = %zu, blocks %d x %d; limits: %.0f s per call, "
              "%zu MiB of address space, resident growth under %zu MiB\n",
              kT, kDHead, o.block_q, o.block_k, kCallSeconds, kMemoryMiB, kGrowthMiB);
  const mha::Tensor3 q = random_input(41, 1.4f);  // (1, T, d_head)
  const mha::Tensor3 k = random_input(42, 1.4f);  // (1, S, d_head)
  const mha::Tensor3 v = random_input(43, 1.0f);  // (1, S, d_head)
  bool pass = true;
  if (o.tiled()) {
    pass &= try_call("attention_tiled", [&] {
      return mha::attention_tiled(q, k, v, std::nullopt, o.block_q, o.block_k);
    });
  }
  if (o.causal()) {
    pass &= try_call("attention_tiled_causal", [&] {
      return mha::attention_tiled_causal(q, k, v, o.block_q, o.block_k);
    });
  }
  std::printf("%s\n", pass ? "time and memory are within the grader's limits (the values are "
                             "checked by bazel test //labs/09_flash_attention/...)"
                           : "over a limit: see docs/09_flash_attention.md, \"Classic mistakes\"");
  return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return mha::RunLabProgram<Options>(kProgram, argc, argv, flags_of, run);
}
