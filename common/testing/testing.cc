#include "common/testing/testing.h"

#include <cmath>
#include <cstdlib>
#include <random>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <xtensor/xnpy.hpp>

#include "common/core/shape_string.h"
#include "common/testing/sentences.h"

namespace mha {
namespace testing {
namespace {

// Row-major flat index -> "[head 1, query 2, key 0]" (or "[1, 2, 0]").
std::string IndexString(std::size_t flat, const std::vector<std::size_t>& shape,
                        const std::vector<std::string>& names) {
  std::vector<std::size_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::ostringstream out;
  out << "[";
  for (std::size_t d = 0; d < idx.size(); ++d) {
    if (d) out << ", ";
    if (names.size() == shape.size()) out << names[d] << " ";
    out << idx[d];
  }
  out << "]";
  return out.str();
}

// The diagnosis of a mistake: "looks like <its words>; see <its lesson>,
// \"Classic mistakes\"", or "looks like " and the message of a mistake
// that came without its words and lesson.
std::string LooksLikeSentence(const Misconception& mistake, const std::string& message) {
  if (mistake.words.empty() || mistake.doc.empty()) return "looks like " + message;
  return Fill(kLooksLike, {{"mistake", mistake.words}, {"doc", mistake.doc}});
}

// A number as the messages print it: 7 significant digits, "0.7897463".
template <class T>
std::string Number(T value) {
  std::ostringstream out;
  out.precision(7);
  out << value;
  return out.str();
}

}  // namespace

::testing::AssertionResult AllCloseFlat(const std::vector<std::size_t>& actual_shape,
                                        const float* actual,
                                        const std::vector<std::size_t>& expected_shape,
                                        const float* expected, Tolerance tol,
                                        const std::vector<std::string>& axis_names) {
  if (actual_shape != expected_shape) {
    return ::testing::AssertionFailure()
           << Fill(kShapeMismatch, {{"actual_shape", shape_string(actual_shape)},
                                    {"expected_shape", shape_string(expected_shape)}});
  }
  std::size_t n = 1;
  for (std::size_t s : actual_shape) n *= s;

  std::size_t bad = 0, first = 0, worst = 0;
  double worst_err = -1.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double a = actual[i], e = expected[i];
    bool ok;
    double err;
    if (std::isnan(a) || std::isnan(e)) {
      ok = std::isnan(a) && std::isnan(e);
      err = ok ? 0.0 : INFINITY;
    } else if (std::isinf(a) || std::isinf(e)) {
      ok = a == e;  // -inf in a mask must stay -inf
      err = ok ? 0.0 : INFINITY;
    } else {
      err = std::fabs(a - e);
      ok = err <= tol.atol + tol.rtol * std::fabs(e);
    }
    if (!ok) {
      if (bad == 0) first = i;
      ++bad;
    }
    if (err > worst_err) {
      worst_err = err;
      worst = i;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();

  return ::testing::AssertionFailure() << Fill(
             kElementsDiffer,
             {{"count", std::to_string(bad)},
              {"total", std::to_string(n)},
              {"first_index", IndexString(first, actual_shape, axis_names)},
              {"actual", Number(actual[first])},
              {"expected", Number(expected[first])},
              {"error", Number(worst_err)},
              {"worst_index", IndexString(worst, actual_shape, axis_names)},
              {"worst_actual", Number(actual[worst])},
              {"worst_expected", Number(expected[worst])},
              {"atol", Number(tol.atol)},
              {"rtol", Number(tol.rtol)}});
}

xt::xarray<float> LoadNpy(const std::string& path) {
  try {
    return xt::load_npy<float>(path);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot load golden " + path + ": " + e.what() +
                             " (regenerate with the lab's golden generator, in the instructors' repository)");
  }
}

::testing::AssertionResult MatchesGolden(const xt::xarray<float>& actual,
                                         const std::string& path, Tolerance tol,
                                         const std::vector<std::string>& axis_names,
                                         const std::vector<KnownMistake>& mistakes) {
  const xt::xarray<float> expected = LoadNpy(path);
  ::testing::AssertionResult result = AllClose(actual, expected, tol, axis_names);
  if (result) return result;
  for (const KnownMistake& mistake : mistakes) {
    const xt::xarray<float> wrong = LoadNpy(mistake.golden);
    if (AllClose(actual, wrong, tol)) {
      const std::string sentence = LooksLikeSentence(mistake.mistake, mistake.message);
      Misconception named = mistake.mistake;
      if (named.words.empty()) named.words = mistake.message;
      named.looks_like = true;
      RecordMisconception(std::move(named), sentence);
      return ::testing::AssertionFailure()
             << sentence << " " << Fill(kCheckedAgainst, {{"golden", path}}) << result.message()
             << ")";
    }
  }
  return ::testing::AssertionFailure()
         << Fill(kComparedWith, {{"golden", path}}) << result.message();
}

MistakeTable::MistakeTable(std::string doc,
                           std::vector<std::pair<std::string, std::string>> words)
    : doc_(std::move(doc)), words_(std::move(words)) {}

std::string MistakeTable::Message(const std::string& name) const {
  std::string what = name;
  for (const auto& [key, words] : words_) {
    if (key == name) {
      what = words;
      break;
    }
  }
  return Fill(kSeeClassicMistakes, {{"mistake", what}, {"doc", doc_}});
}

std::vector<KnownMistake> MistakeTable::Of(const std::string& golden,
                                           const std::vector<std::string>& names) const {
  std::vector<KnownMistake> out;
  for (const std::string& name : names) {
    out.push_back({golden + "_mistake_" + name + ".npy", Message(name), Mistake(name)});
  }
  return out;
}

Misconception MistakeTable::Mistake(const std::string& name) const {
  for (const auto& [key, words] : words_) {
    if (key == name) return {name, words, doc_};
  }
  return {name, name, doc_};
}

MistakeNote MistakeTable::Named(const std::string& name) const {
  return MistakeNote(Mistake(name), Message(name));
}

MistakeNote MistakeTable::LooksLike(const std::string& name) const {
  Misconception mistake = Mistake(name);
  mistake.looks_like = true;
  std::string sentence = LooksLikeSentence(mistake, Message(name));
  return MistakeNote(std::move(mistake), std::move(sentence));
}

std::ostream& operator<<(std::ostream& out, const MistakeNote& note) {
  if (!note.mistake().name.empty() || !note.mistake().words.empty()) {
    RecordMisconception(note.mistake(), note.text());
  }
  return out << note.text();
}

AttentionInputs LoadAttentionInputs(const std::string& dir, const std::string& qkv,
                                    const std::string& mask) {
  AttentionInputs in{LoadGolden<3>(dir + qkv + "_q.npy"), LoadGolden<3>(dir + qkv + "_k.npy"),
                     LoadGolden<3>(dir + qkv + "_v.npy"), std::nullopt};
  if (!mask.empty()) in.mask = LoadGolden<2>(dir + mask + "_mask.npy");
  return in;
}

std::uint64_t FreshSeed() {
  if (const char* env = std::getenv("MHA_TEST_SEED")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(env, &end, 10);
    if (end != env && *end == '\0') return v;
    throw std::runtime_error(std::string("MHA_TEST_SEED=") + env + " is not a decimal number");
  }
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

FreshDraws::FreshDraws()
    : seed_(FreshSeed()),
      trace_(__FILE__, __LINE__, "MHA_TEST_SEED=" + std::to_string(seed_)),
      gen_(seed_) {}

Tensor2 RandomTensor2(std::size_t rows, std::size_t cols, std::uint32_t seed, float scale) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  Tensor2 t = xt::empty<float>({rows, cols});
  for (auto& v : t) v = normal(gen);
  return t;
}

Tensor3 RandomTensor3(std::size_t n, std::size_t rows, std::size_t cols, std::uint32_t seed,
                      float scale) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  Tensor3 t = xt::empty<float>({n, rows, cols});
  for (auto& v : t) v = normal(gen);
  return t;
}

}  // namespace testing
}  // namespace mha
