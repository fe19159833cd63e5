// Lab 9: tiled attention with an online softmax.
//
// The same attention as lab 2, without ever forming the (T, S) score matrix.
// Keys and values are visited in blocks of block_k keys, queries in blocks of
// block_q rows. Each query row i keeps three running quantities over the key
// blocks seen so far:
//
//   m_i  the largest score so far                 (starts at -inf)
//   l_i  sum_j exp(score_ij - m_i)                (starts at 0)
//   o_i  sum_j exp(score_ij - m_i) * v_j          (d_head numbers, start at 0)
//
// A new key block with scores s_ij (j in the block) updates them as
//
//   m_new = max(m_i, max_j s_ij)
//   l_i   = l_i * exp(m_i - m_new) + sum_j exp(s_ij - m_new)
//   o_i   = o_i * exp(m_i - m_new) + sum_j exp(s_ij - m_new) * v_j
//   m_i   = m_new
//
// and after the last block output_i = o_i / l_i. Rescaling by exp(m_i - m_new)
// when the max grows makes the result exactly the softmax of lab 2 (the
// online softmax behind FlashAttention). Extra memory is one block of scores
// and the running state: O(block_q * block_k + block_q * d_head) per head
// instead of O(T * S).
//
// Shapes: q (H, T, d_head); k and v (H, S, d_head); mask (T, S) additive
// (0 keeps a score, -inf removes it), one mask for every head; output
// (H, T, d_head). Scores are scaled by 1/sqrt(d_head). A query row that sees
// no key (its mask row is all -inf) gets an all-zero output row, never NaN,
// even when its first key blocks are fully masked and later ones are not.
//
// Block sizes are any integers >= 1. They need not divide T or S (the last
// block is shorter), and may exceed them (then one block holds everything).
//
// Bad arguments throw std::invalid_argument naming the offending values:
// block_q or block_k < 1 ("block_k=0 must be >= 1"), q, k, v or the mask of
// mismatched shapes, and for the causal versions T, S < 1 or S < T.
//
// Lesson: docs/09_flash_attention.md.
#ifndef MHA_LABS_09_FLASH_ATTENTION_FLASH_ATTENTION_H_
#define MHA_LABS_09_FLASH_ATTENTION_FLASH_ATTENTION_H_

#include <cstddef>
#include <optional>

#include "common/tensor.h"

namespace mha {

// q: (H, T, d_head); k, v: (H, S, d_head); mask: (T, S) additive or none.
// Returns the attention output (H, T, d_head), equal to
// attention_batched(q, k, v, mask).output within the tolerance policy, for any
// block sizes >= 1 (blocks need not divide T or S). A query row that sees no
// key gets a zero output row. Block sizes < 1 or mismatched shapes:
// std::invalid_argument.
Tensor3 attention_tiled(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                        const std::optional<Tensor2>& mask, int block_q, int block_k);

// Causal without a mask tensor (bottom-right aligned when S > T, as lab 4):
// key blocks that lie entirely in the future of a query block are skipped.
// Query i sits at absolute position S - T + i and sees keys j <= S - T + i,
// exactly as with lab 4's causal_mask(T, S); the result equals
// attention_tiled(q, k, v, causal_mask(T, S), block_q, block_k). Only the
// tiles that hold a future key need a mask, and it is computed from the
// indices. S < T: std::invalid_argument, as causal_mask(T, S).
Tensor3 attention_tiled_causal(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                               int block_q, int block_k);

// How many (query block, key block) tiles attention_tiled_causal computes for
// these sizes (the skipped ones not counted): for each query block, every key
// block up to and including the one that holds the last key its last query
// may see. T, S, block_q, block_k < 1 or S < T: std::invalid_argument.
std::size_t causal_tiles_computed(int T, int S, int block_q, int block_k);

}  // namespace mha

#endif  // MHA_LABS_09_FLASH_ATTENTION_FLASH_ATTENTION_H_
