// hostile: weak references (nm type w, which an older check ignored) to the
// grader's remote-call layer and to GoogleTest, used if present to report
// "passed" from inside the learner's process. In this design the learner's
// process holds no verdict: Invoke only sends a call back to the trusted
// process, which has no handler by that name.
#include "labs/01_split_heads/split_heads.h"

#include <stdexcept>
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

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  (void)x;
  (void)n_heads;
  if (&remote::Invoke != nullptr) remote::Invoke("PASSED SplitHeads.*", "");
  if (&testing::internal::AlwaysTrue != nullptr) testing::internal::AlwaysTrue();
  throw std::logic_error("lab 1: split_heads is not implemented yet, see docs/01_split_heads.md");
}

Tensor2 combine_heads(const Tensor3& heads) {
  (void)heads;
  if (&remote::Invoke != nullptr) remote::Invoke("PASSED CombineHeads.*", "");
  throw std::logic_error("lab 1: combine_heads is not implemented yet, see docs/01_split_heads.md");
}

}  // namespace mha
