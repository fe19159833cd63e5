// Lab 12: Backward through shared keys and values.
//
// The header comment is the specification learners read: say what each
// function takes and returns, with shapes, and what it throws.
//
// (Template from ./lab new: variant_backward(x) doubles every element. Replace it
// with the lab's functions, keeping the layout of the lab's folders.)
#ifndef MHA_LABS_12_VARIANT_BACKWARD_VARIANT_BACKWARD_H_
#define MHA_LABS_12_VARIANT_BACKWARD_VARIANT_BACKWARD_H_

#include "common/tensor.h"

namespace mha {

// (T, d) -> (T, d): 2 * x. Throws std::invalid_argument when x is empty,
// naming its shape.
Tensor2 variant_backward(const Tensor2& x);

}  // namespace mha

#endif  // MHA_LABS_12_VARIANT_BACKWARD_VARIANT_BACKWARD_H_
