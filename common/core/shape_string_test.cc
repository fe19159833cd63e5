#include "common/core/shape_string.h"

#include <array>
#include <cstddef>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "common/tensor.h"

namespace mha {
namespace {

TEST(ShapeString, WritesATensorsShapeLikeNumpy) {
  const Tensor3 t = xt::zeros<float>({2, 3, 4});
  EXPECT_EQ(shape_string(t), "(2, 3, 4)");
  EXPECT_EQ(shape_string(Tensor2(xt::zeros<float>({5, 0}))), "(5, 0)");
}

TEST(ShapeString, WritesAShapeContainerLikeNumpy) {
  const Tensor2 t = xt::zeros<float>({4, 7});
  EXPECT_EQ(shape_string(t.shape()), "(4, 7)");
  EXPECT_EQ(shape_string(std::vector<std::size_t>{10, 1, 12}), "(10, 1, 12)");
  EXPECT_EQ(shape_string(std::array<std::size_t, 2>{3, 3}), "(3, 3)");
}

TEST(ShapeString, WritesOneAxisAndNoAxisWithoutATrailingComma) {
  EXPECT_EQ(shape_string(Tensor1(xt::zeros<float>({5}))), "(5)");
  EXPECT_EQ(shape_string(std::vector<std::size_t>{}), "()");
}

TEST(ShapeString, TakesAViewByItsOwnShapeNotItsElements) {
  const Tensor3 t = xt::zeros<float>({2, 3, 4});
  EXPECT_EQ(shape_string(xt::view(t, 1, xt::all(), xt::all())), "(3, 4)");
}

}  // namespace
}  // namespace mha
