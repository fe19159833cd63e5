// Helpers shared by every public and hidden test.
//
//   EXPECT_TRUE(AllClose(actual, expected, kAttention, {"head", "query", "key"}));
//
// AllClose compares two xtensor expressions of the same shape under one of the
// tolerances in common/testing/tolerance.h. On failure its message says where the
// largest error is (named by axis when names are given), both values there,
// where the first out-of-tolerance element is, and how many elements failed:
//
//   1 of 24 elements differ; first at [head 1, query 2, key 0]: actual 0.25,
//   expected 0.5; max |error| 0.25 there (atol 1e-05, rtol 0.0001)
//
// LoadGolden reads a .npy file written by a lab's golden generator with
// xt::load_npy and checks its rank.
#ifndef MHA_COMMON_TESTING_H_
#define MHA_COMMON_TESTING_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xarray.hpp>
#include <xtensor/xview.hpp>

#include "common/core/shape_string.h"
#include "common/tensor.h"
#include "common/testing/misconception.h"
#include "common/testing/sentences.h"
#include "common/testing/tolerance.h"

namespace mha {
namespace testing {

// The comparison behind AllClose, on flattened row-major data.
::testing::AssertionResult AllCloseFlat(const std::vector<std::size_t>& actual_shape,
                                        const float* actual,
                                        const std::vector<std::size_t>& expected_shape,
                                        const float* expected, Tolerance tol,
                                        const std::vector<std::string>& axis_names);

template <class A, class E>
::testing::AssertionResult AllClose(const A& actual, const E& expected, Tolerance tol,
                                    const std::vector<std::string>& axis_names = {}) {
  // Evaluate into row-major float containers first (inputs may be views).
  const xt::xarray<float> a = actual;
  const xt::xarray<float> e = expected;
  return AllCloseFlat({a.shape().begin(), a.shape().end()}, a.data(),
                      {e.shape().begin(), e.shape().end()}, e.data(), tol, axis_names);
}

// A classic mistake that a golden comparison can recognise: `golden` holds
// what the mistaken implementation computes on the same inputs (written by
// the lab's golden generator), `message` names the mistake and the doc
// section to read. `mistake` is the same as data for the grader
// (MistakeTable::Of fills it in; when its words are empty, `message` stands
// for them).
struct KnownMistake {
  std::string golden;
  std::string message;
  Misconception mistake = {};
};

// What a test streams after an assertion to name a classic mistake in
// words of its own: prints `text` and, when the assertion fails, records
// `mistake` for the grader (common/testing/misconception.h). MistakeTable's Named
// and LooksLike make one.
//
//   EXPECT_EQ(cache.length(), 3) << kKvCacheMistakes.LooksLike("failed_append_changes");
class MistakeNote {
 public:
  MistakeNote(Misconception mistake, std::string text)
      : mistake_(std::move(mistake)), text_(std::move(text)) {}
  const std::string& text() const { return text_; }
  const Misconception& mistake() const { return mistake_; }

 private:
  Misconception mistake_;
  std::string text_;
};

// gtest streams a failure's message only when the assertion fails, so the
// record is made exactly then. A note with an empty mistake (a hint not
// given) prints its text and records nothing.
std::ostream& operator<<(std::ostream& out, const MistakeNote& note);

// A lab's classic mistakes, each under the name its golden generator gives
// it (the <name> of <case>_mistake_<name>.npy), with the words a failure
// uses for it. A lab's public and hidden tests share one table (in the lab's
// <target>_test_util.h), so that both name each mistake alike:
//
//   const MistakeTable kMistakes("docs/03_output_projection.md",
//                                {{"no_w_o", "W_O was forgotten: ..."}, ...});
//   EXPECT_TRUE(MatchesGolden(y, dir + "plain_forward.npy", kLayer, {"token", "column"},
//                             kMistakes.Of(dir + "plain_forward", {"no_w_o"})));
class MistakeTable {
 public:
  MistakeTable(std::string doc, std::vector<std::pair<std::string, std::string>> words);

  // "<words>; see <doc>, \"Classic mistakes\"" (the name itself in place of
  // the words when the table does not know it).
  std::string Message(const std::string& name) const;

