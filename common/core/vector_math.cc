// See vector_math.h. This file only chooses: the loops themselves are in
// vector_math_kernels.inc, compiled once per instruction set.
#include "common/core/vector_math.h"

#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/core/vector_math_kernels.h"

namespace mha {
namespace vector_math_detail {
namespace {

std::vector<const Kernels*> find_usable_kernels() {
  std::vector<const Kernels*> usable;
#if defined(__x86_64__)
  // __builtin_cpu_supports asks CPUID, and for AVX and AVX-512 also whether
  // the operating system saves those registers (XGETBV): both must hold.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("fma")) {
    usable.push_back(&avx512_kernels());
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    usable.push_back(&avx2_kernels());
  }
#endif
  usable.push_back(&baseline_kernels());
  // MHA_VECTOR_ISA=<name> drops every table listed before <name>.
  if (const char* wanted = std::getenv("MHA_VECTOR_ISA")) {
    for (std::size_t i = 0; i < usable.size(); ++i) {
      if (std::strcmp(usable[i]->isa, wanted) == 0) {
        usable.erase(usable.begin(), usable.begin() + i);
        break;
      }
    }
  }
  return usable;
}

// The table every call goes through: chosen on first use, then fixed.
const Kernels& best() {
  static const Kernels& chosen = *usable_kernels().front();
  return chosen;
}

}  // namespace

const std::vector<const Kernels*>& usable_kernels() {
  static const std::vector<const Kernels*> usable = find_usable_kernels();
  return usable;
}

}  // namespace vector_math_detail

using vector_math_detail::best;

float max_of(const float* x, std::size_t n) { return best().max_of(x, n); }
float sum_of(const float* x, std::size_t n) { return best().sum_of(x, n); }
float dot_of(const float* x, const float* y, std::size_t n) { return best().dot_of(x, y, n); }
void exp_shifted(const float* x, float shift, float* out, std::size_t n) {
  best().exp_shifted(x, shift, out, n);
}
float exp_shifted_sum(const float* x, float shift, float* out, std::size_t n) {
  return best().exp_shifted_sum(x, shift, out, n);
}
void scale_inplace(float* x, float factor, std::size_t n) { best().scale_inplace(x, factor, n); }
void add_inplace(float* x, const float* y, std::size_t n) { best().add_inplace(x, y, n); }
void erf_of(const double* x, double* out, std::size_t n) { best().erf_of(x, out, n); }
void exp_of(const double* x, double* out, std::size_t n) { best().exp_of(x, out, n); }
const char* vector_math_isa() { return best().isa; }

}  // namespace mha
