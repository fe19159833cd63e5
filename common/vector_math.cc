// See vector_math.h. Each function is a main loop over whole SIMD batches and
// a scalar loop over the remaining n % batch::size elements.
#include "common/vector_math.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <xsimd/xsimd.hpp>

namespace mha {
namespace {

using Batch = xsimd::batch<float>;  // the widest float vector this build targets
constexpr std::size_t kLanes = Batch::size;

// The largest multiple of kLanes that is <= n.
std::size_t whole_batches(std::size_t n) { return n - n % kLanes; }

}  // namespace

float max_of(const float* x, std::size_t n) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const std::size_t m = whole_batches(n);
  Batch acc(neg_inf);
  for (std::size_t i = 0; i < m; i += kLanes) acc = xsimd::max(acc, Batch::load_unaligned(x + i));
  alignas(64) float lanes[kLanes];
  acc.store_aligned(lanes);
  float result = *std::max_element(lanes, lanes + kLanes);
  for (std::size_t i = m; i < n; ++i) result = std::max(result, x[i]);
  return result;
}

float sum_of(const float* x, std::size_t n) {
  const std::size_t m = whole_batches(n);
  Batch acc(0.0f);
  for (std::size_t i = 0; i < m; i += kLanes) acc += Batch::load_unaligned(x + i);
  float result = xsimd::hadd(acc);
  for (std::size_t i = m; i < n; ++i) result += x[i];
  return result;
}

void exp_shifted(const float* x, float shift, float* out, std::size_t n) {
  const std::size_t m = whole_batches(n);
  const Batch s(shift);
  for (std::size_t i = 0; i < m; i += kLanes) {
    xsimd::exp(Batch::load_unaligned(x + i) - s).store_unaligned(out + i);
  }
  for (std::size_t i = m; i < n; ++i) out[i] = std::exp(x[i] - shift);
}

void scale_inplace(float* x, float factor, std::size_t n) {
  const std::size_t m = whole_batches(n);
  const Batch f(factor);
  for (std::size_t i = 0; i < m; i += kLanes) {
    (Batch::load_unaligned(x + i) * f).store_unaligned(x + i);
  }
  for (std::size_t i = m; i < n; ++i) x[i] *= factor;
}

}  // namespace mha
