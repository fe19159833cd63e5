// Lab 4: causal and padding masks. This is the file you edit.
// Read docs/04_causal_mask.md first; the header labs/04_causal_mask/causal_mask.h says what each function must do.
// Check your work with:  bazel test //labs/04_causal_mask/...
#include "labs/04_causal_mask/causal_mask.h"

#include <stdexcept>

namespace mha {

Tensor2 causal_mask(int T) {
  // TODO: (T, T), 0 on and below the diagonal, -inf above it
  // (std::numeric_limits<float>::infinity() from <limits>).
  throw std::logic_error("lab 4: causal_mask(T) is not implemented yet, see docs/04_causal_mask.md");
}

Tensor2 causal_mask(int T, int S) {
  // TODO: query i sits at absolute position S - T + i.
  throw std::logic_error(
      "lab 4: causal_mask(T, S) is not implemented yet, see docs/04_causal_mask.md");
}

Tensor2 padding_mask(int T, const std::vector<bool>& key_valid) {
  // TODO: a padded key is removed for every query: its whole column is -inf.
  throw std::logic_error("lab 4: padding_mask is not implemented yet, see docs/04_causal_mask.md");
}

Tensor2 combine_masks(const Tensor2& a, const Tensor2& b) {
  // TODO: check the shapes match, then add.
  throw std::logic_error("lab 4: combine_masks is not implemented yet, see docs/04_causal_mask.md");
}

}  // namespace mha