  // For each of `names`, in that order: the generator's file
  // <golden>_mistake_<name>.npy (`golden`: the golden's path without
  // ".npy") with Message(name). The first that matches names the failure.
  std::vector<KnownMistake> Of(const std::string& golden,
                               const std::vector<std::string>& names) const;

  // The mistake `name` as data: {name, its words (or the name), the doc}.
  Misconception Mistake(const std::string& name) const;

  // Message(name), and LooksLike: "looks like " + Message(name), to stream
  // after an assertion; a failure records Mistake(name) (see MistakeNote).
  MistakeNote Named(const std::string& name) const;
  MistakeNote LooksLike(const std::string& name) const;

  const std::string& doc() const { return doc_; }

 private:
  std::string doc_;
  std::vector<std::pair<std::string, std::string>> words_;
};

// Compares `actual` with the golden file at `path` (see LoadNpy). On failure,
// if `actual` matches one of `mistakes` instead, the message starts with that
// mistake's message ("looks like ...: scores scaled by 1/sqrt(d_model) ...")
// and records that mistake for the grader (common/testing/misconception.h);
// otherwise it is AllClose's message. Hidden tests use this for every
// comparison with a golden, so the grader can find them in one place.
::testing::AssertionResult MatchesGolden(const xt::xarray<float>& actual,
                                         const std::string& path, Tolerance tol,
                                         const std::vector<std::string>& axis_names = {},
                                         const std::vector<KnownMistake>& mistakes = {});

// Runs `call` and succeeds only if it throws std::invalid_argument whose
// message contains every string in `mentions` (the offending values, e.g.
// {"d_model=10", "n_heads=4"}). Any other outcome is described in the failure.
template <class F>
::testing::AssertionResult ThrowsInvalidArgument(F&& call,
                                                 const std::vector<std::string>& mentions) {
  try {
    call();
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    for (const auto& m : mentions) {
      if (what.find(m) == std::string::npos) {
        return ::testing::AssertionFailure()
               << Fill(kMessageOmits, {{"message", what}, {"value", m}});
      }
    }
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << Fill(kOtherException, {{"what", e.what()}});
  } catch (...) {
    return ::testing::AssertionFailure() << kNonStandardException;
  }
  return ::testing::AssertionFailure() << kReturnedNormally;
}

// The path of the golden array `name` in the golden folder `dir` (which ends
// in '/'): GoldenFile("labs/08_kv_cache/golden/", "gqa_x") is
// "labs/08_kv_cache/golden/gqa_x.npy".
inline std::string GoldenFile(const std::string& dir, const std::string& name) {
  return dir + name + ".npy";
}

// Reads a float32 .npy golden (path relative to the workspace root, which is
// the working directory of a Bazel test) and checks it has `N` dimensions.
xt::xarray<float> LoadNpy(const std::string& path);

template <std::size_t N>
xt::xtensor<float, N> LoadGolden(const std::string& path) {
  const xt::xarray<float> a = LoadNpy(path);
  if (a.dimension() != N) {
    throw std::runtime_error("golden " + path + " has " + std::to_string(a.dimension()) +
                             " dimensions, the test expects " + std::to_string(N));
  }
  xt::xtensor<float, N> t = a;
  return t;
}

// q (H, T, d_head), k and v (H, S, d_head) and the mask (T, S), when the
// case has one, of an attention golden case: <dir><qkv>_q.npy, _k.npy,
// _v.npy and <dir><mask>_mask.npy (no mask when `mask` is empty).
struct AttentionInputs {
  Tensor3 q, k, v;
  std::optional<Tensor2> mask;
};
AttentionInputs LoadAttentionInputs(const std::string& dir, const std::string& qkv,
                                    const std::string& mask = "");

// Deterministic standard-normal test inputs (mt19937, independent of NumpyRng).
Tensor2 RandomTensor2(std::size_t rows, std::size_t cols, std::uint32_t seed,
                      float scale = 1.0f);
Tensor3 RandomTensor3(std::size_t n, std::size_t rows, std::size_t cols,
                      std::uint32_t seed, float scale = 1.0f);

// A seed for inputs that no file in the repository can predict: the value of
// the environment variable MHA_TEST_SEED when it is set (to replay a
// failure), otherwise a fresh random one. Hidden tests draw one case of
// fresh random inputs from it and compare the learner's result with an
// independent reference computed in the test itself, so a submission that
// has memorised the outputs of every committed test case still fails.
// Print it in the failure message (SCOPED_TRACE) so the case can be replayed.
std::uint64_t FreshSeed();

// The draws of one test on fresh random inputs: a std::mt19937_64 seeded with
// FreshSeed() and, while it lives, "MHA_TEST_SEED=<seed>" in every failure
// message (a gtest trace) so that the case can be replayed. It is a random
// bit generator, so the <random> distributions take it too.
//
//   testing::FreshDraws gen;
//   const int T = gen.Pick(1, 7);                  // uniform in [1, 7]
//   const MultiHeadAttention layer(8, 2, gen());   // a 64-bit draw as a seed
class FreshDraws {
 public:
  using result_type = std::mt19937_64::result_type;
  FreshDraws();

