// How lab 2's types travel between processes (common/grading/remote.h).
#ifndef MHA_TESTS_02_BATCHED_ATTENTION_REMOTE_H_
#define MHA_TESTS_02_BATCHED_ATTENTION_REMOTE_H_

#include "common/grading/remote.h"
#include "labs/02_batched_attention/attention.h"

namespace mha {
MHA_REMOTE_STATE(AttentionResult, output, weights)
}  // namespace mha

#endif  // MHA_TESTS_02_BATCHED_ATTENTION_REMOTE_H_
