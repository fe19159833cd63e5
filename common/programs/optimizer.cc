#include "common/programs/optimizer.h"

#include <cmath>

namespace mha {

Sgd::Sgd(float learning_rate) : learning_rate_(learning_rate) {}

void Sgd::step(const std::vector<Param>& params) {
  for (const Param& p : params) {
    for (std::size_t i = 0; i < p.size; ++i) p.value[i] -= learning_rate_ * p.grad[i];
  }
}

Adam::Adam(float learning_rate, float beta1, float beta2, float eps)
    : learning_rate_(learning_rate), beta1_(beta1), beta2_(beta2), eps_(eps) {}

void Adam::step(const std::vector<Param>& params) {
  if (t_ == 0) {
    for (const Param& p : params) {
      m_.emplace_back(p.size, 0.0f);
      v_.emplace_back(p.size, 0.0f);
    }
  }
  if (params.size() != m_.size()) {
    throw std::invalid_argument("Adam: step got " + std::to_string(params.size()) +
                                " parameters, the first step had " + std::to_string(m_.size()));
  }
  ++t_;
  // Bias corrections: m and v start at 0, so early averages are too small
  // by exactly these factors.
  const double c1 = 1.0 - std::pow(double(beta1_), double(t_));
  const double c2 = 1.0 - std::pow(double(beta2_), double(t_));
  const float step_size = static_cast<float>(learning_rate_ / c1);
  const float sqrt_c2 = static_cast<float>(std::sqrt(c2));
  for (std::size_t k = 0; k < params.size(); ++k) {
    const Param& p = params[k];
    if (p.size != m_[k].size()) {
      throw std::invalid_argument("Adam: parameter " + std::to_string(k) + " has " +
                                  std::to_string(p.size) + " elements, the first step had " +
                                  std::to_string(m_[k].size()));
    }
    float* m = m_[k].data();
    float* v = v_[k].data();
    for (std::size_t i = 0; i < p.size; ++i) {
      const float g = p.grad[i];
      m[i] = beta1_ * m[i] + (1.0f - beta1_) * g;
      v[i] = beta2_ * v[i] + (1.0f - beta2_) * g * g;
      p.value[i] -= step_size * m[i] / (std::sqrt(v[i]) / sqrt_c2 + eps_);
    }
  }
}

}  // namespace mha
