// The call-back surface under attack: every function any lab may call back
// (labs/labs.json "calls", the union over the labs) is called with malformed
// arguments (wrong and zero shapes, mismatched heads, broken layers and
// caches, NaN and infinity) through the grading boundary, as a learner's
// process would send them, to a reference process built like a job's
// (common/lab.bzl's :reference_server: the reference solutions and
// call_back_checks.cc). Each call must end in a clean exception, or, for
// NaN and infinity, a clean answer; never in the reference process dying.
// Under `--config=asan` (AddressSanitizer and UndefinedBehaviorSanitizer,
// halting on the first report) a read or write past a buffer, or undefined
// behaviour, kills that process, which fails the call here: `./lab test`
// runs it so (tools/lab/checks/selftest.py, the "fuzz" check).
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/grading/remote.h"
#include "common/tensor.h"
#include "labs/01_split_heads/split_heads.h"
#include "labs/02_batched_attention/attention.h"
#include "labs/03_output_projection/multi_head_attention.h"
#include "labs/04_causal_mask/causal_mask.h"
#include "labs/05_grouped_query_attention/grouped_query_attention.h"
#include "labs/06_latent_attention/latent_attention.h"
#include "labs/08_kv_cache/kv_cache.h"
#include "labs/10_attention_backward/attention_backward.h"
#include "labs/11_rotary_embeddings/rotary_embeddings.h"
#include "labs/14_transformer_block/transformer_block.h"
#include "tests/08_kv_cache/remote.h"
#include "tests/11_rotary_embeddings/remote.h"

namespace mha {
namespace {

// A size so large that the reference's allocation fails. Under
// AddressSanitizer operator new dies instead of throwing std::bad_alloc (its
// allocator has no way to throw), so those calls are made only without it;
// the grader's reference process is no sanitizer build and gets
// std::bad_alloc under its memory limit, a clean error.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kHugeSizes = false;
#else
constexpr bool kHugeSizes = true;
#endif
constexpr int kHuge = 1 << 30;

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::size_t U(int v) { return static_cast<std::size_t>(v); }
Tensor2 Ones2(int a, int b) { return xt::ones<float>({U(a), U(b)}); }
Tensor3 Ones3(int a, int b, int c) { return xt::ones<float>({U(a), U(b), U(c)}); }

// The qualified names this file calls (kept against labs/labs.json below).
std::set<std::string>& Covered() {
  static std::set<std::string> covered;
  return covered;
}

class CallBackFuzz : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("MHA_REMOTE_ARGV", "tests/common/call_back_fuzz_server", 1);
    setenv("MHA_REMOTE_CALL_TIMEOUT_S", "60", 1);
    setenv("MHA_REMOTE_MAX_TIMEOUTS", "1000", 1);
  }

  // `call` ends in an exception other than the reference process breaking.
  static void ExpectCleanError(const std::string& fn, const std::string& what,
                               const std::function<void()>& call) {
    Covered().insert(fn);
    try {
      call();
      ADD_FAILURE() << fn << " with " << what << ": no exception";
    } catch (const remote::LearnerProcessError& e) {
      ADD_FAILURE() << fn << " with " << what << ": the reference process broke: " << e.what();
    } catch (const std::exception& e) {
      SUCCEED() << e.what();
    }
  }

  // `call` answers or throws cleanly (NaN in, NaN out is fine).
  static void ExpectNoBreak(const std::string& fn, const std::string& what,
                            const std::function<void()>& call) {
    Covered().insert(fn);
    try {
      call();
    } catch (const remote::LearnerProcessError& e) {
      ADD_FAILURE() << fn << " with " << what << ": the reference process broke: " << e.what();
    } catch (const std::exception&) {
    }
  }
};

Tensor2 WithNonFinite(Tensor2 t) {
  t(0, 0) = kNan;
  t(t.shape(0) - 1, t.shape(1) - 1) = kInf;
  return t;
}

Tensor3 WithNonFinite(Tensor3 t) {
  t(0, 0, 0) = kNan;
  t(t.shape(0) - 1, t.shape(1) - 1, t.shape(2) - 1) = -kInf;
  return t;
}

