// Lab 7: head analysis. This is the file you edit.
// Read docs/07_head_analysis.md first; the header labs/07_head_analysis/head_analysis.h says what each function must do.
// Check your work with:  bazel test //labs/07_head_analysis/...
#include "labs/07_head_analysis/head_analysis.h"

#include <stdexcept>

namespace mha {

std::vector<HeadProfile> profile_heads(const Tensor3& weights) {
  // TODO: check the shape is (H, T, T); per head, average over the rows i:
  // entropy -sum p ln p (natural log, skip p == 0), sum p |i - j|, p[i][i],
  // p[i][0], and p[i][i-1] over i >= 1 only (0 when T == 1).
  throw std::logic_error(
      "lab 7: profile_heads is not implemented yet, see docs/07_head_analysis.md");
}

float induction_score(const Tensor2& head_weights, int block_len) {
  // TODO: check block_len > 0 and a (2L, 2L) shape; mean over i in [L, 2L)
  // of head_weights(i, i - L + 1).
  throw std::logic_error(
      "lab 7: induction_score is not implemented yet, see docs/07_head_analysis.md");
}

std::string classify_head(const HeadProfile& profile, float induction) {
  // TODO: the header's six rules, in order, with >= and <=; the first that holds wins.
  throw std::logic_error(
      "lab 7: classify_head is not implemented yet, see docs/07_head_analysis.md");
}

}  // namespace mha
