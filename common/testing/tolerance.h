// The one tolerance policy of the suite, used by public and hidden tests alike.
//
// Every comparison of float32 results goes through one of these, chosen by
// the last operation that produced the numbers. An element passes when
//
//     |actual - expected| <= atol + rtol * |expected|
//
// (the same rule as numpy.allclose). The bounds are a few hundred float32
// ulps of the values the labs produce (|x| up to about 10): loose enough for
// a different summation order or a BLAS kernel, tight enough that every
// classic mistake in docs/ (a wrong scale, a transpose, a missing max
// subtraction) fails by orders of magnitude.
#ifndef MHA_COMMON_TOLERANCE_H_
#define MHA_COMMON_TOLERANCE_H_

namespace mha {
namespace testing {

struct Tolerance {
  float atol;
  float rtol;
};

// Pure data movement (split/combine heads, repeat_kv, masks): bit for bit.
inline constexpr Tolerance kExact{0.0f, 0.0f};
// One softmax or one reduction over a row (softmax_rows, head profiles).
inline constexpr Tolerance kRowOp{1e-6f, 1e-5f};
// Scaled dot-product attention: two contractions around a softmax.
inline constexpr Tolerance kAttention{1e-5f, 1e-4f};
// A whole layer: projections, attention and W_O (labs 3, 5 and 6), and two
// mathematically equal orderings of the same layer (naive vs absorbed MLA).
inline constexpr Tolerance kLayer{5e-5f, 5e-4f};
// A transformer block (lab 14): two LayerNorms, rotary attention and the FFN
// in a residual stream, forward and backward.
inline constexpr Tolerance kBlock{1e-4f, 1e-3f};
// A whole model (lab 15): an embedding, a stack of blocks, a LayerNorm and a
// tied output layer, forward and backward (the mean loss's gradients). The
// blocks' bound: the reference solution's worst error is 1.6e-6 (logits of
// the 103,680-parameter model), under 1% of it.
inline constexpr Tolerance kModel{1e-4f, 1e-3f};
// LayerNorm on rows offset by 1e3 (lab 14): x itself holds only ~6e-5 of
// absolute precision there, and the mean carries that into every output.
inline constexpr Tolerance kOffsetRows{1e-3f, 1e-3f};

}  // namespace testing
}  // namespace mha

#endif  // MHA_COMMON_TOLERANCE_H_
