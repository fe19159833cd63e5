// Hidden tests for lab 11: rope_angles, apply_rope, RotaryAttention, RotaryDecoder.
//
// Goldens from PyTorch, rotating the way Hugging Face's Llama does
// (rotate_half; tests/11_rotary_embeddings/gen_goldens.py). Cases:
//
//   rope        3 heads, 5 tokens at positions 17 .., d_head 6, base 500000 (Llama 3)
//   far         2 heads, 3 tokens at positions 1048570 .., d_head 32
//   far_llama3  1 head, 5 tokens at positions 654321 .., d_head 12, base 500000
//   wide        rope_angles(9, 10, 500000)
//   layer       d_model 24, 3 heads (d_head 8), seed 112, T 9, chunks 2, 4, 1, 2
//   llama3      d_model 24, 4 heads (d_head 6), seed 113, base 500000, T 10, chunks 5, 1, 1, 3
//
// and the properties of the header: each pair keeps its norm, one pair is the
// 2-D rotation by p radians, scores depend on m - n only, a decoder fed in any
// chunking gives the full forward, the cache holds keys rotated at their own
// positions; then fresh random cases against tests/11_rotary_embeddings/reference.h.
#include "labs/11_rotary_embeddings/rotary_embeddings.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "common/testing/testing.h"
#include "labs/04_causal_mask/causal_mask.h"
#include "labs/11_rotary_embeddings/rotary_embeddings_test_util.h"
#include "tests/11_rotary_embeddings/reference.h"

