// Lab 4: causal and padding masks.
//
// Masks are additive, shape (T, S) (queries x keys): 0 keeps a score, -inf
// removes it before the softmax. One mask is shared by every head.
//
// A causal mask lets query i see keys j <= i: the diagonal is kept (a token
// may attend to itself), the strict upper triangle is -inf. With a KV cache
// the T new queries are the LAST T of S positions, so the mask is aligned to
// the bottom-right corner: query i sits at absolute position S - T + i. A
// top-left aligned mask would hide most of the cache from the new tokens.
//
// Bad arguments (T or S <= 0, S < T, an empty key_valid, masks of different
// shapes) throw std::invalid_argument naming the offending values.
//
// Lesson: docs/04_causal_mask.md.
#ifndef MHA_LABS_04_CAUSAL_MASK_CAUSAL_MASK_H_
#define MHA_LABS_04_CAUSAL_MASK_CAUSAL_MASK_H_

#include <vector>

#include "common/tensor.h"

namespace mha {

// (T, T): 0 where key j <= query i, -inf where j > i. The diagonal is kept.
Tensor2 causal_mask(int T);

// (T, S), S >= T: the T queries are the last T of S positions (a KV cache),
// so query i sits at absolute position S - T + i and sees keys j <= S - T + i.
Tensor2 causal_mask(int T, int S);

// (T, S): -inf in every column j with key_valid[j] == false, 0 elsewhere;
// S = key_valid.size().
Tensor2 padding_mask(int T, const std::vector<bool>& key_valid);

// Elementwise sum of masks of equal shape (-inf wins over 0).
Tensor2 combine_masks(const Tensor2& a, const Tensor2& b);

}  // namespace mha

#endif  // MHA_LABS_04_CAUSAL_MASK_CAUSAL_MASK_H_
