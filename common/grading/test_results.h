// The grader's result stream: each finished test's verdict, one JSON object
// per line, written to the file named by $MHA_RESULTS_FILE as the test ends:
//
//   {"name":"Suite.Test","passed":false,"ms":3,"message":"...",
//    "mistake":{"name":"no_scale","words":"scores not scaled by 1/sqrt(d_head)",
//               "doc":"docs/02_batched_attention.md","looks_like":true}}
//
// "mistake" is there when a failed part of the test named a classic mistake
// (common/testing/misconception.h): the first part's that diagnosed one ("looks
// like"), else the first part's that named one. The message keeps the
// sentence the terminal prints; the grader's reports read the field.
//
// Linked into the grader's test binaries (the <test>_remote targets of
// common/lab.bzl), which run in the trusted process: the learner's code runs
// in another process and never sees this file. Writing as tests finish means
// the verdicts of finished tests survive if the whole run is stopped at its
// time limit.
#ifndef MHA_COMMON_TEST_RESULTS_H_
#define MHA_COMMON_TEST_RESULTS_H_

#include <optional>
#include <string>

#include "common/testing/misconception.h"

namespace mha {

// One verdict as a line of the stream (with its final newline).
std::string VerdictLine(const std::string& name, bool passed, long long ms,
                        const std::string& message,
                        const std::optional<testing::Misconception>& mistake);

}  // namespace mha

#endif  // MHA_COMMON_TEST_RESULTS_H_
