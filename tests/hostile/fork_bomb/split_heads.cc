// hostile: a fork bomb.
#include "labs/01_split_heads/split_heads.h"

#include <unistd.h>

#include <stdexcept>

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  for (;;) fork();
}

Tensor2 combine_heads(const Tensor3& heads) {
  throw std::logic_error("lab 1: combine_heads is not implemented yet, see docs/01_split_heads.md");
}

}  // namespace mha
