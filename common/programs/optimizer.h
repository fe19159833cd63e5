// Optimisers for training with the gradients of lab 10: plain SGD and Adam.
//
//   mha::Adam adam(/*learning_rate=*/3e-3f);
//   for (...) {
//     ...  // compute gradients dW_Q, dW_K, ... of the loss
//     adam.step({mha::param(layer.W_Q, grads.dW_Q), mha::param(layer.W_K, grads.dW_K)});
//   }
//
// A step updates each parameter in place from its gradient. The list of
// parameters must be the same tensors, in the same order, at every step of
// one optimiser: Adam keeps two running averages per number, matched to the
// parameters by position. Everything runs in float, one element at a time,
// in a fixed order, so a training run is deterministic.
#ifndef MHA_COMMON_OPTIMIZER_H_
#define MHA_COMMON_OPTIMIZER_H_

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace mha {

// One parameter tensor and its gradient, seen as flat float arrays.
struct Param {
  float* value;
  const float* grad;
  std::size_t size;
};

// Pairs an xtensor parameter with its gradient of the same shape.
template <class T, class G>
Param param(T& value, const G& grad) {
  if (value.shape() != grad.shape()) {
    throw std::invalid_argument("optimizer: a gradient's shape differs from its parameter's (" +
                                std::to_string(grad.size()) + " vs " +
                                std::to_string(value.size()) + " elements)");
  }
  return Param{value.data(), grad.data(), value.size()};
}

// value -= learning_rate * grad.
class Sgd {
 public:
  explicit Sgd(float learning_rate);
  void step(const std::vector<Param>& params);
  void set_learning_rate(float learning_rate) { learning_rate_ = learning_rate; }

 private:
  float learning_rate_;
};

// Adam (Kingma and Ba, 2015), with bias correction, no weight decay:
//   m = beta1 m + (1 - beta1) g,   v = beta2 v + (1 - beta2) g^2
//   value -= learning_rate * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)
// as torch.optim.Adam computes it (t counts steps from 1).
class Adam {
 public:
  explicit Adam(float learning_rate, float beta1 = 0.9f, float beta2 = 0.999f,
                float eps = 1e-8f);
  // Throws std::invalid_argument if the list's sizes differ from the first step's.
  void step(const std::vector<Param>& params);
  void set_learning_rate(float learning_rate) { learning_rate_ = learning_rate; }
  std::int64_t steps() const { return t_; }

 private:
  float learning_rate_, beta1_, beta2_, eps_;
  std::int64_t t_ = 0;
  std::vector<std::vector<float>> m_, v_;  // one per parameter, same size
};

}  // namespace mha

#endif  // MHA_COMMON_OPTIMIZER_H_
