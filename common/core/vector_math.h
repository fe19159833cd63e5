// Loops over contiguous floats, vectorised with xsimd: the inner loops of the
// reference softmax (lab 2) and of the tiled attention kernel (lab 9), and
// erf and exp in double (lab 14's GELU). Each
// does what its one-line comment says, several lanes at a time; a plain loop
// gives the same numbers to within rounding.
//
// The number of lanes is chosen when the program runs, not when it is
// compiled: 16 with AVX-512, 8 with AVX2, otherwise whatever the build
// targets (4 with the x86-64 baseline, SSE2). A portable build (no -march,
// as instructors and Gradescope compile) is therefore as fast as a
// -march=native one on these loops. vector_math_isa() says which was chosen;
// MHA_VECTOR_ISA=baseline or MHA_VECTOR_ISA=avx2+fma in the environment
// forbids the faster ones (see vector_math_kernels.h).
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
// sum over i of x[i] * y[i], summed in lanes as sum_of.
float dot_of(const float* x, const float* y, std::size_t n);
// out[i] = exp(x[i] - shift), for a finite shift. exp(-inf) = 0; out may be x.
void exp_shifted(const float* x, float shift, float* out, std::size_t n);
// The same, and returns the sum of out (one pass instead of two).
float exp_shifted_sum(const float* x, float shift, float* out, std::size_t n);
// x[i] *= factor.
void scale_inplace(float* x, float factor, std::size_t n);
// x[i] += y[i] (an additive mask onto scores).
void add_inplace(float* x, const float* y, std::size_t n);

// In double, for values that must be computed in double and rounded to float
// once (lab 14's exact GELU): out[i] = erf(x[i]) and out[i] = exp(x[i]).
// exp is within 2 units in the last place of std::exp; erf within 1e-14
// relative of std::erf (xsimd's approximation: up to ~70 units in the last
// place near |x| = 2.2). Rounded to float they are std's float but for a few
// in a billion: GELU computed with this erf differs from GELU with std::erf
// on 196 of the 2.2e9 floats in [-10, 10], each by one float ulp (measured
// by bench/erf_accuracy.cc, in the instructors' repository). erf(+-inf) = +-1,
// exp(-inf) = 0. out may be x.
// Half as many lanes as the float loops.
void erf_of(const double* x, double* out, std::size_t n);
void exp_of(const double* x, double* out, std::size_t n);

// The instruction set the functions above run with: "avx512", "avx2+fma"
// or "baseline" (the build's own target flags).
const char* vector_math_isa();

}  // namespace mha

#endif  // MHA_COMMON_VECTOR_MATH_H_
