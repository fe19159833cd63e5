// How far the vectorised erf and exp of common/core/vector_math.h are from
// std::erf and std::exp, measured where lab 14's GELU uses them: on every
// float x in [-10, 10] (2.2e9 of them; the FFN's pre-activations in the
// tests and in train_mini_gpt lie well inside), GELU and its derivative
//   gelu(x) = x Phi(x)   gelu'(x) = Phi(x) + x phi(x)
//   Phi(x) = (1 + erf(x / sqrt 2)) / 2   phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
// computed in double and rounded to float once, with std's functions and
// with erf_of and exp_of. Prints how many floats differ and the largest
// error of erf_of and exp_of in units in the last place (of the double).
//
//   bazel run -c opt //bench:erf_accuracy          (about a minute; progress on stderr)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/core/vector_math.h"

namespace {

double ulps(double got, double want) {
  if (got == want) return 0.0;
  return std::abs(got - want) / std::abs(std::nextafter(want, 2.0 * want) - want);
}

struct Tally {
  long long floats = 0, gelu_differ = 0, derivative_differ = 0;
  double erf_ulps = 0.0, exp_ulps = 0.0;
  float erf_worst_x = 0.0f;
};

// The chunk's GELU and GELU' both ways.
void measure(const std::vector<float>& x, Tally& tally) {
  const std::size_t n = x.size();
  std::vector<double> erf_in(n), erf_out(n), exp_in(n), exp_out(n);
  for (std::size_t i = 0; i < n; ++i) {
    erf_in[i] = double(x[i]) / std::sqrt(2.0);
    exp_in[i] = -0.5 * double(x[i]) * double(x[i]);
  }
  mha::erf_of(erf_in.data(), erf_out.data(), n);
  mha::exp_of(exp_in.data(), exp_out.data(), n);
  const double inv_sqrt_2pi = 1.0 / std::sqrt(2.0 * M_PI);
  for (std::size_t i = 0; i < n; ++i) {
    const double v = x[i], erf_std = std::erf(erf_in[i]), exp_std = std::exp(exp_in[i]);
    const double cdf_std = 0.5 * (1.0 + erf_std), cdf_vec = 0.5 * (1.0 + erf_out[i]);
    tally.gelu_differ += float(v * cdf_std) != float(v * cdf_vec);
    tally.derivative_differ += float(cdf_std + v * exp_std * inv_sqrt_2pi) !=
                               float(cdf_vec + v * exp_out[i] * inv_sqrt_2pi);
    if (erf_std != 0.0 && ulps(erf_out[i], erf_std) > tally.erf_ulps) {
      tally.erf_ulps = ulps(erf_out[i], erf_std);
      tally.erf_worst_x = x[i];
    }
    if (exp_std > 0.0) tally.exp_ulps = std::max(tally.exp_ulps, ulps(exp_out[i], exp_std));
  }
  tally.floats += static_cast<long long>(n);
}

}  // namespace

int main() {
  Tally tally;
  std::vector<float> chunk;
  chunk.reserve(1 << 16);
  // Every non-negative float up to 10 by its bit pattern, and its negative.
  for (int sign : {1, -1}) {
    for (std::uint32_t bits = 0;; ++bits) {
      float f;
      std::memcpy(&f, &bits, sizeof f);
      if (!(f <= 10.0f)) break;
      chunk.push_back(static_cast<float>(sign) * f);
      if (chunk.size() == chunk.capacity()) {
        measure(chunk, tally);
        chunk.clear();
        if ((bits >> 16) % 2048 == 0) {
          std::fprintf(stderr, "  %s side: %.0f%%\n", sign > 0 ? "positive" : "negative",
                       100.0 * bits / 1092616192.0);  // the bits of 10.0f
        }
      }
    }
  }
  measure(chunk, tally);
  std::printf("vector instructions: %s\n", mha::vector_math_isa());
  std::printf("floats in [-10, 10]: %lld\n", tally.floats);
  std::printf("gelu  differing from std::erf's: %lld (%.1e)\n", tally.gelu_differ,
              double(tally.gelu_differ) / double(tally.floats));
  std::printf("gelu' differing from std's:      %lld (%.1e)\n", tally.derivative_differ,
              double(tally.derivative_differ) / double(tally.floats));
  std::printf("erf_of: at most %.0f ulp from std::erf (at x / sqrt 2, x = %.9g)\n", tally.erf_ulps,
              tally.erf_worst_x);
  std::printf("exp_of: at most %.0f ulp from std::exp\n", tally.exp_ulps);
  return 0;
}
