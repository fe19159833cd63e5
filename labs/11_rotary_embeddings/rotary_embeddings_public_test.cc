// Public tests for lab 11. Run: bazel test //labs/11_rotary_embeddings/...
//
// The rotation and the layer are checked against PyTorch, which rotates the
// way Hugging Face's Llama does (rotate_half; tests/11_rotary_embeddings/
// gen_goldens.py, in the instructors' repository, wrote
// labs/11_rotary_embeddings/golden/), and against the properties every
// correct RoPE has: each pair keeps its norm, one pair is the 2-D rotation by
// p radians, the layer does not care where the sequence starts, and a decoder
// fed in steps gives the full forward. The grading tests check more (other
// shapes, Llama 3's base, random chunkings, fresh random inputs).
#include "labs/11_rotary_embeddings/rotary_embeddings.h"

#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "common/testing/testing.h"
#include "labs/04_causal_mask/causal_mask.h"
#include "labs/11_rotary_embeddings/rotary_embeddings_test_util.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::DecodeInChunks;
using testing::kExact;
using testing::kLayer;
using testing::kRopeMistakes;
using testing::kRotationAxes;
using testing::kRowOp;
using testing::LoadGolden;
using testing::RotaryCase;
using testing::ThrowsInvalidArgument;

const std::string kGolden = "labs/11_rotary_embeddings/golden/";

// The golden layer case of these tests: d_model 16, 2 heads of d_head 8,
// base 10000, the draws of seed 111, 8 tokens. The grading tests run the same
// cases (labs/11_rotary_embeddings/rotary_embeddings_test_util.h) on cases
// of their own.
const RotaryCase kLayerCase{kGolden, "layer", 16, 2, 10000.0, /*T=*/8, /*chunks=*/{3, 1, 4}};

RotaryAttention Layer() { return kLayerCase.Layer(); }

// --------------------------------------------------------------- rope_angles

TEST(RopeAnglesPublic, RowPColumnIIsPTimesThetaI) {
  // 6 positions, d_head 8: 4 pairs turning at 1, 0.1, 0.01, 0.001 rad per position.
  testing::ExpectRopeAnglesMatchGolden(kGolden, "small_angles", 6, 8, 10000.0);
}

TEST(RopeAnglesPublic, RejectsBadArgumentsNamingThem) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { rope_angles(0, 8); }, {"n_positions=0"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { rope_angles(4, 5); }, {"d_head=5"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { rope_angles(4, 8, 1.0); }, {"base=1"}));
}

// ---------------------------------------------------------------- apply_rope

TEST(ApplyRopePublic, RotatesLikeHuggingFacesLlama) {
  // 2 heads, 6 tokens at positions 3 .. 8, d_head 8.
  testing::ExpectApplyRopeMatchesGolden(kGolden, "rope", /*start=*/3, 10000.0, /*far=*/false);
}

TEST(ApplyRopePublic, OnePairIsTheTwoDimensionalRotationByPRadians) {
  // d_head 2: one pair, theta_0 = base^0 = 1, so position p turns by p radians:
  // (1, 0) goes to (cos p, sin p).
  const std::size_t T = 5;
  Tensor3 x = xt::zeros<float>({std::size_t{1}, T, std::size_t{2}});
  xt::view(x, 0, xt::all(), 0) = 1.0f;
  const int start = 2;
  Tensor3 expected = xt::zeros<float>(x.shape()), mirrored = xt::zeros<float>(x.shape());
  for (std::size_t t = 0; t < T; ++t) {
    const double p = static_cast<double>(start + static_cast<int>(t));
    expected(0, t, 0) = mirrored(0, t, 0) = static_cast<float>(std::cos(p));
    expected(0, t, 1) = static_cast<float>(std::sin(p));
    mirrored(0, t, 1) = static_cast<float>(-std::sin(p));
  }
  const Tensor3 y = apply_rope(x, start);
  EXPECT_TRUE(AllClose(y, expected, kRowOp, kRotationAxes))
      << (AllClose(y, mirrored, kRowOp) ? "looks like " + kRopeMistakes.Message("sin_sign")
                                        : std::string("(1, 0) at position p must become "
                                                      "(cos p, sin p)"));
}

TEST(ApplyRopePublic, KeepsTheNormOfEveryHalfSplitPair) {
  const Tensor3 x = LoadGolden<3>(kGolden + "rope_x.npy");
  testing::ExpectApplyRopeKeepsPairNorms(x, 3);
}

TEST(ApplyRopePublic, PositionsNearAMillionMatchADoubleReference) {
  // One head, 4 tokens at positions 999998 .. 1000001, d_head 16.
  testing::ExpectApplyRopeMatchesGolden(kGolden, "far", /*start=*/999998, 10000.0, /*far=*/true);
}

