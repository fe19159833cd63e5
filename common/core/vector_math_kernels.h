// Internal to common/core/vector_math: one table of the loops in vector_math.h per
// instruction set, and the choice between them. Code outside common/ calls
// vector_math.h; only the dispatcher (vector_math.cc) and its test use this.
//
// Why several tables: a portable build (no -march) targets the x86-64
// baseline, SSE2, whose vectors hold 4 floats. Nearly every machine that runs
// the suite has AVX2 (8 floats) and many have AVX-512 (16 floats). The same
// xsimd loops (vector_math_kernels.inc) are therefore compiled three times,
// each object with its own target flags (common/core/BUILD), and vector_math.cc
// asks the CPU once, with __builtin_cpu_supports, which ones it may run.
#ifndef MHA_COMMON_VECTOR_MATH_KERNELS_H_
#define MHA_COMMON_VECTOR_MATH_KERNELS_H_

#include <cstddef>
#include <vector>

namespace mha {
namespace vector_math_detail {

// The functions of vector_math.h, for one instruction set.
struct Kernels {
  const char* isa;  // "avx512", "avx2+fma", or "baseline" (the build's own flags)
  float (*max_of)(const float* x, std::size_t n);
  float (*sum_of)(const float* x, std::size_t n);
  float (*dot_of)(const float* x, const float* y, std::size_t n);
  void (*exp_shifted)(const float* x, float shift, float* out, std::size_t n);
  float (*exp_shifted_sum)(const float* x, float shift, float* out, std::size_t n);
  void (*scale_inplace)(float* x, float factor, std::size_t n);
  void (*add_inplace)(float* x, const float* y, std::size_t n);
  void (*erf_of)(const double* x, double* out, std::size_t n);
  void (*exp_of)(const double* x, double* out, std::size_t n);
};

// Compiled with the build's own flags: runs on any CPU the build targets.
const Kernels& baseline_kernels();
#if defined(__x86_64__)
// Compiled with -mavx2 -mfma and with -mavx512f -mavx512dq -mfma: call only when the CPU
// (and the operating system) supports them.
const Kernels& avx2_kernels();
const Kernels& avx512_kernels();
#endif

// Every table this CPU can run, fastest first; the first is what
// vector_math.h uses. MHA_VECTOR_ISA=baseline (or avx2+fma) in the
// environment, read once, removes the faster ones: to compare or debug.
const std::vector<const Kernels*>& usable_kernels();

}  // namespace vector_math_detail
}  // namespace mha

#endif  // MHA_COMMON_VECTOR_MATH_KERNELS_H_
