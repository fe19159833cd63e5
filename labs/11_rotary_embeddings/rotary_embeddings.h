// Lab 11: Rotary position embeddings (RoPE).
//
// The header comment is the specification learners read: say what each
// function takes and returns, with shapes, and what it throws.
//
// (Template from ./lab new: rotary_embeddings(x) doubles every element. Replace it
// with the lab's functions, keeping the layout of the lab's folders.)
#ifndef MHA_LABS_11_ROTARY_EMBEDDINGS_ROTARY_EMBEDDINGS_H_
#define MHA_LABS_11_ROTARY_EMBEDDINGS_ROTARY_EMBEDDINGS_H_

#include "common/tensor.h"

namespace mha {

// (T, d) -> (T, d): 2 * x. Throws std::invalid_argument when x is empty,
// naming its shape.
Tensor2 rotary_embeddings(const Tensor2& x);

}  // namespace mha

#endif  // MHA_LABS_11_ROTARY_EMBEDDINGS_ROTARY_EMBEDDINGS_H_