TEST_F(CallBackFuzz, SplitAndCombineHeadsRejectBadShapesAndHeadCounts) {
  for (int heads : {0, -1, 3, 1 << 30}) {
    ExpectCleanError("split_heads", "n_heads=" + std::to_string(heads),
                     [&] { split_heads(Ones2(4, 8), heads); });
  }
  ExpectNoBreak("split_heads", "a (0, 8) x", [] { split_heads(Ones2(0, 8), 2); });
  ExpectNoBreak("split_heads", "a (4, 0) x", [] { split_heads(Ones2(4, 0), 2); });
  ExpectNoBreak("split_heads", "NaN and inf", [] { split_heads(WithNonFinite(Ones2(4, 8)), 2); });
  ExpectNoBreak("combine_heads", "a (0, 4, 2) tensor", [] { combine_heads(Ones3(0, 4, 2)); });
  ExpectNoBreak("combine_heads", "a (2, 0, 2) tensor", [] { combine_heads(Ones3(2, 0, 2)); });
  ExpectNoBreak("combine_heads", "NaN and inf", [] { combine_heads(WithNonFinite(Ones3(2, 3, 4))); });
}

TEST_F(CallBackFuzz, AttentionRejectsMismatchedShapesAndMasks) {
  using Fn = AttentionResult (*)(const Tensor3&, const Tensor3&, const Tensor3&,
                                 const std::optional<Tensor2>&);
  for (const auto& entry : {std::pair<std::string, Fn>{"attention_loop", &attention_loop},
                            std::pair<std::string, Fn>{"attention_batched", &attention_batched}}) {
    const std::string name = entry.first;
    const Fn fn = entry.second;
    ExpectCleanError(name, "k of other heads", [&] { fn(Ones3(2, 3, 4), Ones3(3, 3, 4), Ones3(2, 3, 4), std::nullopt); });
    ExpectCleanError(name, "k of another d_head", [&] { fn(Ones3(2, 3, 4), Ones3(2, 3, 5), Ones3(2, 3, 4), std::nullopt); });
    ExpectCleanError(name, "v of another length", [&] { fn(Ones3(2, 3, 4), Ones3(2, 5, 4), Ones3(2, 4, 4), std::nullopt); });
    ExpectCleanError(name, "a mask of the wrong shape", [&] { fn(Ones3(2, 3, 4), Ones3(2, 5, 4), Ones3(2, 5, 4), Ones2(5, 3)); });
    ExpectCleanError(name, "an empty mask", [&] { fn(Ones3(2, 3, 4), Ones3(2, 5, 4), Ones3(2, 5, 4), Ones2(0, 0)); });
    ExpectNoBreak(name, "zero heads", [&] { fn(Ones3(0, 3, 4), Ones3(0, 3, 4), Ones3(0, 3, 4), std::nullopt); });
    ExpectNoBreak(name, "zero keys", [&] { fn(Ones3(2, 3, 4), Ones3(2, 0, 4), Ones3(2, 0, 4), std::nullopt); });
    ExpectNoBreak(name, "NaN and inf", [&] {
      fn(WithNonFinite(Ones3(2, 3, 4)), Ones3(2, 3, 4), WithNonFinite(Ones3(2, 3, 4)),
         WithNonFinite(Ones2(3, 3)));
    });
  }
  ExpectNoBreak("softmax_rows", "an empty matrix", [] { softmax_rows(Ones2(0, 0)); });
  ExpectNoBreak("softmax_rows", "no columns", [] { softmax_rows(Ones2(3, 0)); });
  ExpectNoBreak("softmax_rows", "NaN and inf", [] { softmax_rows(WithNonFinite(Ones2(3, 4))); });
}

TEST_F(CallBackFuzz, CausalMaskRejectsNegativeAndHugeSizes) {
  for (int T : {-1, kHuge}) {
    if (T == kHuge && !kHugeSizes) continue;
    ExpectCleanError("causal_mask", "T=" + std::to_string(T), [&] { causal_mask(T); });
    ExpectCleanError("causal_mask", "T=" + std::to_string(T) + ", S=4", [&] { causal_mask(T, 4); });
  }
  ExpectCleanError("causal_mask", "S < T", [] { causal_mask(5, 2); });
  ExpectNoBreak("causal_mask", "T=0", [] { causal_mask(0); });
}

TEST_F(CallBackFuzz, RepeatKvRejectsHeadCountsItDoesNotDivide) {
  for (int heads : {0, -2, 3, kHuge}) {
    if (heads == kHuge && !kHugeSizes) continue;
    ExpectCleanError("repeat_kv", "n_heads=" + std::to_string(heads),
                     [&] { repeat_kv(Ones3(2, 3, 4), heads); });
  }
  ExpectNoBreak("repeat_kv", "zero kv heads", [] { repeat_kv(Ones3(0, 3, 4), 4); });
  ExpectNoBreak("repeat_kv", "NaN and inf", [] { repeat_kv(WithNonFinite(Ones3(2, 3, 4)), 4); });
}

