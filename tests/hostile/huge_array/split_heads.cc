// hostile to the grader: a 1 GiB initialised array, which would make the
// compiler write a 1 GiB object file (and fill the disk across a roster).
#include "labs/01_split_heads/split_heads.h"

#include <stdexcept>

__attribute__((used)) static char huge[1u << 30] = {1};

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  (void)x;
  (void)n_heads;
  throw std::logic_error("lab 1: split_heads is not implemented yet, see docs/01_split_heads.md");
}

Tensor2 combine_heads(const Tensor3& heads) {
  (void)heads;
  throw std::logic_error("lab 1: combine_heads is not implemented yet, see docs/01_split_heads.md");
}

}  // namespace mha
