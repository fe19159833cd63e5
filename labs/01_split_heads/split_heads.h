// Lab 1: split and combine heads.
//
// Multi-head attention runs H small attentions side by side. Each head works
// in its own d_head = d_model / H slice of the feature dimension: head h owns
// columns [h*d_head, (h+1)*d_head) of Q, K and V. These two functions move
// activations between the layer's layout and the per-head layout:
//
//   x      (T, d_model)            one row per token
//   heads  (n_heads, T, d_head)    one (T, d_head) matrix per head
//
// combine_heads is the exact inverse: combine_heads(split_heads(x, h)) == x.
// Both are pure data movement; no arithmetic happens here.
//
// Lesson: docs/01_split_heads.md.
#ifndef MHA_LABS_01_SPLIT_HEADS_SPLIT_HEADS_H_
#define MHA_LABS_01_SPLIT_HEADS_SPLIT_HEADS_H_

#include "common/tensor.h"

namespace mha {

// (T, d_model) -> (n_heads, T, d_head), d_head = d_model / n_heads.
// Head h holds columns [h*d_head, (h+1)*d_head) of x.
// Throws std::invalid_argument if n_heads <= 0 or d_model % n_heads != 0.
Tensor3 split_heads(const Tensor2& x, int n_heads);

// (n_heads, T, d_head) -> (T, n_heads*d_head); combine_heads(split_heads(x, h)) == x.
// Throws std::invalid_argument if there are no heads or d_head == 0.
Tensor2 combine_heads(const Tensor3& heads);

}  // namespace mha

#endif  // MHA_LABS_01_SPLIT_HEADS_SPLIT_HEADS_H_
