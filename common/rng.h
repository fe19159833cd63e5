// NumpyRng: NumPy's default random stream, reproduced bit for bit in C++.
//
// Our NumPy version of the labs (docs/numpy/mha.py) initialises every weight with
//
//   rng = np.random.default_rng(seed)
//   z = rng.standard_normal((rows, cols))
//   W = z.astype(np.float32) * np.float32(1 / np.sqrt(fan_in))
//
// (the scale computed in double and rounded to float once, as NumPy 1.x does),
// so that its printed numbers are reproducible. NumpyRng replays exactly the
// same numbers, which lets a C++ lab start from the very weights the NumPy
// version used and compare results element by element.
//
// Under the hood it is the same three pieces NumPy chains together:
//
//   1. SeedSequence(seed)   hashes the integer seed into a 128-bit pool and
//                           expands it into four 64-bit words of state.
//   2. PCG64                a 128-bit linear congruential generator with the
//                           XSL-RR output permutation; one 64-bit word per
//                           step.
//   3. Ziggurat normal      NumPy's `random_standard_normal`: usually one
//                           64-bit word per draw, occasionally more.
//
// Example:
//
//   mha::NumpyRng rng(42);
//   double z = rng.standard_normal();   // default_rng(42).standard_normal()
//   mha::Tensor2 w_q = rng.normal_matrix(16, 16, 16);  // continues on
//   double u = rng.random();            // ... .random(), in [0, 1)
//
// Consecutive calls continue one stream, just as consecutive calls on one
// NumPy Generator do. The class is not thread-safe: give each thread its own.
#ifndef MHA_COMMON_RNG_H_
#define MHA_COMMON_RNG_H_

#include <cstddef>
#include <cstdint>

#include "common/tensor.h"

namespace mha {

class NumpyRng {
 public:
  // Equivalent to np.random.default_rng(seed). Every 64-bit seed is valid.
  explicit NumpyRng(std::uint64_t seed);

  // The next draw from N(0, 1); equals the next element of
  // Generator.standard_normal() bit for bit.
  double standard_normal();

  // A (rows, cols) float32 weight matrix with variance 1 / fan_in: the next
  // rows * cols draws z, in row-major order, each turned into
  // float(z) * float(1 / sqrt(fan_in)) with the product taken in float, as
  // NumPy 1.x does for the expression in the header comment.
  // Throws std::invalid_argument if rows, cols or fan_in is 0.
  Tensor2 normal_matrix(std::size_t rows, std::size_t cols, std::size_t fan_in);

  // The next uniform draw in [0, 1); equals the next Generator.random() bit
  // for bit: the top 53 bits of one 64-bit word times 2^-53,
  // ((next_uint64 >> 11) * 2^-53). It continues the same stream as
  // standard_normal(), as both do on one NumPy Generator. Lab 15's sampling
  // draws its u with it.
  double random();

 private:
  // PCG64 step: advance the LCG, then permute the new state into 64 bits.
  std::uint64_t next_uint64();
  // A uniform double in [0, 1) built from the top 53 bits of next_uint64().
  double next_double();

  unsigned __int128 state_;      // LCG state.
  unsigned __int128 increment_;  // LCG increment; always odd.
};

}  // namespace mha

#endif  // MHA_COMMON_RNG_H_
