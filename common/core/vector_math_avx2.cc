// The loops of vector_math.h compiled with -mavx2 -mfma -mno-avx512f (common/core/BUILD): 8
// floats per vector. vector_math.cc calls them only on a CPU with AVX2 and
// FMA. See vector_math_kernels.inc.
#if defined(__x86_64__)
#if !defined(__AVX2__) || !defined(__FMA__)
#error "compile vector_math_avx2.cc with -mavx2 -mfma"
#endif
#define MHA_VECTOR_KERNELS avx2_kernels
#define MHA_VECTOR_ARCH xsimd::fma3<xsimd::avx2>
#define MHA_VECTOR_ISA_NAME "avx2+fma"
#include "common/core/vector_math_kernels.inc"
#endif
