// Helpers of lab 14's tests: the public tests here and the grading tests (in
// the instructors' repository) use the same ones, so that both name a
// classic mistake in the same words.
#ifndef MHA_LABS_14_TRANSFORMER_BLOCK_TRANSFORMER_BLOCK_TEST_UTIL_H_
#define MHA_LABS_14_TRANSFORMER_BLOCK_TRANSFORMER_BLOCK_TEST_UTIL_H_

#include <string>

#include <gtest/gtest.h>

#include "common/testing/testing.h"
#include "labs/14_transformer_block/transformer_block.h"

namespace mha {
namespace testing {

// The classic mistakes of docs/14_transformer_block.md.
inline const MistakeTable kBlockMistakes("docs/14_transformer_block.md", {});

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_14_TRANSFORMER_BLOCK_TRANSFORMER_BLOCK_TEST_UTIL_H_
