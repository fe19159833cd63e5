// hostile: makes the compiler quote files outside the lab in its error
// messages (which reach the report): a root-only file through a system
// include path, and the suite's own files.
#include "labs/01_split_heads/split_heads.h"

#include <stdexcept>

#include </usr/include/../../etc/shadow>
#include "@CANARY@"

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