TEST_F(CallBackFuzz, ConstructorsRejectBadSizes) {
  struct Sizes {
    int a, b, c;
  };
  for (const Sizes s : {Sizes{0, 1, 0}, {8, 0, 0}, {8, 3, 0}, {-8, 2, 0}, {kHuge, 1, 0}}) {
    if (s.a == kHuge && !kHugeSizes) continue;
    ExpectCleanError("MultiHeadAttention::MultiHeadAttention",
                     std::to_string(s.a) + ", " + std::to_string(s.b),
                     [s] { MultiHeadAttention(s.a, s.b, 1); });
  }
  for (const Sizes s : {Sizes{8, 4, 3}, {8, 4, 0}, {8, 0, 1}, {kHuge, 2, 1}}) {
    if (s.a == kHuge && !kHugeSizes) continue;
    ExpectCleanError("GroupedQueryAttention::GroupedQueryAttention", "bad sizes",
                     [s] { GroupedQueryAttention(s.a, s.b, s.c, 1); });
  }
  for (const Sizes s : {Sizes{8, 3, 2}, {8, 2, 0}, {0, 1, 1}, {kHuge, 2, 1}}) {
    if (s.a == kHuge && !kHugeSizes) continue;
    ExpectCleanError("MultiHeadLatentAttention::MultiHeadLatentAttention", "bad sizes",
                     [s] { MultiHeadLatentAttention(s.a, s.b, s.c, 1); });
  }
}

// A valid layer, then one change: each must be refused before the reference runs.
std::vector<std::pair<std::string, std::function<void(MultiHeadAttention&)>>> BrokenLayers() {
  using L = MultiHeadAttention;
  return {
      {"W_O of one row", [](L& l) { l.W_O = Ones2(1, 8); }},
      {"W_Q of 9 columns", [](L& l) { l.W_Q = Ones2(8, 9); }},
      {"empty weights", [](L& l) { l.W_Q = l.W_K = l.W_V = l.W_O = Ones2(0, 0); }},
      {"n_heads * d_head > d_model", [](L& l) { l.n_heads = 4; l.d_head = 8; }},
      {"n_heads * d_head < d_model", [](L& l) { l.n_heads = 1; l.d_head = 2; }},
      {"d_model 0", [](L& l) { l.d_model = 0; }},
      {"n_heads 0", [](L& l) { l.n_heads = 0; }},
      {"negative sizes", [](L& l) { l.n_heads = -2; l.d_head = -4; }},
      {"a huge d_model", [](L& l) { l.d_model = 1 << 30; }},
  };
}

TEST_F(CallBackFuzz, LayerMethodsAndBackwardRefuseABrokenLayer) {
  const Tensor2 x = Ones2(4, 8);
  for (const auto& broken : BrokenLayers()) {
    const std::string& what = broken.first;
    MultiHeadAttention layer(8, 2, 1);
    broken.second(layer);
    ExpectCleanError("MultiHeadAttention::forward", what, [&] { layer.forward(x); });
    ExpectCleanError("MultiHeadAttention::attend", what, [&] { layer.attend(x); });
    ExpectCleanError("mha_backward", what, [&] { mha_backward(layer, x, std::nullopt, x); });
  }
}

TEST_F(CallBackFuzz, LayerMethodsAndBackwardRejectBadInputs) {
  const MultiHeadAttention layer(8, 2, 1);
  ExpectCleanError("MultiHeadAttention::forward", "x of 7 columns", [&] { layer.forward(Ones2(4, 7)); });
  ExpectCleanError("MultiHeadAttention::attend", "a (3, 3) mask for T=4", [&] { layer.attend(Ones2(4, 8), Ones2(3, 3)); });
  ExpectCleanError("mha_backward", "d_y of another shape", [&] { mha_backward(layer, Ones2(4, 8), std::nullopt, Ones2(3, 8)); });
  ExpectCleanError("mha_backward", "x of 7 columns", [&] { mha_backward(layer, Ones2(4, 7), std::nullopt, Ones2(4, 7)); });
  ExpectCleanError("mha_backward", "a (5, 5) mask for T=4", [&] { mha_backward(layer, Ones2(4, 8), Ones2(5, 5), Ones2(4, 8)); });
  ExpectNoBreak("MultiHeadAttention::forward", "T=0", [&] { layer.forward(Ones2(0, 8)); });
  ExpectNoBreak("mha_backward", "T=0", [&] { mha_backward(layer, Ones2(0, 8), std::nullopt, Ones2(0, 8)); });
  ExpectNoBreak("mha_backward", "NaN and inf", [&] {
    mha_backward(layer, WithNonFinite(Ones2(4, 8)), WithNonFinite(Ones2(4, 4)), WithNonFinite(Ones2(4, 8)));
  });
  ExpectNoBreak("MultiHeadAttention::attend", "NaN and inf", [&] { layer.attend(WithNonFinite(Ones2(4, 8))); });
}

