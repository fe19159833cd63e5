// Lab 7: head analysis. This is the file you edit.
// Read docs/07_head_analysis.md first; the header labs/07_head_analysis/head_analysis.h says what each function must do.
// Check your work with:  bazel test //labs/07_head_analysis/...
#include "labs/07_head_analysis/head_analysis.h"

#include <stdexcept>

namespace mha {

std::vector<HeadProfile> profile_heads(const Tensor3& weights) {
  throw std::logic_error(
      "lab 7: profile_heads is not implemented yet, see docs/07_head_analysis.md");
}

float induction_score(const Tensor2& head_weights, int block_len) {
  throw std::logic_error(
      "lab 7: induction_score is not implemented yet, see docs/07_head_analysis.md");
}

std::string classify_head(const HeadProfile& profile, float induction) {
  throw std::logic_error(
      "lab 7: classify_head is not implemented yet, see docs/07_head_analysis.md");
}

}  // namespace mha
