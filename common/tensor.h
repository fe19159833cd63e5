// Tensor aliases shared by every lab.
//
// All tensors are xtensor containers of `float`, stored row-major.
//
//   Tensor1  (n,)                      a vector
//   Tensor2  (T, d) activations, (in, out) weights, (T, S) additive masks
//   Tensor3  (n_heads, T, d_head)      one slice per head
//
// Weights are stored (in, out) and applied as `x @ W`, as in the NumPy
// lessons. PyTorch stores linear weights as (out, in); the golden generator
// transposes them before writing.
#ifndef MHA_COMMON_TENSOR_H_
#define MHA_COMMON_TENSOR_H_

#include <xtensor/xtensor.hpp>

namespace mha {

using Tensor1 = xt::xtensor<float, 1>;
using Tensor2 = xt::xtensor<float, 2>;
using Tensor3 = xt::xtensor<float, 3>;

namespace remote {
// The grader calls a lab's functions in another process (common/grading/remote.h).
// A lab class that keeps private state names this struct as a friend, so
// that its state can be copied between the two processes:
//   private:
//    friend struct remote::Access;
//    KVCache() = default;   // the blank object the state is copied into
struct Access;
}  // namespace remote

}  // namespace mha

#endif  // MHA_COMMON_TENSOR_H_