TEST_F(CallBackFuzz, AttentionBackwardRejectsMismatchedShapes) {
  const std::string fn = "attention_backward";
  ExpectCleanError(fn, "d_output of another shape", [] { attention_backward(Ones3(2, 3, 4), Ones3(2, 3, 4), Ones3(2, 3, 4), std::nullopt, Ones3(2, 2, 4)); });
  ExpectCleanError(fn, "k of other heads", [] { attention_backward(Ones3(2, 3, 4), Ones3(1, 3, 4), Ones3(2, 3, 4), std::nullopt, Ones3(2, 3, 4)); });
  ExpectCleanError(fn, "v of another length", [] { attention_backward(Ones3(2, 3, 4), Ones3(2, 3, 4), Ones3(2, 2, 4), std::nullopt, Ones3(2, 3, 4)); });
  ExpectCleanError(fn, "a mask of the wrong shape", [] { attention_backward(Ones3(2, 3, 4), Ones3(2, 3, 4), Ones3(2, 3, 4), Ones2(2, 2), Ones3(2, 3, 4)); });
  ExpectNoBreak(fn, "zero heads", [] { attention_backward(Ones3(0, 3, 4), Ones3(0, 3, 4), Ones3(0, 3, 4), std::nullopt, Ones3(0, 3, 4)); });
  ExpectNoBreak(fn, "NaN and inf", [] { attention_backward(WithNonFinite(Ones3(2, 3, 4)), Ones3(2, 3, 4), Ones3(2, 3, 4), std::nullopt, WithNonFinite(Ones3(2, 3, 4))); });
}

TEST_F(CallBackFuzz, CompressRefusesABrokenLayerAndBadInputs) {
  const std::string fn = "MultiHeadLatentAttention::compress";
  using L = MultiHeadLatentAttention;
  const std::vector<std::pair<std::string, std::function<void(L&)>>> broken = {
      {"W_DKV of one row", [](L& l) { l.W_DKV = Ones2(1, 4); }},
      {"kv_rank larger than W_DKV", [](L& l) { l.kv_rank = 64; }},
      {"empty weights", [](L& l) { l.W_Q = l.W_DKV = l.W_UK = l.W_UV = l.W_O = Ones2(0, 0); }},
      {"n_heads * d_head != d_model", [](L& l) { l.n_heads = 8; }},
  };
  for (const auto& b : broken) {
    const std::string& what = b.first;
    L layer(8, 2, 4, 1);
    b.second(layer);
    ExpectCleanError(fn, what, [&] { layer.compress(Ones2(3, 8)); });
  }
  const L layer(8, 2, 4, 1);
  ExpectCleanError(fn, "x of 7 columns", [&] { layer.compress(Ones2(3, 7)); });
  ExpectNoBreak(fn, "NaN and inf", [&] { layer.compress(WithNonFinite(Ones2(3, 8))); });
}

TEST_F(CallBackFuzz, RopeRejectsBadSizesStartsAndBases) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int n : {0, -3}) {  // (a huge n is a valid table, and slow to fill: not here)
    ExpectCleanError("rope_angles", "n_positions=" + std::to_string(n), [n] { rope_angles(n, 8); });
  }
  for (int d : {0, 1, 5, -4}) {
    ExpectCleanError("rope_angles", "d_head=" + std::to_string(d), [d] { rope_angles(4, d); });
  }
  for (double base : {1.0, 0.5, -2.0, nan}) {
    ExpectCleanError("rope_angles", "base=" + std::to_string(base), [base] { rope_angles(4, 8, base); });
    ExpectCleanError("apply_rope", "base=" + std::to_string(base), [base] { apply_rope(Ones3(2, 3, 4), 0, base); });
  }
  ExpectCleanError("apply_rope", "an odd d_head", [] { apply_rope(Ones3(2, 3, 5)); });
  ExpectCleanError("apply_rope", "d_head 0", [] { apply_rope(Ones3(2, 3, 0)); });
  ExpectCleanError("apply_rope", "start=-1", [] { apply_rope(Ones3(2, 3, 4), -1); });
  ExpectNoBreak("apply_rope", "zero heads", [] { apply_rope(Ones3(0, 3, 4)); });
  ExpectNoBreak("apply_rope", "a start near 2^31", [] { apply_rope(Ones3(1, 3, 4), (1 << 30) + ((1 << 30) - 4)); });
  ExpectNoBreak("apply_rope", "NaN and inf", [] { apply_rope(WithNonFinite(Ones3(2, 3, 4))); });
  ExpectNoBreak("rope_angles", "infinity as base", [] { rope_angles(3, 4, std::numeric_limits<double>::infinity()); });
}

