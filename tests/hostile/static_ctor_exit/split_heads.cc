// hostile: a static constructor ends the test process with status 0 before
// any test runs (Bazel 4.2 reports such a test as PASSED).
#include "labs/01_split_heads/split_heads.h"

#include <stdexcept>

#include <cstdlib>

namespace {
struct ExitNow {
  ExitNow() { std::exit(0); }
} exit_now;
}  // namespace

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  throw std::logic_error("lab 1: split_heads is not implemented yet, see docs/01_split_heads.md");
}

Tensor2 combine_heads(const Tensor3& heads) {
  throw std::logic_error("lab 1: combine_heads is not implemented yet, see docs/01_split_heads.md");
}

}  // namespace mha

