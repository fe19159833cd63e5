// An independent reference for lab 12's hidden tests: the GQA and MLA
// forwards written plainly in double precision, and their gradients by
// central differences. Nothing here is shared with the solution.
#ifndef MHA_TESTS_12_VARIANT_BACKWARD_REFERENCE_H_
#define MHA_TESTS_12_VARIANT_BACKWARD_REFERENCE_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include <xtensor/xtensor.hpp>

namespace mha {
namespace reference {

using D2 = xt::xtensor<double, 2>;

// The finite-difference step: central differences are exact to about step^2.
constexpr double kStep = 1e-5;

// y = lab 5's layer: query head h reads kv head h / (n_heads / n_kv_heads).
D2 GqaForward(const D2& x, const D2& W_Q, const D2& W_K, const D2& W_V, const D2& W_O,
              int n_heads, int n_kv_heads, const std::optional<D2>& mask);
// y = lab 6's naive layer: c = x W_DKV, K = c W_UK, V = c W_UV.
D2 MlaForward(const D2& x, const D2& W_Q, const D2& W_DKV, const D2& W_UK, const D2& W_UV,
              const D2& W_O, int n_heads, const std::optional<D2>& mask);

// sum(a * b) over every element.
double SumOfProducts(const D2& a, const D2& b);

// d objective / d param, one element at a time (objective() reads param).
D2 CentralDifferences(D2& param, const std::function<double()>& objective);

}  // namespace reference
}  // namespace mha

#endif  // MHA_TESTS_12_VARIANT_BACKWARD_REFERENCE_H_
