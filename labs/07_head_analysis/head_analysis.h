// Lab 7: what do the heads do? Summary statistics of attention patterns.
//
// Input: the (H, T, T) attention weights of one layer, as returned by
// MultiHeadAttention::attend(x, mask).weights; row i of head h is the
// distribution p_i over keys j that query i attends to.
//
// Each head is summarised by a HeadProfile, then labelled by classify_head.
// Typical patterns: a previous-token head puts its mass on j = i - 1, a
// self head on j = i, a first-token ("sink") head on j = 0, a local head
// near the diagonal, and an induction head, on a sequence that repeats,
// attends to the token that followed the previous occurrence of the current
// token. "diffuse" is what is left when no rule holds: no position gets half
// the mass on average and the mean distance exceeds 2 tokens.
//
// The labels read positions only; entropy is reported but no rule uses it.
// So a sharp head that always looks three tokens back (entropy 0) is
// "diffuse", and a head that spreads its weight evenly over the causal keys
// is labelled by the sequence length alone: "self" for T = 1, 3 and 4,
// "previous-token" for T = 2, "local" for T = 5 to 9 (mean distance
// (T - 1) / 4 <= 2) and "diffuse" from T = 10 on.
//
// Bad arguments (weights that are not (H, T, T) with H, T > 0; a
// head_weights that is not (2L, 2L) for block_len L > 0) throw
// std::invalid_argument naming the offending values.
//
// Lesson: docs/07_head_analysis.md.
#ifndef MHA_LABS_07_HEAD_ANALYSIS_HEAD_ANALYSIS_H_
#define MHA_LABS_07_HEAD_ANALYSIS_HEAD_ANALYSIS_H_

#include <string>
#include <vector>

#include "common/tensor.h"

namespace mha {

struct HeadProfile {
  float entropy;         // mean over queries i of -sum_j p_ij ln p_ij (nats; 0 ln 0 = 0)
  float mean_distance;   // mean over queries i of sum_j p_ij |i - j|
  float previous_token;  // mean over i >= 1 of p_{i,i-1}; 0 when T == 1
  float self;            // mean over i of p_{i,i}
  float first_token;     // mean over i of p_{i,0}
};

// weights: (H, T, T) from MultiHeadAttention::attend; one profile per head.
std::vector<HeadProfile> profile_heads(const Tensor3& weights);

// One head's (2L, 2L) weights on a sequence whose second half repeats the
// first: mean over i in [L, 2L) of p_{i, i-L+1} (attention to the token that
// followed the previous occurrence of the current token).
float induction_score(const Tensor2& head_weights, int block_len);

// A short label per head; the first rule that holds wins:
//   induction >= 0.5 -> "induction";  previous_token >= 0.5 -> "previous-token";
//   self >= 0.5 -> "self";  first_token >= 0.5 -> "first-token";
//   mean_distance <= 2.0 -> "local";  otherwise "diffuse".
std::string classify_head(const HeadProfile& profile, float induction = 0.0f);

}  // namespace mha

#endif  // MHA_LABS_07_HEAD_ANALYSIS_HEAD_ANALYSIS_H_
