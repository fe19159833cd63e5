// hostile to the grader: the compiler opens a terminal device and waits for
// input that never comes (no CPU used, so a CPU limit never fires). The
// include goes through a macro so that a text scan of #include lines does
// not see the path. Stopped by the compile's wall-clock limit.
#include "labs/01_split_heads/split_heads.h"

#include <stdexcept>

#define MHA_DEVICE "/dev/ptmx"
#include MHA_DEVICE

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