TEST_F(CallBackFuzz, RotaryAttentionRefusesBadSizesABrokenLayerAndBadInputs) {
  struct Sizes {
    int d, h;
    double base;
  };
  for (const Sizes s : {Sizes{0, 1, 1e4}, {8, 0, 1e4}, {8, 3, 1e4}, {6, 2, 1e4}, {8, 2, 1.0}, {kHuge, 2, 1e4}}) {
    if (s.d == kHuge && !kHugeSizes) continue;
    ExpectCleanError("RotaryAttention::RotaryAttention", "bad sizes or base",
                     [s] { RotaryAttention(s.d, s.h, 1, s.base); });
  }
  using L = RotaryAttention;
  const std::vector<std::pair<std::string, std::function<void(L&)>>> broken = {
      {"W_O of one row", [](L& l) { l.W_O = Ones2(1, 8); }},
      {"W_K of 9 columns", [](L& l) { l.W_K = Ones2(8, 9); }},
      {"empty weights", [](L& l) { l.W_Q = l.W_K = l.W_V = l.W_O = Ones2(0, 0); }},
      {"n_heads * d_head > d_model", [](L& l) { l.n_heads = 4; l.d_head = 8; }},
      {"an odd d_head", [](L& l) { l.n_heads = 8; l.d_head = 1; }},
      {"base 1", [](L& l) { l.base = 1.0; }},
      {"base NaN", [](L& l) { l.base = std::numeric_limits<double>::quiet_NaN(); }},
      {"negative sizes", [](L& l) { l.n_heads = -2; l.d_head = -4; }},
  };
  const Tensor2 x = Ones2(4, 8);
  for (const auto& b : broken) {
    L layer(8, 2, 1);
    b.second(layer);
    ExpectCleanError("RotaryAttention::forward", b.first, [&] { layer.forward(x); });
  }
  const L layer(8, 2, 1);
  ExpectCleanError("RotaryAttention::forward", "x of 7 columns", [&] { layer.forward(Ones2(4, 7)); });
  ExpectCleanError("RotaryAttention::forward", "a (3, 3) mask for T=4", [&] { layer.forward(x, Ones2(3, 3)); });
  ExpectCleanError("RotaryAttention::forward", "start=-2", [&] { layer.forward(x, std::nullopt, -2); });
  ExpectNoBreak("RotaryAttention::forward", "T=0", [&] { layer.forward(Ones2(0, 8)); });
  ExpectNoBreak("RotaryAttention::forward", "NaN and inf", [&] { layer.forward(WithNonFinite(Ones2(4, 8)), WithNonFinite(Ones2(4, 4))); });
}

