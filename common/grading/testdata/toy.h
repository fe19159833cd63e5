// A toy interface for common/grading/remote_test.cc: functions and a class whose
// implementation runs in a separate server process.
#ifndef MHA_COMMON_TESTDATA_TOY_H_
#define MHA_COMMON_TESTDATA_TOY_H_

#include <optional>
#include <string>
#include <vector>

#include "common/tensor.h"

namespace mha {
namespace toy {

int add(int a, int b);
Tensor2 twice(const Tensor2& x);
std::vector<bool> flip(const std::vector<bool>& bits);
std::optional<Tensor2> maybe(const std::optional<Tensor2>& x);
std::string shout(const std::string& s);   // throws std::invalid_argument on ""
void crash();                              // a null pointer write
void spin();                               // never returns
void throw_int();                          // throws 42
int call_back(int x);                      // helper(x) + 1, helper served by the caller
int helper(int x);                         // lives in the test process
Tensor2 helper_rows(int rows, int cols);     // lives in the test process: (rows, cols) of 1
// helper_rows(rows, cols) called back `calls` times; the sum of every element.
float call_back_many(int calls, int rows, int cols);
// Calls helper_rows(rows, cols) back by writing the call on its answer pipe
// itself, then never reads the reply (a learner that blocks the trusted side).
void call_back_and_never_read(int rows, int cols);

class Counter {
 public:
  explicit Counter(int start);   // throws std::invalid_argument when start < 0
  int next();                    // returns the value, then adds one
  int peek() const;
  void bump_then_throw();        // adds one, then throws std::out_of_range
  const Counter* other = nullptr;

 private:
  friend struct remote::Access;
  Counter() = default;
  int value_ = 0;
};

}  // namespace toy
}  // namespace mha

#endif  // MHA_COMMON_TESTDATA_TOY_H_
