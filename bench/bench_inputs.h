// Random inputs and FLOP counts shared by the benchmarks in bench/.
//
// The benchmarks time the reference solutions (built with --config=solutions
// and -c opt; see bench/BUILD). Inputs are standard-normal floats from a fixed
// seed so every run times the same numbers.
#ifndef MHA_BENCH_BENCH_INPUTS_H_
#define MHA_BENCH_BENCH_INPUTS_H_

#include <cstdint>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>

#include "common/tensor.h"

namespace mha {
namespace bench {

// (rows, cols) of N(0, scale^2) draws.
inline Tensor2 random_matrix(std::size_t rows, std::size_t cols, std::uint32_t seed,
                             float scale = 1.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  Tensor2 m = Tensor2::from_shape({rows, cols});
  for (float& x : m) x = normal(gen);
  return m;
}

// (n, rows, cols) of N(0, scale^2) draws.
inline Tensor3 random_heads(std::size_t n, std::size_t rows, std::size_t cols,
                            std::uint32_t seed, float scale = 1.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  Tensor3 m = Tensor3::from_shape({n, rows, cols});
  for (float& x : m) x = normal(gen);
  return m;
}

// Writes t's floats, raw and row-major, to `path` (a script reads them with
// numpy.fromfile).
inline void write_f32(const std::string& path, const Tensor2& t) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(t.data()),
            static_cast<std::streamsize>(t.size() * sizeof(float)));
  if (!out) throw std::runtime_error("cannot write " + path);
}

// Multiply-adds counted as 2 FLOPs. T tokens, d = d_model.
//   scores q k^T and the weighted sum p v, over every head together:
//   2 * T * S * d each, whatever the head count.
inline double attention_flops(double T, double S, double d) { return 4.0 * T * S * d; }
//   one (T, in) @ (in, out) product.
inline double matmul_flops(double T, double in, double out) { return 2.0 * T * in * out; }

}  // namespace bench
}  // namespace mha

#endif  // MHA_BENCH_BENCH_INPUTS_H_