TEST_F(CallBackFuzz, LayerNormAndGeluRejectMismatchedShapesAndEps) {
  const Tensor1 four = xt::ones<float>({4}), five = xt::ones<float>({5});
  ExpectCleanError("layer_norm", "gamma of 5 for 4 columns", [&] { layer_norm(Ones2(3, 4), five, four); });
  ExpectCleanError("layer_norm", "beta of 5 for 4 columns", [&] { layer_norm(Ones2(3, 4), four, five); });
  ExpectCleanError("layer_norm", "eps 0", [&] { layer_norm(Ones2(3, 4), four, four, 0.0f); });
  ExpectCleanError("layer_norm", "eps NaN", [&] { layer_norm(Ones2(3, 4), four, four, kNan); });
  ExpectCleanError("layer_norm", "no columns", [&] { layer_norm(Ones2(3, 0), Tensor1(xt::ones<float>({0})), Tensor1(xt::ones<float>({0}))); });
  ExpectCleanError("layer_norm_backward", "dy of another shape", [&] { layer_norm_backward(Ones2(3, 4), four, 1.0f, Ones2(2, 4)); });
  ExpectCleanError("layer_norm_backward", "gamma of 5", [&] { layer_norm_backward(Ones2(3, 4), five, 1.0f, Ones2(3, 4)); });
  ExpectNoBreak("layer_norm", "no rows", [&] { layer_norm(Ones2(0, 4), four, four); });
  ExpectNoBreak("layer_norm", "NaN and inf", [&] { layer_norm(WithNonFinite(Ones2(3, 4)), four, four); });
  ExpectNoBreak("layer_norm_backward", "NaN and inf", [&] { layer_norm_backward(WithNonFinite(Ones2(3, 4)), four, 1.0f, WithNonFinite(Ones2(3, 4))); });
  ExpectCleanError("gelu_backward", "dy of another shape", [] { gelu_backward(Ones2(3, 4), Ones2(3, 5)); });
  ExpectNoBreak("gelu", "an empty matrix", [] { gelu(Ones2(0, 0)); });
  ExpectNoBreak("gelu", "NaN and inf", [] { gelu(WithNonFinite(Ones2(3, 4))); });
  ExpectNoBreak("gelu_backward", "NaN and inf", [] { gelu_backward(WithNonFinite(Ones2(3, 4)), Ones2(3, 4)); });
  ExpectCleanError("rope_backward", "an odd d_head", [] { rope_backward(Ones3(2, 3, 5)); });
  ExpectCleanError("rope_backward", "start=-1", [] { rope_backward(Ones3(2, 3, 4), -1); });
  ExpectCleanError("rope_backward", "base NaN", [] { rope_backward(Ones3(2, 3, 4), 0, std::numeric_limits<double>::quiet_NaN()); });
  ExpectNoBreak("rope_backward", "NaN and inf", [] { rope_backward(WithNonFinite(Ones3(2, 3, 4))); });
}

TEST_F(CallBackFuzz, FeedForwardAndBlocksRefuseBadSizesBrokenObjectsAndBadInputs) {
  for (const auto& s : {std::pair<int, int>{0, 4}, {4, 0}, {-4, 2}, {kHuge, kHuge}}) {
    if (s.first == kHuge && !kHugeSizes) continue;
    ExpectCleanError("FeedForward::FeedForward", "bad sizes", [s] { FeedForward(s.first, s.second, 1); });
  }
  using F = FeedForward;
  const std::vector<std::pair<std::string, std::function<void(F&)>>> broken_ffn = {
      {"W_1 of one row", [](F& f) { f.W_1 = Ones2(1, 6); }},
      {"b_1 of 7", [](F& f) { f.b_1 = xt::ones<float>({7}); }},
      {"W_2 transposed", [](F& f) { f.W_2 = Ones2(4, 6); }},
      {"d_ff past its weights", [](F& f) { f.d_ff = 64; }},
      {"d_model 0", [](F& f) { f.d_model = 0; }},
  };
  for (const auto& b : broken_ffn) {
    F ffn(4, 6, 1);
    b.second(ffn);
    ExpectCleanError("FeedForward::forward", b.first, [&] { ffn.forward(Ones2(3, 4)); });
    ExpectCleanError("FeedForward::parameter_count", b.first, [&] { ffn.parameter_count(); });
    ExpectCleanError("feed_forward_backward", b.first, [&] { feed_forward_backward(ffn, Ones2(3, 4), Ones2(3, 4)); });
  }
  const F ffn(4, 6, 1);
  ExpectCleanError("FeedForward::forward", "x of 5 columns", [&] { ffn.forward(Ones2(3, 5)); });
  ExpectCleanError("feed_forward_backward", "dy of another shape", [&] { feed_forward_backward(ffn, Ones2(3, 4), Ones2(2, 4)); });
  ExpectNoBreak("feed_forward_backward", "NaN and inf", [&] { feed_forward_backward(ffn, WithNonFinite(Ones2(3, 4)), WithNonFinite(Ones2(3, 4))); });

  const RotaryAttention attn(8, 2, 1);
  ExpectCleanError("rotary_attention_backward", "x of 7 columns", [&] { rotary_attention_backward(attn, Ones2(3, 7), std::nullopt, Ones2(3, 7)); });
  ExpectCleanError("rotary_attention_backward", "a (4, 4) mask for T=3", [&] { rotary_attention_backward(attn, Ones2(3, 8), Ones2(4, 4), Ones2(3, 8)); });
  ExpectCleanError("rotary_attention_backward", "d_y of another shape", [&] { rotary_attention_backward(attn, Ones2(3, 8), std::nullopt, Ones2(2, 8)); });
  ExpectNoBreak("rotary_attention_backward", "NaN and inf", [&] { rotary_attention_backward(attn, WithNonFinite(Ones2(3, 8)), std::nullopt, Ones2(3, 8)); });

  struct Sizes {
    int d, h, f;
  };
  for (const Sizes s : {Sizes{8, 2, 0}, {8, 3, 16}, {6, 2, 16}, {0, 1, 4}, {kHuge, 2, kHuge}}) {
    if (s.d == kHuge && !kHugeSizes) continue;
    ExpectCleanError("TransformerBlock::TransformerBlock", "bad sizes", [s] { TransformerBlock(s.d, s.h, s.f, 1); });
  }
  using B = TransformerBlock;
  const std::vector<std::pair<std::string, std::function<void(B&)>>> broken_block = {
      {"ln1_gamma of 7", [](B& b) { b.ln1_gamma = xt::ones<float>({7}); }},
      {"ln2_beta empty", [](B& b) { b.ln2_beta = xt::ones<float>({0}); }},
      {"d_model unlike attn's", [](B& b) { b.d_model = 16; }},
      {"d_ff unlike the ffn's", [](B& b) { b.d_ff = 3; }},
      {"an attn with W_O of one row", [](B& b) { b.attn.W_O = Ones2(1, 8); }},
      {"an ffn with W_1 of one row", [](B& b) { b.ffn.W_1 = Ones2(1, 12); }},
      {"n_heads 0", [](B& b) { b.n_heads = 0; }},
  };
  const Tensor2 x = Ones2(3, 8);
  for (const auto& b : broken_block) {
    B block(8, 2, 12, 1);
    b.second(block);
    ExpectCleanError("TransformerBlock::forward", b.first, [&] { block.forward(x); });
    ExpectCleanError("TransformerBlock::attention_weights", b.first, [&] { block.attention_weights(x); });
    ExpectCleanError("TransformerBlock::parameter_count", b.first, [&] { block.parameter_count(); });
    ExpectCleanError("block_backward", b.first, [&] { block_backward(block, x, x); });
  }
  const B block(8, 2, 12, 1);
  ExpectCleanError("TransformerBlock::forward", "x of 7 columns", [&] { block.forward(Ones2(3, 7)); });
  ExpectCleanError("TransformerBlock::forward", "no rows", [&] { block.forward(Ones2(0, 8)); });
  ExpectCleanError("block_backward", "dy of another shape", [&] { block_backward(block, x, Ones2(2, 8)); });
  ExpectNoBreak("block_backward", "NaN and inf", [&] { block_backward(block, WithNonFinite(Ones2(3, 8)), WithNonFinite(Ones2(3, 8))); });
}

