// The sentences the test helpers print, written once as templates.
//
//   Fill(kShapeMismatch, {{"actual_shape", "(2, 3)"}, {"expected_shape", "(3, 2)"}})
//       == "shape mismatch: actual (2, 3), expected (3, 2)"
//
// Each %(name)s is one value. `./lab translate` copies every k... template of
// this file into the terminal's catalogue, po/cli/<lang>.po (context "test",
// with the comment above it for the translator), and a test that runs in a
// learner's language prints the catalogue's sentence in place of the English
// one (common/testing/translation.h). Tests keep printing, and the grader
// keeps reading, the English: a translation is made only where the learner
// reads it.
//
// What a translator may move about is the words; the values come back as
// they were printed. For the English text to be read back into its values,
// a template starts and ends with words, or with a value of a kind that
// cannot swallow its neighbours (translation.h lists the kinds by name:
// `count`, `doc`, `mistake`, ...), and never puts two values side by side.
//
// The names of the axes in an index ("[head 1, query 2, key 0]") are the
// tests' own: ./lab translate finds them where the public tests name them
// (a `...Axes = {...}` list, or the list after AllClose's or MatchesGolden's
// tolerance) and puts each in the catalogue under the context "axis".
#ifndef MHA_COMMON_TESTING_SENTENCES_H_
#define MHA_COMMON_TESTING_SENTENCES_H_

#include <string>
#include <utility>
#include <vector>

namespace mha {
namespace testing {

// The values of one sentence, by name.
using SentenceValues = std::vector<std::pair<std::string, std::string>>;

// `sentence` with each %(name)s replaced by its value in `values` (a name
// without a value stays as written) and each %% by %.
std::string Fill(const std::string& sentence, const SentenceValues& values);

// The exception of a stub (labs/NN_name/<target>.cc as the kit ships it,
// written by ./lab new): the learner has not written this function yet.
inline constexpr char kNotImplemented[] =
    "lab %(lab)s: %(function)s is not implemented yet, see %(doc)s";

// A classic mistake (MistakeTable::Named): what the learner did, and the
// lesson whose section "Classic mistakes" explains it.
inline constexpr char kSeeClassicMistakes[] = "%(mistake)s; see %(doc)s, \"Classic mistakes\"";

// The same, when the numbers match what the mistake computes
// (MistakeTable::LooksLike, MatchesGolden): a diagnosis.
inline constexpr char kLooksLike[] = "looks like %(mistake)s; see %(doc)s, \"Classic mistakes\"";

// MatchesGolden, after the diagnosis: the golden file the numbers were
// compared with, then AllClose's account of them.
inline constexpr char kCheckedAgainst[] = "(checked against %(golden)s: ";

// MatchesGolden when no classic mistake matches: the golden file, then
// AllClose's account of the numbers.
inline constexpr char kComparedWith[] = "vs %(golden)s: ";

// AllClose: how many numbers are out of tolerance, where the first one is
// (an index such as "[head 1, query 2, key 0]", its axes named as the test
// names them) and where the largest error is, with both values at each place.
inline constexpr char kElementsDiffer[] =
    "%(count)s of %(total)s elements differ; first at %(first_index)s: actual %(actual)s, "
    "expected %(expected)s; max |error| %(error)s at %(worst_index)s: actual %(worst_actual)s, "
    "expected %(worst_expected)s (atol %(atol)s, rtol %(rtol)s)";

// AllClose on tensors of different shapes.
inline constexpr char kShapeMismatch[] =
    "shape mismatch: actual %(actual_shape)s, expected %(expected_shape)s";

// ThrowsInvalidArgument: the right exception, but its message leaves out a
// value it must name.
inline constexpr char kMessageOmits[] =
    "std::invalid_argument was thrown, but its message \"%(message)s\" does not mention "
    "\"%(value)s\"";

// ThrowsInvalidArgument: another exception (its own message follows).
inline constexpr char kOtherException[] =
    "expected std::invalid_argument, got another exception: %(what)s";

// ThrowsInvalidArgument: something thrown that is not a std::exception.
inline constexpr char kNonStandardException[] =
    "expected std::invalid_argument, got a non-standard exception";

// ThrowsInvalidArgument: nothing thrown at all.
inline constexpr char kReturnedNormally[] =
    "expected std::invalid_argument, but the call returned normally";

// DecodeInChunks (labs 8 and 11): a decoder's step rejected valid input
// (its exception's message follows).
inline constexpr char kStepThrew[] =
    "step threw std::invalid_argument on a valid input (%(new_count)s new tokens after "
    "%(cached_count)s): %(what)s";

// DecodeInChunks: a step returned the wrong shape.
inline constexpr char kStepShape[] =
    "step of %(new_count)s tokens after %(cached_count)s returned shape %(actual_shape)s, expected "
    "%(expected_shape)s";

// Lab 1's split_heads, read back element by element (x[t][c] = 100*t + c,
// so every value says where it came from): the axes of its answer's shape,
// then an element (such as "heads[0, 1, 0]") whose value is no value of x or
// came from the wrong place (such as "x[0, 3]"). Each template starts with a
// word ("heads"), so that the English can be read back into its values.
inline constexpr char kHeadsAxisZero[] = "the answer's axis 0 must be the heads";
inline constexpr char kHeadsAxisOne[] = "the answer's axis 1 must be the tokens";
inline constexpr char kHeadsAxisTwo[] = "the answer's axis 2 must be d_head = d_model / n_heads";
inline constexpr char kNoValueOfX[] = "heads%(element_index)s = %(value)s is no value of x";
inline constexpr char kWrongToken[] =
    "heads%(element_index)s holds x%(source_index)s, a value of another token: axis 1 must run "
    "along the tokens";
inline constexpr char kWrongHead[] =
    "heads%(element_index)s holds x%(source_index)s, a column of another head: axis 0 must pick "
    "head %(head)s's block of columns";
inline constexpr char kWrongColumn[] =
    "heads%(element_index)s holds x%(source_index)s, another column of its block: axis 2 must "
    "run along the block's columns";

// Lab 1: combine_heads of NumPy's own split must give NumPy's input back.
inline constexpr char kCombineUndoesSplit[] =
    "combine_heads of NumPy's split_heads(x) must give x back";

// Lab 2: attention_batched is compared with the learner's attention_loop,
// which must first give the golden case.
inline constexpr char kLoopPrecondition[] =
    "precondition: attention_loop must give the golden masked case before attention_batched "
    "is compared with it";

}  // namespace testing
}  // namespace mha

#endif  // MHA_COMMON_TESTING_SENTENCES_H_
