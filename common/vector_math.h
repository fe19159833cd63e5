// Loops over contiguous floats, vectorised with xsimd: the inner loops of the
// reference softmax. Each does what its one-line comment says, several lanes
// at a time (4 with SSE2, 8 with AVX2, 16 with AVX-512, chosen when
// compiled); a plain loop gives the same numbers to within rounding.
//
// Why bother: exp and the row reductions are most of softmax's time, and a
// compiler will not vectorise them by itself without -ffast-math, which would
// also let it assume that -inf (our mask) never occurs.
#ifndef MHA_COMMON_VECTOR_MATH_H_
#define MHA_COMMON_VECTOR_MATH_H_

#include <cstddef>

namespace mha {

// max over i of x[i]; -inf when n == 0.
float max_of(const float* x, std::size_t n);
// sum over i of x[i] (summed in lanes, so the last bits may differ from a
// left-to-right loop).
float sum_of(const float* x, std::size_t n);
// out[i] = exp(x[i] - shift). exp(-inf) = 0; out may be x.
void exp_shifted(const float* x, float shift, float* out, std::size_t n);
// x[i] *= factor.
void scale_inplace(float* x, float factor, std::size_t n);

}  // namespace mha

#endif  // MHA_COMMON_VECTOR_MATH_H_