// A valid cache, then one change to its private state (as a learner's
// process can send any bytes for it).
TEST_F(CallBackFuzz, KVCacheMethodsRefuseABrokenCache) {
  using Change = std::function<void(int&, int&, int&, int&, Tensor3&, Tensor3&)>;
  const std::vector<std::pair<std::string, Change>> broken = {
      {"length past capacity", [](int&, int&, int&, int& length, Tensor3&, Tensor3&) { length = 99; }},
      {"negative length", [](int&, int&, int&, int& length, Tensor3&, Tensor3&) { length = -1; }},
      {"capacity past its buffers", [](int&, int&, int& capacity, int&, Tensor3&, Tensor3&) { capacity = 1 << 20; }},
      {"empty buffers", [](int&, int&, int&, int&, Tensor3& k, Tensor3& v) { k = v = Ones3(0, 0, 0); }},
      {"buffers of other heads", [](int&, int&, int&, int&, Tensor3& k, Tensor3&) { k = Ones3(1, 4, 3); }},
      {"d_head 0", [](int&, int& d_head, int&, int&, Tensor3&, Tensor3&) { d_head = 0; }},
      {"n_kv_heads past its buffers", [](int& h, int&, int&, int&, Tensor3&, Tensor3&) { h = 64; }},
  };
  for (const auto& b : broken) {
    const std::string& what = b.first;
    const Change& change = b.second;
    const auto broken_cache = [&change] {
      KVCache c(2, 3, 4);
      auto [h, d, cap, len, k, v] = remote::Access::Fields(c);
      change(h, d, cap, len, k, v);
      return c;
    };
    ExpectCleanError("KVCache::append", what, [&] { broken_cache().append(Ones3(2, 1, 3), Ones3(2, 1, 3)); });
    ExpectCleanError("KVCache::keys", what, [&] { broken_cache().keys(); });
    ExpectCleanError("KVCache::values", what, [&] { broken_cache().values(); });
    ExpectCleanError("KVCache::length", what, [&] { broken_cache().length(); });
    ExpectCleanError("KVCache::capacity", what, [&] { broken_cache().capacity(); });
    ExpectCleanError("KVCache::bytes", what, [&] { broken_cache().bytes(); });
    ExpectCleanError("KVCache::clear", what, [&] { broken_cache().clear(); });
  }
  struct Sizes {
    int h, d, cap;
  };
  for (const Sizes s : {Sizes{0, 3, 4}, {2, -1, 4}, {2, 3, -4}, {1 << 20, 1 << 20, 1 << 20}}) {
    if (s.h == 1 << 20 && !kHugeSizes) continue;
    ExpectCleanError("KVCache::KVCache", "bad sizes", [s] { KVCache(s.h, s.d, s.cap); });
  }
  KVCache c(2, 3, 4);
  ExpectCleanError("KVCache::append", "k of other heads", [&] { c.append(Ones3(1, 1, 3), Ones3(1, 1, 3)); });
  ExpectCleanError("KVCache::append", "past capacity", [&] { c.append(Ones3(2, 5, 3), Ones3(2, 5, 3)); });
  ExpectCleanError("KVCache::append", "zero new positions", [&] { c.append(Ones3(2, 0, 3), Ones3(2, 0, 3)); });
  ExpectNoBreak("KVCache::append", "NaN and inf", [&] { c.append(WithNonFinite(Ones3(2, 1, 3)), WithNonFinite(Ones3(2, 1, 3))); });
}

