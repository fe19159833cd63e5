// How lab 12's types travel between processes (common/grading/remote.h).
#ifndef MHA_TESTS_12_VARIANT_BACKWARD_REMOTE_H_
#define MHA_TESTS_12_VARIANT_BACKWARD_REMOTE_H_

#include "common/grading/remote.h"
#include "labs/12_variant_backward/variant_backward.h"
#include "tests/05_grouped_query_attention/remote.h"
#include "tests/06_latent_attention/remote.h"

namespace mha {
MHA_REMOTE_STATE(GqaGrads, dx, dW_Q, dW_K, dW_V, dW_O)
MHA_REMOTE_STATE(MlaGrads, dx, dW_Q, dW_DKV, dW_UK, dW_UV, dW_O)
}  // namespace mha

#endif  // MHA_TESTS_12_VARIANT_BACKWARD_REMOTE_H_
