// The loops of vector_math.h compiled with -mavx512f -mavx512dq -mfma
// (common/core/BUILD): 16 floats per vector. vector_math.cc calls them only on a
// CPU (and an operating system) with AVX-512F, AVX-512DQ and FMA. (DQ too:
// xsimd 8's horizontal sum of an avx512f batch uses a DQ instruction.) See vector_math_kernels.inc.
#if defined(__x86_64__)
#if !defined(__AVX512F__) || !defined(__AVX512DQ__) || !defined(__FMA__)
#error "compile vector_math_avx512.cc with -mavx512f -mavx512dq -mfma"
#endif
#define MHA_VECTOR_KERNELS avx512_kernels
#define MHA_VECTOR_ARCH xsimd::avx512f
#define MHA_VECTOR_ISA_NAME "avx512"
#include "common/core/vector_math_kernels.inc"
#endif
