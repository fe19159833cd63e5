// hostile: split_heads is right; combine_heads ends the process with status
// 0 in the middle of a test (Bazel 4.2 reports such a test as PASSED).
//@ after includes
#include <cstdlib>
//@ instead of combine_heads
Tensor2 combine_heads(const Tensor3& heads) { std::exit(0); }
