// hostile: weak references (nm type w, which an older check ignored) to the
// grader's remote-call layer and to GoogleTest, used if present to report
// "passed" from inside the learner's process. In this design the learner's
// process holds no verdict: Invoke only sends a call back to the trusted
// process, which has no handler by that name.
//@ after includes
#include <string>

namespace mha {
namespace remote {
std::string Invoke(const std::string& name, const std::string& arguments) __attribute__((weak));
}  // namespace remote
}  // namespace mha
namespace testing {
namespace internal {
bool AlwaysTrue() __attribute__((weak));
}  // namespace internal
}  // namespace testing
//@ at the start of split_heads
  if (&remote::Invoke != nullptr) remote::Invoke("PASSED SplitHeads.*", "");
  if (&testing::internal::AlwaysTrue != nullptr) testing::internal::AlwaysTrue();
//@ at the start of combine_heads
  if (&remote::Invoke != nullptr) remote::Invoke("PASSED CombineHeads.*", "");
