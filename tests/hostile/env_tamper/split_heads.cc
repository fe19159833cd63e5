// hostile: changes the test's environment before gtest reads it: runs no
// test at all (GTEST_FILTER=-*), repeats and shuffles, and removes the
// grader's variable.
//@ after includes
#include <cstdlib>

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
