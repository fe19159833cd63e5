// How lab 7's types travel between processes (common/grading/remote.h).
#ifndef MHA_TESTS_07_HEAD_ANALYSIS_REMOTE_H_
#define MHA_TESTS_07_HEAD_ANALYSIS_REMOTE_H_

#include "common/grading/remote.h"
#include "labs/07_head_analysis/head_analysis.h"

namespace mha {
MHA_REMOTE_STATE(HeadProfile, entropy, mean_distance, previous_token, self, first_token)
}  // namespace mha

#endif  // MHA_TESTS_07_HEAD_ANALYSIS_REMOTE_H_
