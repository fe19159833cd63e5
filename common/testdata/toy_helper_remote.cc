// toy::helper runs in the test process; the server calls back for it.
#include "common/remote.h"
#include "common/testdata/toy.h"

namespace mha {
namespace toy {
MHA_REMOTE_FUNCTION(int, helper, (int x), (x))
}  // namespace toy
}  // namespace mha
