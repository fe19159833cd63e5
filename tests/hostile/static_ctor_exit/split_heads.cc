// hostile: a static constructor ends the test process with status 0 before
// any test runs (Bazel 4.2 reports such a test as PASSED).
//@ after includes
#include <cstdlib>

namespace {
struct ExitNow {
  ExitNow() { std::exit(0); }
} exit_now;
}  // namespace