namespace mha {
namespace {

using testing::AllClose;
using testing::DecodeInChunks;
using testing::ExpectDecodes;
using testing::ExpectForwardRejectsBadArguments;
using testing::GoldenFile;
using testing::kExact;
using testing::kLayer;
using testing::kRopeMistakes;
using testing::kRotationAxes;
using testing::kRowOp;
using testing::LoadGolden;
using testing::MatchesGolden;
using testing::RandomChunks;
using testing::RotaryCase;
using testing::ThrowsInvalidArgument;

const std::string kGolden = "tests/11_rotary_embeddings/golden/";

// The golden layer cases of the grading tests: the public tests' cases
// (labs/11_rotary_embeddings/rotary_embeddings_test_util.h) run on them, and
// the tests below add cases of their own.
const RotaryCase kLayerCase{kGolden, "layer", 24, 3, 10000.0, /*T=*/9, {2, 4, 1, 2}};
const RotaryCase kLlama3Case{kGolden, "llama3", 24, 4, 500000.0, /*T=*/10, {5, 1, 1, 3}};

RotaryAttention LayerCase() { return kLayerCase.Layer(); }
RotaryAttention Llama3Case() { return kLlama3Case.Layer(); }

std::string ChunksString(const std::vector<int>& chunks) {
  std::string s = "chunks";
  for (int c : chunks) s += " " + std::to_string(c);
  return s;
}

// --------------------------------------------------------------- rope_angles

TEST(RopeAngles, MatchTheFrequenciesAtLlama3sBase) {
  testing::ExpectRopeAnglesMatchGolden(kGolden, "wide_angles", 9, 10, 500000.0);
}

TEST(RopeAngles, HaveOneColumnPerPairAndOneRowPerPosition) {
  const Tensor2 a = rope_angles(3, 12);
  ASSERT_EQ(a.shape(0), 3u);
  ASSERT_EQ(a.shape(1), 6u);
  EXPECT_TRUE(AllClose(xt::view(a, 0, xt::all()), xt::zeros<float>({6}), kExact, {"pair"}))
      << "position 0 has angle 0 in every pair";
  // Column i of row 1 is theta_i itself (zeros of the right shape pass the lines above).
  Tensor1 theta = xt::zeros<float>({6});
  for (std::size_t i = 0; i < 6; ++i) theta(i) = static_cast<float>(std::pow(10000.0, -2.0 * i / 12));
  EXPECT_TRUE(AllClose(xt::view(a, 1, xt::all()), theta, kRowOp, {"pair"}))
      << "position 1 has angle theta_i = 10000^(-2i/12) in pair i";
}

TEST(RopeAngles, RejectEveryBadArgumentNamingIt) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { rope_angles(-3, 8); }, {"n_positions=-3"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { rope_angles(2, 0); }, {"d_head=0"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { rope_angles(2, 7); }, {"d_head=7"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { rope_angles(2, 8, 0.9); }, {"base=0.9"}));
}

// ---------------------------------------------------------------- apply_rope

TEST(ApplyRope, RotatesLikeHuggingFacesLlamaAtLlama3sBase) {
  testing::ExpectApplyRopeMatchesGolden(kGolden, "rope", 17, 500000.0, /*far=*/false);
}

TEST(ApplyRope, OnePairIsTheTwoDimensionalRotationByPRadians) {
  // d_head 2: theta_0 = 1. Random pairs at positions 0 .. 6 and near 10^6.
  for (int start : {0, 999990}) {
    SCOPED_TRACE("start=" + std::to_string(start));
    const Tensor3 x = testing::RandomTensor3(2, 7, 2, /*seed=*/1121 + start);
    Tensor3 expected = xt::zeros<float>(x.shape()), mirrored = xt::zeros<float>(x.shape());
    for (std::size_t h = 0; h < 2; ++h) {
      for (std::size_t t = 0; t < 7; ++t) {
        const double p = static_cast<double>(start) + static_cast<double>(t);
        const double c = std::cos(p), s = std::sin(p), a = x(h, t, 0), b = x(h, t, 1);
        expected(h, t, 0) = static_cast<float>(a * c - b * s);
        expected(h, t, 1) = static_cast<float>(b * c + a * s);
        mirrored(h, t, 0) = static_cast<float>(a * c + b * s);
        mirrored(h, t, 1) = static_cast<float>(b * c - a * s);
      }
    }
    const Tensor3 y = apply_rope(x, start);
    EXPECT_TRUE(AllClose(y, expected, kRowOp, kRotationAxes))
        << (AllClose(y, mirrored, kRowOp) ? "looks like " + kRopeMistakes.Message("sin_sign")
                                          : std::string("one pair at position p must turn by "
                                                        "p radians, counter-clockwise"));
  }
}

TEST(ApplyRope, KeepsTheNormOfEveryHalfSplitPair) {
  const Tensor3 x = testing::RandomTensor3(3, 6, 10, /*seed=*/1122, 3.0f);
  testing::ExpectApplyRopeKeepsPairNorms(x, 250);
}

TEST(ApplyRope, PositionsNearTwoToTheTwentyMatchADoubleReference) {
  testing::ExpectApplyRopeMatchesGolden(kGolden, "far", 1048570, 10000.0, /*far=*/true);
}

TEST(ApplyRope, FarPositionsAtLlama3sBaseMatchADoubleReference) {
  testing::ExpectApplyRopeMatchesGolden(kGolden, "far_llama3", 654321, 500000.0, /*far=*/true);
}

TEST(ApplyRope, PositionZeroIsTheIdentity) {
  const Tensor3 x = testing::RandomTensor3(2, 1, 8, /*seed=*/1123);
  // The identity is right at position 0 only; x passed back is right here too.
  ASSERT_TRUE(testing::Rotates(x, 1)) << "precondition: position 1 must rotate";
  EXPECT_TRUE(AllClose(apply_rope(x, 0), x, kExact, kRotationAxes))
      << "every angle is 0 at position 0: cos 1, sin 0";
}

TEST(ApplyRope, ADotProductDependsOnTheDistanceOnly) {
  // q at position m, k at position n: q_m . k_n is the same for (m, n) and (m + s, n + s).
  const Tensor3 q = testing::RandomTensor3(1, 1, 8, /*seed=*/1124);
  const Tensor3 k = testing::RandomTensor3(1, 1, 8, /*seed=*/1125);
  auto dot = [&](int m, int n) {
    const Tensor3 a = apply_rope(q, m), b = apply_rope(k, n);
    float s = 0.0f;
    for (std::size_t f = 0; f < 8; ++f) s += a(0, 0, f) * b(0, 0, f);
    return s;
  };
  const Tensor1 near = {dot(7, 3), dot(3, 7), dot(12, 12)};
  const Tensor1 shifted = {dot(107, 103), dot(1003, 1007), dot(40, 40)};
  EXPECT_TRUE(AllClose(shifted, near, kRowOp, {"pair of positions"}))
      << "rotating q by m theta and k by n theta must leave only m - n in their dot product";
  // ... and m - n must count: without any rotation, every pair of positions agrees.
  EXPECT_FALSE(AllClose(Tensor1{dot(7, 3)}, Tensor1{dot(12, 12)}, kRowOp))
      << "q_7 . k_3 equals q_12 . k_12: the dot product does not depend on the distance at all";
}

TEST(ApplyRope, RejectsEveryBadArgumentNamingIt) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { apply_rope(xt::zeros<float>({2, 3, 7})); },
                                    {"d_head=7"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { apply_rope(xt::zeros<float>({2, 3, 0})); },
                                    {"d_head=0"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { apply_rope(xt::zeros<float>({1, 2, 4}), -5); },
                                    {"start=-5"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { apply_rope(xt::zeros<float>({1, 2, 4}), 0, 1.0); },
                                    {"base=1"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { apply_rope(xt::zeros<float>({1, 2, 4}), 0, -2.0); },
                                    {"base=-2"}));
}

// ----------------------------------------------------------- RotaryAttention

TEST(RotaryAttention, CausalForwardMatchesPyTorch) {
  testing::ExpectCausalForwardMatchesPyTorch(kLayerCase);  // (9, 24)
}

TEST(RotaryAttention, CausalForwardAtLlama3sBaseMatchesPyTorch) {
  testing::ExpectCausalForwardMatchesPyTorch(kLlama3Case);  // (10, 24)
}

TEST(RotaryAttention, DrawsTheWeightsOfMultiHeadAttentionFromTheSameSeed) {
  // Both cases' weights are seed draws at base 500000.
  for (const auto& [c, seed] : {std::pair<RotaryCase, int>{kLayerCase, 112}, {kLlama3Case, 113}}) {
    SCOPED_TRACE(c.name);
    RotaryCase at_llama3_base = c;
    at_llama3_base.base = 500000.0;
    testing::ExpectDrawsTheWeightsOfMultiHeadAttention(at_llama3_base,
                                                       static_cast<std::uint64_t>(seed));
  }
}

TEST(RotaryAttention, ForwardDoesNotDependOnWhereTheSequenceStarts) {
  const RotaryAttention layer = Llama3Case();
  const Tensor2 x = LoadGolden<2>(GoldenFile(kGolden, "llama3_x"));
  for (const bool causal : {true, false}) {
    const std::optional<Tensor2> mask =
        causal ? std::optional<Tensor2>(causal_mask(10)) : std::nullopt;
    const Tensor2 at_zero = layer.forward(x, mask, 0);
    if (causal) {
      // Anchored to PyTorch's numbers: a forward that ignores the positions
      // (or returns zeros) is start-independent too, and must not pass here.
      ASSERT_TRUE(MatchesGolden(at_zero, GoldenFile(kGolden, "llama3_forward"), kLayer,
                                {"token", "column"}))
          << "the causal forward at start 0 must be RoPE's before its start can be varied";
    }
    for (int start : {3, 4096, 999000}) {
      SCOPED_TRACE("start=" + std::to_string(start) + (causal ? ", causal" : ", no mask"));
      EXPECT_TRUE(AllClose(layer.forward(x, mask, start), at_zero, kLayer, {"token", "column"}))
          << "scores must depend on m - n only";
    }
  }
}

TEST(RotaryAttention, ReadsTheWeightsAtEveryCall) {
  RotaryAttention layer = LayerCase();
  const Tensor2 x = LoadGolden<2>(GoldenFile(kGolden, "layer_x"));
  const Tensor2 before = layer.forward(x, causal_mask(9));
  // Zeros before would make the zeros after no news.
  ASSERT_TRUE(MatchesGolden(before, kLayerCase.File("forward"), kLayer, {"token", "column"}))
      << "precondition: the layer's causal forward must be PyTorch's before W_V changes";
  layer.W_V = xt::zeros<float>({24, 24});
  EXPECT_TRUE(AllClose(layer.forward(x, causal_mask(9)), xt::zeros<float>({9, 24}), kExact,
                       {"token", "column"}))
      << "with W_V = 0 every output is 0: the new weights must be used";
}

TEST(RotaryAttention, RejectsEveryBadArgumentNamingIt) {
  EXPECT_TRUE(ThrowsInvalidArgument([] { RotaryAttention(0, 2); }, {"d_model=0"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { RotaryAttention(8, 0); }, {"n_heads=0"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { RotaryAttention(12, 5); }, {"d_model=12", "n_heads=5"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { RotaryAttention(15, 3); }, {"d_head=5"}));
  EXPECT_TRUE(ThrowsInvalidArgument([] { RotaryAttention(8, 2, 0, 0.5); }, {"base=0.5"}));
  ExpectForwardRejectsBadArguments(/*d_model=*/12, /*n_heads=*/3, /*T=*/4, /*bad_start=*/-1);
}

// ------------------------------------------------------------- RotaryDecoder

TEST(RotaryDecoder, APrefillGivesTheFullCausalForward) {
  ExpectDecodes(kLayerCase, "prefill");
  ExpectDecodes(kLlama3Case, "prefill");
}

TEST(RotaryDecoder, OneTokenAtATimeGivesTheFullCausalForward) {
  ExpectDecodes(kLayerCase, "single");
  ExpectDecodes(kLlama3Case, "single");
}

TEST(RotaryDecoder, UnevenChunksGiveTheFullCausalForward) {
  ExpectDecodes(kLayerCase, "chunks");
  ExpectDecodes(kLlama3Case, "chunks");
}

TEST(RotaryDecoder, RandomChunkingsGiveTheFullCausalForward) {
  const RotaryAttention layer = Llama3Case();
  const Tensor2 x = LoadGolden<2>(GoldenFile(kGolden, "llama3_x"));
  std::mt19937 gen(1126);
  for (int trial = 0; trial < 4; ++trial) {
    const std::vector<int> chunks = RandomChunks(10, gen);
    SCOPED_TRACE(ChunksString(chunks));
    RotaryDecoder decoder(layer, 10);
    const std::optional<Tensor2> rows = DecodeInChunks(decoder, x, chunks);
    ASSERT_TRUE(rows.has_value());
    EXPECT_TRUE(MatchesGolden(*rows, GoldenFile(kGolden, "llama3_forward"), kLayer,
                              {"token", "column"},
                              testing::DecoderMistakes(kGolden + "llama3", "chunks")));
  }
}

TEST(RotaryDecoder, CachedKeysAreRotatedAtTheirOwnPositions) {
  for (const RotaryCase& c : {kLayerCase, kLlama3Case}) {
    SCOPED_TRACE(c.name);
    testing::ExpectCachedKeysAreRotatedAtTheirOwnPositions(c, /*capacity=*/12);
  }
}

TEST(RotaryDecoder, AStepOverCapacityThrowsAndLeavesTheCacheUnchanged) {
  const RotaryAttention layer = LayerCase();
  const Tensor2 x = LoadGolden<2>(GoldenFile(kGolden, "layer_x"));
  RotaryDecoder decoder(layer, 5);
  ASSERT_TRUE(
      DecodeInChunks(decoder, xt::view(x, xt::range(0, 4), xt::all()), {2, 2}).has_value());
  const Tensor3 keys = decoder.cache().keys(), values = decoder.cache().values();
  EXPECT_TRUE(ThrowsInvalidArgument([&] { decoder.step(xt::view(x, xt::range(4, 7), xt::all())); },
                                    {"capacity=5"}));
  EXPECT_EQ(decoder.cache().length(), 4) << "the failed step left the cache changed";
  EXPECT_TRUE(AllClose(decoder.cache().keys(), keys, kExact, {"head", "position", "feature"}));
  EXPECT_TRUE(AllClose(decoder.cache().values(), values, kExact, {"head", "position", "feature"}));
  // The one position left is still usable, and gives row 4 of the full forward.
  const Tensor2 row = decoder.step(xt::view(x, xt::range(4, 5), xt::all()));
  const Tensor2 full = LoadGolden<2>(GoldenFile(kGolden, "layer_forward"));
  EXPECT_TRUE(AllClose(row, xt::view(full, xt::range(4, 5), xt::all()), kLayer,
                       {"token", "column"}));
}

TEST(RotaryDecoder, RejectsBadStepsNamingThemAndLeavesTheCacheUnchanged) {
  const RotaryAttention layer = LayerCase();
  RotaryDecoder decoder(layer, 4);
  EXPECT_TRUE(ThrowsInvalidArgument([&] { decoder.step(xt::zeros<float>({1, 23})); },
                                    {"(1, 23)"}));
  EXPECT_TRUE(ThrowsInvalidArgument([&] { decoder.step(xt::zeros<float>({0, 24})); },
                                    {"(0, 24)"}));
  EXPECT_EQ(decoder.cache().length(), 0);
  EXPECT_TRUE(ThrowsInvalidArgument([&] { RotaryDecoder(layer, 0); }, {"capacity=0"}));
}

// ------------------------------------------------------- fresh random inputs

TEST(FreshRandomInputs, ApplyRopeMatchesADoubleReference) {
  testing::FreshDraws gen;
  const int H = gen.Pick(1, 3), T = gen.Pick(1, 6), d_head = 2 * gen.Pick(1, 8);
  const int start = gen.Pick(0, 2000000);
  const double base = gen.Pick(0, 1) ? 10000.0 : 500000.0;
  SCOPED_TRACE("H=" + std::to_string(H) + " T=" + std::to_string(T) + " d_head=" +
               std::to_string(d_head) + " start=" + std::to_string(start) + " base=" +
               std::to_string(base));
  const Tensor3 x = testing::RandomTensor3(H, T, d_head, gen(), 2.0f);
  EXPECT_TRUE(AllClose(apply_rope(x, start, base), reference::Rope(x, start, base), kRowOp,
                       kRotationAxes));
}

TEST(FreshRandomInputs, LayerAndDecoderMatchADoubleReference) {
  testing::FreshDraws gen;
  const int n_heads = gen.Pick(1, 4), d_head = 2 * gen.Pick(1, 4), d_model = n_heads * d_head;
  const int T = gen.Pick(3, 12);
  const double base = gen.Pick(0, 1) ? 10000.0 : 500000.0;
  RotaryAttention layer(d_model, n_heads, gen(), base);
  const std::size_t d = d_model;
  const float s = 1.0f / std::sqrt(static_cast<float>(d_model));
  layer.W_Q = testing::RandomTensor2(d, d, gen(), s);
  layer.W_K = testing::RandomTensor2(d, d, gen(), s);
  layer.W_V = testing::RandomTensor2(d, d, gen(), s);
  layer.W_O = testing::RandomTensor2(d, d, gen(), s);
  const Tensor2 x = testing::RandomTensor2(T, d, gen(), 2.0f);
  const std::vector<int> chunks = RandomChunks(T, gen);
  const int start = gen.Pick(0, 100000);
  SCOPED_TRACE("d_model=" + std::to_string(d_model) + " n_heads=" + std::to_string(n_heads) +
               " T=" + std::to_string(T) + " base=" + std::to_string(base) + " start=" +
               std::to_string(start) + ", " + ChunksString(chunks));
  const Tensor2 expected =
      reference::RotaryForward(layer.W_Q, layer.W_K, layer.W_V, layer.W_O, n_heads, base, x,
                               /*causal=*/true, /*start=*/0);
  EXPECT_TRUE(AllClose(layer.forward(x, causal_mask(T), start), expected, kLayer,
                       {"token", "column"}));
  RotaryDecoder decoder(layer, T);
  const std::optional<Tensor2> rows = DecodeInChunks(decoder, x, chunks);
  ASSERT_TRUE(rows.has_value());
  EXPECT_TRUE(AllClose(*rows, expected, kLayer, {"token", "column"}));
}

}  // namespace
}  // namespace mha
