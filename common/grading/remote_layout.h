// The layout of a value that crosses to the learner's process: in order, the
// shape of every tensor, the length of every vector, whether each optional
// holds a value, and every integer (a size) of every object it holds; never a
// tensor's numbers. A call that only changes numbers in place (lab 15's
// AdamW::step on the model, clip_grad_norm on the gradients) must answer with
// the layout it was sent: the trusted test indexes what comes back by the
// shapes it sent (a flat vector of gradients laid out over the model's
// parameters, the double reference run on the trained model), so an answer
// with a longer tensor would make it read past its own buffers.
//
//   const std::vector<std::string> sent = remote::Layout(model);
//   ... the call ...
//   remote::RequireLayout(sent, model_from_the_answer, "AdamW::step", "the model");
#ifndef MHA_COMMON_GRADING_REMOTE_LAYOUT_H_
#define MHA_COMMON_GRADING_REMOTE_LAYOUT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "common/grading/remote_codec.h"
#include "common/tensor.h"

namespace mha {
namespace remote {
namespace layout {

template <class T>
struct IsTensor : std::false_type {};
template <std::size_t N>
struct IsTensor<xt::xtensor<float, N>> : std::true_type {};
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

template <class T>
void Append(std::vector<std::string>& out, const T& value) {
  if constexpr (HasState<T>::value) {
    std::apply([&out](const auto&... field) { (Append(out, field), ...); },
               Access::Fields(const_cast<T&>(value)));
  } else if constexpr (IsTensor<T>::value) {
    std::string shape = "(";
    for (std::size_t i = 0; i < value.dimension(); ++i) {
      shape += (i ? ", " : "") + std::to_string(value.shape()[i]);
    }
    out.push_back(shape + ")");
  } else if constexpr (IsVector<T>::value) {
    out.push_back(std::to_string(value.size()) + " items");
    for (const auto& item : value) Append(out, item);
  } else if constexpr (IsOptional<T>::value) {
    out.push_back(value ? "present" : "absent");
    if (value) Append(out, *value);
  } else if constexpr (std::is_integral_v<T>) {
    out.push_back(std::to_string(value));
  }
  // Floating-point numbers and pointers are not layout.
}

}  // namespace layout

template <class T>
std::vector<std::string> Layout(const T& value) {
  std::vector<std::string> out;
  layout::Append(out, value);
  return out;
}

// Throws LearnerProcessError, naming the first difference, when `got` is not
// laid out as `sent` (what `call` was given as `what`).
template <class T>
void RequireLayout(const std::vector<std::string>& sent, const T& got, const std::string& call,
                   const std::string& what) {
  const std::vector<std::string> now = Layout(got);
  if (now == sent) return;
  std::size_t at = 0;
  while (at < now.size() && at < sent.size() && now[at] == sent[at]) ++at;
  const std::string was = at < sent.size() ? sent[at] : "nothing";
  const std::string is = at < now.size() ? now[at] : "nothing";
  throw LearnerProcessError("the answer to " + call + " changed the shapes of " + what +
                            " it was given (item " + std::to_string(at + 1) + " of its layout was " +
                            was + ", is " + is + "): a call that changes numbers in place keeps "
                            "every shape and size");
}

}  // namespace remote
}  // namespace mha

#endif  // MHA_COMMON_GRADING_REMOTE_LAYOUT_H_
