// The test process's side of the grader's result channel (tools/lab/).
//
// Outside grading this does nothing: tests behave exactly as with gtest_main.
// When the grader runs a hidden test binary it sets MHA_GRADING=<r>:<w> and
// passes two inherited pipe file descriptors: <r> carries a fresh random
// secret (read once, then closed, before any static constructor of the code
// under test runs; see the .preinit_array entry in grading.cc) and <w>
// carries results back. Every line written to <w> is
//
//     KIND \t SEQ \t FIELD... \t HMAC-SHA256(secret, "KIND \t SEQ \t FIELD...")
//
// with SEQ counting lines from 0, so the grader can tell the harness's lines
// from anything else written there and notices missing, reordered or
// replayed lines. The grader never trusts the process's exit status, its
// output or any file it writes.
//
// Golden comparisons are not judged in the test process at all while
// grading: MatchesGolden (common/testing.cc) sends the actual values with
// RecordComparison and succeeds; the grader compares them with the golden
// files, which the test process cannot see.
#ifndef MHA_COMMON_GRADING_H_
#define MHA_COMMON_GRADING_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace mha {
namespace grading {

// True when the grader started this process and the secret was received.
bool Active();

// The --gtest_filter the grader passed on the command line, captured before
// any code under test ran (empty when none).
const std::string& FilterFromGrader();

// Sends one authenticated line. Fields may contain any bytes; they are
// escaped (\\, \t, \n, \r) before they are authenticated.
void Send(const std::string& kind, const std::vector<std::string>& fields);

// The full name ("Suite.Test") of the running test, or "" outside a test.
std::string CurrentTestName();

// Hooks used by common/testing.cc while grading.
void RecordLoad(const std::string& path);
void RecordComparison(const std::string& golden, const std::vector<std::size_t>& shape,
                      const float* data, float atol, float rtol,
                      const std::vector<std::string>& axis_names,
                      const std::vector<std::pair<std::string, std::string>>& mistakes);

// HMAC-SHA256 as lowercase hex (exposed for common/grading_test.cc).
std::string HmacSha256Hex(const std::string& key, const std::string& message);

}  // namespace grading
}  // namespace mha

#endif  // MHA_COMMON_GRADING_H_
