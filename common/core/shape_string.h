// shape_string: a tensor's shape written the way NumPy prints it, "(2, 3, 4)",
// for the messages of std::invalid_argument.
//
//   throw std::invalid_argument("attention: mask has shape " + shape_string(*mask) +
//                               ", expected " + shape_string(std::vector<std::size_t>{T, S}));
//
// shape_string(t) takes a tensor (anything with a .shape(): Tensor1/2/3, a
// view); shape_string(shape) takes the shape itself (t.shape(), or a
// std::vector<std::size_t> of the sizes you expected). One axis prints as
// "(5)", no axes as "()".
//
// The reference solutions use it in their error messages, and your lab file
// may use it too: #include "common/core/shape_string.h" where the lab's BUILD
// lists //common/core:shape_string in lab_library's deps (labs 1-12 do, and the
// template of `./lab new` does; lab 13's file names values, not shapes).
#ifndef MHA_COMMON_SHAPE_STRING_H_
#define MHA_COMMON_SHAPE_STRING_H_

#include <cstddef>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

namespace mha {

namespace shape_string_internal {

// Whether T has a .shape() (a tensor) or is itself a shape (sizes in order).
template <class T, class = void>
struct HasShape : std::false_type {};
template <class T>
struct HasShape<T, std::void_t<decltype(std::declval<const T&>().shape())>> : std::true_type {};

}  // namespace shape_string_internal

template <class TensorOrShape>
std::string shape_string(const TensorOrShape& x) {
  if constexpr (shape_string_internal::HasShape<TensorOrShape>::value) {
    return shape_string(x.shape());
  } else {
    std::ostringstream out;
    out << "(";
    for (std::size_t d = 0; d < x.size(); ++d) out << (d ? ", " : "") << x[d];
    out << ")";
    return out.str();
  }
}

}  // namespace mha

#endif  // MHA_COMMON_SHAPE_STRING_H_
