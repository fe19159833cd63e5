// The toy interface's remote declarations (see common/grading/remote.h).
#include "common/grading/remote.h"
#include "common/grading/testdata/toy.h"

namespace mha {

MHA_REMOTE_STATE(toy::Counter, other, value_)

namespace toy {
MHA_REMOTE_FUNCTION(int, add, (int a, int b), (a, b))
MHA_REMOTE_FUNCTION(Tensor2, twice, (const Tensor2& x), (x))
MHA_REMOTE_FUNCTION(std::vector<bool>, flip, (const std::vector<bool>& bits), (bits))
MHA_REMOTE_FUNCTION(std::optional<Tensor2>, maybe, (const std::optional<Tensor2>& x), (x))
MHA_REMOTE_FUNCTION(std::string, shout, (const std::string& s), (s))
MHA_REMOTE_FUNCTION(void, crash, (), ())
MHA_REMOTE_FUNCTION(void, spin, (), ())
MHA_REMOTE_FUNCTION(void, throw_int, (), ())
MHA_REMOTE_FUNCTION(int, call_back, (int x), (x))
MHA_REMOTE_FUNCTION(float, call_back_many, (int calls, int rows, int cols), (calls, rows, cols))
MHA_REMOTE_FUNCTION(void, call_back_and_never_read, (int rows, int cols), (rows, cols))
MHA_REMOTE_CONSTRUCTOR(Counter, (int start), (start))
MHA_REMOTE_METHOD(Counter, int, next, (), ())
MHA_REMOTE_CONST_METHOD(Counter, int, peek, (), ())
MHA_REMOTE_METHOD(Counter, void, bump_then_throw, (), ())
}  // namespace toy
}  // namespace mha
