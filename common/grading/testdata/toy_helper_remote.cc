// toy::helper and toy::helper_rows run in the toy reference process; the server calls back for them.
#include "common/grading/remote.h"
#include "common/grading/testdata/toy.h"

namespace mha {
namespace toy {
MHA_REMOTE_FUNCTION(int, helper, (int x), (x))
MHA_REMOTE_FUNCTION(Tensor2, helper_rows, (int rows, int cols), (rows, cols))
}  // namespace toy
}  // namespace mha
