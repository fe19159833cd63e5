// The loops of vector_math.h compiled with the build's own flags: SSE2 on a
// default x86-64 build, NEON on arm64, whatever -march says otherwise. Every
// CPU the build targets can run them. See vector_math_kernels.inc.
#define MHA_VECTOR_KERNELS baseline_kernels
#define MHA_VECTOR_ARCH xsimd::default_arch  // the widest the flags allow
#define MHA_VECTOR_ISA_NAME "baseline"
#include "common/core/vector_math_kernels.inc"