TEST(ApplyRopePublic, RejectsBadArgumentsNamingThem) {
  const Tensor3 odd = xt::zeros<float>({1, 2, 5});
  const Tensor3 even = xt::zeros<float>({1, 2, 4});
  EXPECT_TRUE(ThrowsInvalidArgument([&] { apply_rope(odd); }, {"d_head=5"}));
  EXPECT_TRUE(ThrowsInvalidArgument([&] { apply_rope(even, -1); }, {"start=-1"}));
  EXPECT_TRUE(ThrowsInvalidArgument([&] { apply_rope(even, 0, 0.5); }, {"base=0.5"}));
}

// ----------------------------------------------------------- RotaryAttention

TEST(RotaryAttentionPublic, DrawsTheWeightsOfMultiHeadAttentionFromTheSameSeed) {
  testing::ExpectDrawsTheWeightsOfMultiHeadAttention(kLayerCase, /*seed=*/111);
}

TEST(RotaryAttentionPublic, CausalForwardMatchesPyTorch) {
  testing::ExpectCausalForwardMatchesPyTorch(kLayerCase);
}

TEST(RotaryAttentionPublic, ForwardDoesNotDependOnWhereTheSequenceStarts) {
  // Scores depend on m - n only, so shifting every position changes nothing.
  ASSERT_TRUE(testing::CausalForwardGivesTheGolden(kLayerCase))
      << "precondition: the causal forward at start 0 must be RoPE's (a forward of zeros does "
         "not depend on the start either)";
  const RotaryAttention layer = Layer();
  const Tensor2 x = kLayerCase.X();
  const Tensor2 at_zero = layer.forward(x, causal_mask(8), 0);
  for (int start : {1, 40, 5000}) {
    SCOPED_TRACE("start=" + std::to_string(start));
    EXPECT_TRUE(AllClose(layer.forward(x, causal_mask(8), start), at_zero, kLayer,
                         {"token", "column"}))
        << "rotating q and k by their positions must leave only m - n in each score";
  }
}

TEST(RotaryAttentionPublic, RejectsBadArgumentsNamingThem) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { RotaryAttention(10, 4); }, {"d_model=10", "n_heads=4"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { RotaryAttention(6, 2); }, {"d_head=3"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { RotaryAttention(8, 2, 0, 1.0); }, {"base=1"}));
  testing::ExpectForwardRejectsBadArguments(/*d_model=*/8, /*n_heads=*/2, /*T=*/3,
                                            /*bad_start=*/-2);
}

// ------------------------------------------------------------- RotaryDecoder

TEST(RotaryDecoderPublic, APrefillGivesTheFullCausalForward) {
  testing::ExpectDecodes(kLayerCase, "prefill");
}

TEST(RotaryDecoderPublic, OneTokenAtATimeGivesTheFullCausalForward) {
  testing::ExpectDecodes(kLayerCase, "single");
}

TEST(RotaryDecoderPublic, UnevenChunksGiveTheFullCausalForward) {
  testing::ExpectDecodes(kLayerCase, "chunks");
}

TEST(RotaryDecoderPublic, CachedKeysAreRotatedAtTheirOwnPositions) {
  testing::ExpectCachedKeysAreRotatedAtTheirOwnPositions(kLayerCase, /*capacity=*/10);
}

TEST(RotaryDecoderPublic, AStepOverCapacityThrowsAndLeavesTheCacheUnchanged) {
  const RotaryAttention layer = Layer();
  RotaryDecoder decoder(layer, /*capacity=*/4);
  const Tensor2 x = kLayerCase.X();
  ASSERT_TRUE(
      DecodeInChunks(decoder, xt::view(x, xt::range(0, 3), xt::all()), {3}).has_value());
  const Tensor3 keys = decoder.cache().keys();
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] { decoder.step(xt::view(x, xt::range(3, 5), xt::all())); }, {"capacity=4"}));
  EXPECT_EQ(decoder.cache().length(), 3) << "the failed step left the cache changed";
  EXPECT_TRUE(AllClose(decoder.cache().keys(), keys, kExact, {"head", "position", "feature"}))
      << "the failed step left the cache changed";
}

TEST(RotaryDecoderPublic, AStepOfTheWrongWidthThrowsNamingItsShape) {
  const RotaryAttention layer = Layer();
  RotaryDecoder decoder(layer, /*capacity=*/4);
  EXPECT_TRUE(ThrowsInvalidArgument([&] { decoder.step(xt::zeros<float>({2, 15})); },
                                    {"(2, 15)"}));
  EXPECT_EQ(decoder.cache().length(), 0);
}

}  // namespace
}  // namespace mha