  static constexpr result_type min() { return std::mt19937_64::min(); }
  static constexpr result_type max() { return std::mt19937_64::max(); }
  result_type operator()() { return gen_(); }
  // An integer uniform in [lo, hi].
  int Pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen_); }
  std::uint64_t seed() const { return seed_; }

 private:
  std::uint64_t seed_;
  ::testing::ScopedTrace trace_;
  std::mt19937_64 gen_;
};

// Chunk sizes that add up to T, 1 to 4 tokens each, drawn from `gen` (a
// <random> bit generator such as FreshDraws): how the decoder tests of labs 8
// and 11 feed a sequence in pieces.
template <class Gen>
std::vector<int> RandomChunks(int T, Gen& gen) {
  std::vector<int> chunks;
  for (int done = 0; done < T;) {
    const int t = std::min(T - done, std::uniform_int_distribution<int>(1, 4)(gen));
    chunks.push_back(t);
    done += t;
  }
  return chunks;
}

// No note: what DecodeInChunks adds to a step's exception when the lab names
// no mistake for it.
inline MistakeNote NoNote(const std::string&) { return MistakeNote({}, ""); }

// Feeds x (T, d_model) to a decoder (anything with `Tensor2 step(const
// Tensor2&)`: labs 8 and 11) in chunks of the given sizes and stacks the rows
// the steps return: (T, d_model). A step that throws on these valid inputs,
// or returns the wrong shape, is reported and gives no rows; `why` turns the
// exception's words into the note of the mistake they suggest.
template <class Decoder>
std::optional<Tensor2> DecodeInChunks(Decoder& decoder, const Tensor2& x,
                                      const std::vector<int>& chunks,
                                      MistakeNote (*why)(const std::string&) = NoNote) {
  Tensor2 rows = xt::zeros<float>(x.shape());  // (T, d_model)
  int P = 0;
  for (int t : chunks) {
    const Tensor2 x_new = xt::view(x, xt::range(P, P + t), xt::all());  // (t, d_model)
    Tensor2 y;
    try {
      y = decoder.step(x_new);
    } catch (const std::invalid_argument& e) {
      ADD_FAILURE() << Fill(kStepThrew, {{"new_count", std::to_string(t)},
                                         {"cached_count", std::to_string(P)},
                                         {"what", e.what()}})
                    << why(e.what());
      return std::nullopt;
    }
    if (y.shape(0) != static_cast<std::size_t>(t) || y.shape(1) != x.shape(1)) {
      ADD_FAILURE() << Fill(kStepShape,
                            {{"new_count", std::to_string(t)},
                             {"cached_count", std::to_string(P)},
                             {"actual_shape", shape_string(y)},
                             {"expected_shape", "(" + std::to_string(t) + ", " +
                                                    std::to_string(x.shape(1)) + ")"}});
      return std::nullopt;
    }
    xt::view(rows, xt::range(P, P + t), xt::all()) = y;
    P += t;
  }
  return rows;
}

}  // namespace testing
}  // namespace mha

#endif  // MHA_COMMON_TESTING_H_
