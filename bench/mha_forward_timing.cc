// Times MultiHeadAttention::forward (lab 3) and one OpenBLAS sgemm of the
// same size, for tools/perf/mha_vs_torch.py, which runs PyTorch's
// nn.MultiheadAttention beside it in the same run.
//
//   mha_forward_timing [T=512] [d_model=512] [n_heads=8] [reps=15] [dump_dir]
//
// Prints one JSON object: the median and every repetition in milliseconds,
// and the FLOPs counted for each. Run with OPENBLAS_NUM_THREADS=1 for
// single-thread numbers (the script does). With dump_dir, also writes the
// input x and the output y there as raw float32 (x.f32, y.f32, row-major) so
// the script can check that PyTorch computes the same numbers: the layer's
// weights are NumpyRng(0) draws, which NumPy reproduces.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_inputs.h"
#include "labs/03_output_projection/multi_head_attention.h"

namespace {

double now_ms() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

// CPU time of this process: what the work cost, without the time other
// processes held the CPU (the machine is often shared).
double cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string json_list(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.3f", i ? ", " : "", v[i]);
    s += buf;
  }
  return s + "]";
}

}  // namespace

int main(int argc, char** argv) {
  const int T = argc > 1 ? std::atoi(argv[1]) : 512;
  const int d = argc > 2 ? std::atoi(argv[2]) : 512;
  const int H = argc > 3 ? std::atoi(argv[3]) : 8;
  const int reps = argc > 4 ? std::atoi(argv[4]) : 15;
  const std::string dump_dir = argc > 5 ? argv[5] : "";

  const mha::Tensor2 x = mha::bench::random_matrix(T, d, 7);  // (T, d_model)
  const mha::MultiHeadAttention layer(d, H, /*seed=*/0);

  // Forward: one warm-up call (first-touch page faults, OpenBLAS buffers).
  std::vector<double> forward_ms, forward_cpu_ms;
  mha::Tensor2 y = layer.forward(x);
  for (int i = 0; i < reps; ++i) {
    const double t0 = now_ms(), c0 = cpu_ms();
    y = layer.forward(x);  // (T, d_model)
    forward_cpu_ms.push_back(cpu_ms() - c0);
    forward_ms.push_back(now_ms() - t0);
  }

  if (!dump_dir.empty()) {
    mha::bench::write_f32(dump_dir + "/x.f32", x);
    mha::bench::write_f32(dump_dir + "/y.f32", y);
  }

  // sgemm (T, d) @ (d, d), the shape of one projection.
  const mha::Tensor2 w = mha::bench::random_matrix(d, d, 8);
  mha::Tensor2 c = mha::Tensor2::from_shape({static_cast<std::size_t>(T),
                                             static_cast<std::size_t>(d)});
  auto sgemm = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, d, d, 1.0f, x.data(), d,
                w.data(), d, 0.0f, c.data(), d);
  };
  sgemm();
  std::vector<double> sgemm_ms, sgemm_cpu_ms;
  for (int i = 0; i < reps; ++i) {
    const double t0 = now_ms(), c0 = cpu_ms();
    for (int k = 0; k < 4; ++k) sgemm();  // four, so the timer's resolution is moot
    sgemm_cpu_ms.push_back((cpu_ms() - c0) / 4);
    sgemm_ms.push_back((now_ms() - t0) / 4);
  }

  const double Td = static_cast<double>(T) * d;
  const double forward_flops = 4 * 2.0 * Td * d       // Q, K, V, O projections
                               + 4.0 * T * Td;        // q k^T and p v, all heads
  const double sgemm_flops = 2.0 * Td * d;
  std::printf(
      "{\"T\": %d, \"d_model\": %d, \"n_heads\": %d, \"reps\": %d,\n"
      " \"forward_flops\": %.0f, \"forward_ms_median\": %.3f, \"forward_ms\": %s,\n"
      " \"forward_cpu_ms\": %s,\n"
      " \"sgemm_flops\": %.0f, \"sgemm_ms_median\": %.3f, \"sgemm_ms\": %s,\n"
      " \"sgemm_cpu_ms\": %s,\n"
      " \"checksum\": %.6g}\n",
      T, d, H, reps, forward_flops, median(forward_ms), json_list(forward_ms).c_str(),
      json_list(forward_cpu_ms).c_str(), sgemm_flops, median(sgemm_ms),
      json_list(sgemm_ms).c_str(), json_list(sgemm_cpu_ms).c_str(),
      static_cast<double>(y(0, 0) + c(0, 0)));
  return 0;
}
