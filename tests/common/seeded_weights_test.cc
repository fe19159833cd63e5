// The installed weights are the API's draws: the goldens that NumPy wrote for
// lab 3, 5 and 6's constructor tests (gen_goldens.py of each lab).
#include "tests/common/seeded_weights.h"

#include <cstdint>
#include <string>

#include <gtest/gtest.h>
#include <xtensor/xview.hpp>

#include "common/testing/testing.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::kExact;
using testing::LoadGolden;

// Plain structs with the fields of the API's classes: the installer needs
// nothing else, and this test links no lab.
struct MhaFields {
  int d_model = 0, n_heads = 0, d_head = 0;
  Tensor2 W_Q, W_K, W_V, W_O;
};
struct GqaFields {
  int d_model = 0, n_heads = 0, n_kv_heads = 0, d_head = 0;
  Tensor2 W_Q, W_K, W_V, W_O;
};
struct MlaFields {
  int d_model = 0, n_heads = 0, kv_rank = 0, d_head = 0;
  Tensor2 W_Q, W_DKV, W_UK, W_UV, W_O;
};

TEST(InstallMha, GivesLab3sSeed7DrawsStackedInOrder) {
  MhaFields layer;
  seeded::InstallMha(layer, /*d_model=*/12, /*n_heads=*/3, /*seed=*/7);
  EXPECT_EQ(layer.d_head, 4);
  // weights_seed7_d12.npy: (4, d_model, d_model), W_Q, W_K, W_V, W_O.
  const Tensor3 stacked = LoadGolden<3>("tests/03_output_projection/golden/weights_seed7_d12.npy");
  const Tensor2* mine[] = {&layer.W_Q, &layer.W_K, &layer.W_V, &layer.W_O};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(AllClose(*mine[i], Tensor2(xt::view(stacked, i, xt::all(), xt::all())), kExact,
                         {"in", "out"}))
        << "matrix " << i;
  }
}

TEST(InstallGqa, GivesLab5sSeed3Draws) {
  GqaFields layer;
  seeded::InstallGqa(layer, /*d_model=*/16, /*n_heads=*/4, /*n_kv_heads=*/2, /*seed=*/3);
  const std::string g = "tests/05_grouped_query_attention/golden/gqa_seed3_";
  EXPECT_TRUE(AllClose(layer.W_Q, LoadGolden<2>(g + "W_Q.npy"), kExact, {"in", "out"}));
  EXPECT_TRUE(AllClose(layer.W_K, LoadGolden<2>(g + "W_K.npy"), kExact, {"in", "out"}));
  EXPECT_TRUE(AllClose(layer.W_V, LoadGolden<2>(g + "W_V.npy"), kExact, {"in", "out"}));
  EXPECT_TRUE(AllClose(layer.W_O, LoadGolden<2>(g + "W_O.npy"), kExact, {"in", "out"}));
}

TEST(InstallMla, GivesLab6sSeed6Draws) {
  MlaFields layer;
  seeded::InstallMla(layer, /*d_model=*/24, /*n_heads=*/4, /*kv_rank=*/10, /*seed=*/6);
  const std::string g = "tests/06_latent_attention/golden/seed6_";
  EXPECT_TRUE(AllClose(layer.W_Q, LoadGolden<2>(g + "W_Q.npy"), kExact, {"in", "out"}));
  EXPECT_TRUE(AllClose(layer.W_DKV, LoadGolden<2>(g + "W_DKV.npy"), kExact, {"in", "out"}));
  EXPECT_TRUE(AllClose(layer.W_UK, LoadGolden<2>(g + "W_UK.npy"), kExact, {"in", "out"}));
  EXPECT_TRUE(AllClose(layer.W_UV, LoadGolden<2>(g + "W_UV.npy"), kExact, {"in", "out"}));
  EXPECT_TRUE(AllClose(layer.W_O, LoadGolden<2>(g + "W_O.npy"), kExact, {"in", "out"}));
}

}  // namespace
}  // namespace mha
