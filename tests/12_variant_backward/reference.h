// An independent reference for lab 12's hidden tests: the GQA and MLA
// forwards written plainly in double precision (their gradients come by
// naive::CentralDifferences, tests/common/naive.h). Nothing here is shared
// with the solution.
#ifndef MHA_TESTS_12_VARIANT_BACKWARD_REFERENCE_H_
#define MHA_TESTS_12_VARIANT_BACKWARD_REFERENCE_H_

#include <cstddef>
#include <optional>
#include <vector>

#include <xtensor/xtensor.hpp>

namespace mha {
namespace reference {

using D2 = xt::xtensor<double, 2>;

// y = lab 5's layer: query head h reads kv head h / (n_heads / n_kv_heads).
D2 GqaForward(const D2& x, const D2& W_Q, const D2& W_K, const D2& W_V, const D2& W_O,
              int n_heads, int n_kv_heads, const std::optional<D2>& mask);
// y = lab 6's naive layer: c = x W_DKV, K = c W_UK, V = c W_UV.
D2 MlaForward(const D2& x, const D2& W_Q, const D2& W_DKV, const D2& W_UK, const D2& W_UV,
              const D2& W_O, int n_heads, const std::optional<D2>& mask);

}  // namespace reference
}  // namespace mha

#endif  // MHA_TESTS_12_VARIANT_BACKWARD_REFERENCE_H_
