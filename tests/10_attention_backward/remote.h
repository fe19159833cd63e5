// How lab 10's types travel between processes (common/grading/remote.h).
#ifndef MHA_TESTS_10_ATTENTION_BACKWARD_REMOTE_H_
#define MHA_TESTS_10_ATTENTION_BACKWARD_REMOTE_H_

#include "common/grading/remote.h"
#include "labs/10_attention_backward/attention_backward.h"
#include "tests/03_output_projection/remote.h"

namespace mha {
MHA_REMOTE_STATE(AttentionGrads, dq, dk, dv)
MHA_REMOTE_STATE(MhaGrads, dx, dW_Q, dW_K, dW_V, dW_O)
}  // namespace mha

#endif  // MHA_TESTS_10_ATTENTION_BACKWARD_REMOTE_H_
