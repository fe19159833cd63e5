// Helpers of lab 15's tests: the public tests here and the grading tests (in
// the instructors' repository) use the same ones, so that both name a
// classic mistake in the same words.
#ifndef MHA_LABS_15_MINI_GPT_MINI_GPT_TEST_UTIL_H_
#define MHA_LABS_15_MINI_GPT_MINI_GPT_TEST_UTIL_H_

#include <gtest/gtest.h>

#include "common/testing/testing.h"
#include "labs/15_mini_gpt/mini_gpt.h"

namespace mha {
namespace testing {

// The classic mistakes of docs/15_mini_gpt.md.
inline const MistakeTable kMiniGptMistakes("docs/15_mini_gpt.md", {});

}  // namespace testing
}  // namespace mha

#endif  // MHA_LABS_15_MINI_GPT_MINI_GPT_TEST_UTIL_H_
