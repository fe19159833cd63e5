// Lab 11: Rotary position embeddings (RoPE). This is the file you edit.
// Read docs/11_rotary_embeddings.md first; the header labs/11_rotary_embeddings/rotary_embeddings.h says what each function must do.
// Check your work with:  bazel test //labs/11_rotary_embeddings/...
#include "labs/11_rotary_embeddings/rotary_embeddings.h"

#include <stdexcept>

namespace mha {

Tensor2 rotary_embeddings(const Tensor2& x) {
  // TODO:
  // 1. Reject an empty x with std::invalid_argument naming its shape.
  // 2. Return 2 * x, a (T, d) tensor.
  (void)x;
  throw std::logic_error("lab 11: rotary_embeddings is not implemented yet, see docs/11_rotary_embeddings.md");
}

}  // namespace mha
