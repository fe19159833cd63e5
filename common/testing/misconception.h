// The classic mistake a failed expectation names, kept as data for the
// grader, next to the sentence the terminal prints.
//
//   RecordMisconception({"no_scale", "scores not scaled by 1/sqrt(d_head)",
//                        "docs/02_batched_attention.md"}, sentence);
//   ...
//   std::optional<Misconception> m = TakeMisconception(part.message());
//
// The test helpers of common/testing/testing.h record a misconception when the
// failure they build names one (MatchesGolden on a known mistake's golden, a
// MistakeTable's Named or LooksLike streamed after an assertion). The grader's
// result stream (common/grading/test_results.cc) takes it when gtest reports the
// failed part whose message holds that sentence, and writes it as the
// verdict's "mistake" field, so that no report has to read it back from the
// words. A public test (no result stream) prints the same sentence and
// nothing takes the record.
#ifndef MHA_COMMON_MISCONCEPTION_H_
#define MHA_COMMON_MISCONCEPTION_H_

#include <optional>
#include <string>

namespace mha {
namespace testing {

struct Misconception {
  // The mistake's short name in its lab's MistakeTable ("no_scale"); empty
  // for a mistake a test words on its own.
  std::string name;
  // What the mistake is, as the learner reads it after "looks like".
  std::string words;
  // The lesson whose "Classic mistakes" section explains it
  // ("docs/02_batched_attention.md"); empty when `words` already says where.
  std::string doc;
  // Whether the failure printed it as a diagnosis ("looks like <words>": a
  // golden matched what the mistake computes) rather than as the rule the
  // test checks ("<words>; see ..."). A test's diagnosis is preferred over
  // the rules its other failed parts state.
  bool looks_like = false;
};

// Remembers `mistake` as the one named by the failure whose message will
// contain `sentence` (the text printed for it).
void RecordMisconception(Misconception mistake, std::string sentence);

// The first recorded misconception whose sentence is part of `failure` (a
// failed part's message), a diagnosis (looks_like) before any other, or none. Forgets every record either way: a
// record not taken by the failure that follows belongs to no failure.
std::optional<Misconception> TakeMisconception(const std::string& failure);

// Forgets every record (at the start of each test).
void ForgetMisconceptions();

}  // namespace testing
}  // namespace mha

#endif  // MHA_COMMON_MISCONCEPTION_H_
