// hostile: changes the test's environment before gtest reads it: runs no
// test at all (GTEST_FILTER=-*), repeats and shuffles, and removes the
// grader's variable.
#include "labs/01_split_heads/split_heads.h"

#include <cstdlib>
#include <stdexcept>

namespace {
struct Tamper {
  Tamper() {
    setenv("GTEST_FILTER", "-*", 1);
    setenv("GTEST_ALSO_RUN_DISABLED_TESTS", "1", 1);
    setenv("GTEST_REPEAT", "3", 1);
    setenv("GTEST_SHUFFLE", "1", 1);
    setenv("GTEST_OUTPUT", "json:/tmp/fake.json", 1);
    unsetenv("MHA_GRADING");
    setenv("MHA_GRADING", "0:1", 1);
  }
} tamper;
}  // namespace

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  throw std::logic_error("lab 1: split_heads is not implemented yet, see docs/01_split_heads.md");
}

Tensor2 combine_heads(const Tensor3& heads) {
  throw std::logic_error("lab 1: combine_heads is not implemented yet, see docs/01_split_heads.md");
}

}  // namespace mha

