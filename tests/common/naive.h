// Independent reference arithmetic for tests: plain loops, accumulated in
// double, written for clarity rather than speed. Hidden tests compare a
// learner's result on fresh random inputs (testing::FreshSeed) with these;
// they share no code with any solution.
//
//   Tensor2 y = naive::MatMul(x, W);                      // (T, in) @ (in, out)
//   naive::Attention a = naive::ScaledDotProduct(q, k, v, mask);
//
// The finite-difference tests of the backward labs (10, 12, 13) run a
// forward of their own in double; MatMulOf, SplitHeadsOf, CombineHeadsOf,
// SumOfProducts and CentralDifferences below serve them all:
//
//   auto loss = [&] { return naive::SumOfProducts(Forward(x), d_y); };
//   const D2 dx = naive::CentralDifferences(x, loss);
#ifndef MHA_TESTS_COMMON_NAIVE_H_
#define MHA_TESTS_COMMON_NAIVE_H_

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xtensor.hpp>

#include "common/tensor.h"

namespace mha {
namespace naive {

// (n, m) @ (m, p) -> (n, p).
Tensor2 MatMul(const Tensor2& a, const Tensor2& b);

// (T, S) additive causal mask, bottom-right aligned: query i sees key j when
// j <= S - T + i.
Tensor2 CausalMask(int T, int S);

struct Attention {
  Tensor3 output;   // (H, T, d_head)
  Tensor3 weights;  // (H, T, S); a query that sees no key has an all-zero row
};

// softmax(q k^T / sqrt(d_head) + mask) v, head by head.
Attention ScaledDotProduct(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                           const std::optional<Tensor2>& mask = std::nullopt);

// (T, H*d) -> (H, T, d): head h takes columns [h*d, (h+1)*d).
Tensor3 SplitHeads(const Tensor2& x, int n_heads);
// (H, T, d) -> (T, H*d).
Tensor2 CombineHeads(const Tensor3& heads);

// The multi-head layer: ((softmax per head of (x W_Q)(x W_K)^T / sqrt(d_head)
// + mask) (x W_V)) combined, @ W_O. W_K and W_V may be narrower than W_Q
// (grouped-query attention): kv head g serves query heads
// [g * H / H_kv, (g + 1) * H / H_kv).
Tensor2 MultiHeadForward(const Tensor2& x, const Tensor2& W_Q, const Tensor2& W_K,
                         const Tensor2& W_V, const Tensor2& W_O, int n_heads,
                         const std::optional<Tensor2>& mask = std::nullopt);

// ------------------------------------------------ any element type (float or double)

// (n, m) @ (m, p) -> (n, p), accumulated in double.
template <class T>
xt::xtensor<T, 2> MatMulOf(const xt::xtensor<T, 2>& a, const xt::xtensor<T, 2>& b) {
  const std::size_t n = a.shape(0), m = a.shape(1), p = b.shape(1);
  if (b.shape(0) != m) {
    throw std::invalid_argument("naive::MatMul: inner sizes " + std::to_string(m) + " and " +
                                std::to_string(b.shape(0)) + " differ");
  }
  xt::xtensor<T, 2> out = xt::zeros<T>({n, p});
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < p; ++j) {
      double acc = 0.0;
      for (std::size_t t = 0; t < m; ++t) acc += double(a(i, t)) * double(b(t, j));
      out(i, j) = static_cast<T>(acc);
    }
  }
  return out;
}

// (T, H*d) -> (H, T, d): head h takes columns [h*d, (h+1)*d).
template <class T>
xt::xtensor<T, 3> SplitHeadsOf(const xt::xtensor<T, 2>& x, std::size_t H) {
  const std::size_t T_ = x.shape(0), d = x.shape(1) / H;
  xt::xtensor<T, 3> out = xt::zeros<T>({H, T_, d});
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t t = 0; t < T_; ++t)
      for (std::size_t c = 0; c < d; ++c) out(h, t, c) = x(t, h * d + c);
  return out;
}

// (H, T, d) -> (T, H*d).
template <class T>
xt::xtensor<T, 2> CombineHeadsOf(const xt::xtensor<T, 3>& heads) {
  const std::size_t H = heads.shape(0), T_ = heads.shape(1), d = heads.shape(2);
  xt::xtensor<T, 2> out = xt::zeros<T>({T_, H * d});
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t t = 0; t < T_; ++t)
      for (std::size_t c = 0; c < d; ++c) out(t, h * d + c) = heads(h, t, c);
  return out;
}

// sum(a * b) over every element, in double.
template <class A, class B>
double SumOfProducts(const A& a, const B& b) {
  double total = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) total += double(a.flat(i)) * double(b.flat(i));
  return total;
}

// The finite-difference step: central differences are exact to about step^2.
constexpr double kFiniteDifferenceStep = 1e-5;  // tolerance: a step, not a comparison bound

// d objective / d param by central differences, one element at a time
// (objective() reads param, which is restored after each element).
template <class Tensor, class F>
Tensor CentralDifferences(Tensor& param, F objective) {
  constexpr double kStep = kFiniteDifferenceStep;
  Tensor grad = xt::zeros<double>(param.shape());
  for (std::size_t i = 0; i < param.size(); ++i) {
    const double saved = param.flat(i);
    param.flat(i) = saved + kStep;
    const double up = objective();
    param.flat(i) = saved - kStep;
    const double down = objective();
    param.flat(i) = saved;
    grad.flat(i) = (up - down) / (2 * kStep);
  }
  return grad;
}

}  // namespace naive
}  // namespace mha

#endif  // MHA_TESTS_COMMON_NAIVE_H_