// Lab 11's decoder (lab 15's call surface: a GptDecoder holds one per block).
TEST_F(CallBackFuzz, RotaryDecoderRefusesABrokenLayerOrStateAndBadSteps) {
  RotaryAttention layer(8, 2, 1), broken(8, 2, 1);
  broken.base = 0.5;
  ExpectCleanError("RotaryDecoder::RotaryDecoder", "base 0.5", [&] { RotaryDecoder(broken, 4); });
  ExpectCleanError("RotaryDecoder::RotaryDecoder", "capacity=0", [&] { RotaryDecoder(layer, 0); });
  RotaryDecoder decoder(layer, 3), other_heads(layer, 3), no_layer(layer, 3);
  ExpectCleanError("RotaryDecoder::step", "x of 7 columns", [&] { decoder.step(Ones2(1, 7)); });
  ExpectCleanError("RotaryDecoder::step", "past capacity", [&] { decoder.step(Ones2(4, 8)); });
  ExpectNoBreak("RotaryDecoder::step", "NaN and inf", [&] { decoder.step(WithNonFinite(Ones2(2, 8))); });
  ExpectNoBreak("RotaryDecoder::cache", "a valid decoder", [&] { decoder.cache(); });
  std::get<1>(remote::Access::Fields(other_heads)) = KVCache(4, 2, 3);  // cache_
  std::get<0>(remote::Access::Fields(no_layer)) = nullptr;               // layer_
  for (RotaryDecoder* d : {&other_heads, &no_layer}) {
    ExpectCleanError("RotaryDecoder::step", "a broken decoder", [&] { d->step(Ones2(1, 8)); });
    ExpectCleanError("RotaryDecoder::cache", "a broken decoder", [&] { d->cache(); });
  }
}

// Every name of every lab's call surface was called above (this test runs last
// in this file: GoogleTest runs a file's tests in order).
TEST_F(CallBackFuzz, CoversEveryFunctionOfEveryCallSurface) {
  std::ifstream in("labs/labs.json");
  ASSERT_TRUE(in) << "labs/labs.json not found in the test's runfiles";
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  std::set<std::string> surface;
  for (std::size_t at = s.find("\"calls\""); at != std::string::npos;
       at = s.find("\"calls\"", at + 1)) {
    const std::size_t open = s.find('[', at), close = s.find(']', open);
    const std::string list = s.substr(open + 1, close - open - 1);
    for (std::size_t q = list.find('"'); q != std::string::npos;) {
      const std::size_t end = list.find('"', q + 1);
      surface.insert(list.substr(q + 1, end - q - 1));
      q = list.find('"', end + 1);
    }
  }
  ASSERT_FALSE(surface.empty());
  for (const auto& name : surface) {
    EXPECT_TRUE(Covered().count(name)) << name << " is on a call surface but not fuzzed here";
  }
}

}  // namespace
}  // namespace mha
