// Lab 15's corpus: a verb grammar in English and Spanish (given, not graded).
//
// Word-level tokens, 64 of them, with suffixes as tokens of their own ("he
// work s", "él trabaj a"), so that agreement is one token the model must
// choose:
//
//   ids    tokens
//   0-3    <bos> <eos> , /
//   4-11   I you he she yo tú él ella
//   12-14  will s ed
//   15-23  Spanish -ar endings: present o as a, preterite é aste ó, future aré arás ará
//   24-45  11 regular verbs, English stem then Spanish stem: work trabaj, walk camin,
//          talk habl, listen escuch, look mir, help ayud, call llam, jump salt,
//          paint pint, clean limpi, cook cocin
//   46-51  English past irregular, Spanish regular: buy bought compr, sing sang cant
//   52-63  go goes went, and ir's forms voy vas va fui fuiste fue iré irás irá
//
// English: the present adds "s" after he and she, the past adds "ed" (bought,
// sang and went are whole), the future is "will" + stem. Spanish: pronoun +
// stem + the ending of the tense and person; ir in whole forms. A sentence is
// one verb in one tense said by three distinct pronouns of I, you, he, she in
// some order, then its Spanish translation in the same order:
//
//   <bos> I walk , you walk , he walk s / yo camin o , tú camin as , él camin a <eos>
//   <bos> she went , I went , you went / ella fue , yo fui , tú fuiste <eos>
//
// 14 verbs x 3 tenses x 24 pronoun orders = 1,008 sentences of at most 25
// tokens. Held out, to measure generalisation: the whole (verb, tense) pairs
// (walk, present), (listen, present), (help, past) and (cook, future), 96
// sentences no training step sees; each of their verbs is seen in its other
// tenses, so a model that predicts "he walk" -> "s" has learnt the rule, not
// the sentence. Irregular verbs are never held out.
//
// The grammar fixes most next tokens: once the first clause has said its verb
// and tense, the later clauses' verbs, their "s", "ed" or "will", and the whole
// Spanish half follow. decisions() lists those positions, each with what
// decides it; the others (the first clause's pronoun, verb and tense, the
// later clauses' pronouns) are the corpus's free choices, which no model can
// predict better than by guessing.
//
// Lesson: docs/15_mini_gpt.md, "The corpus".
#ifndef MHA_LABS_15_MINI_GPT_VERB_GRAMMAR_H_
#define MHA_LABS_15_MINI_GPT_VERB_GRAMMAR_H_

#include <array>
#include <string>
#include <vector>

namespace mha::grammar {

// The 64 tokens, by id.
const std::vector<std::string>& tokens();
// The id of a token ("walk" -> 26). Unknown: std::invalid_argument naming it.
int id(const std::string& token);
// The tokens joined by spaces. An id outside [0, 64): std::invalid_argument.
std::string text(const std::vector<int>& ids);

enum class Tense { kPresent, kPast, kFuture };

// verb: 0..13 in the table's order (work, walk, talk, listen, look, help,
// call, jump, paint, clean, cook, buy, sing, go); pronouns: the English
// pronouns said, in order, as 0..3 for I, you, he, she; ids: the whole
// sentence, <bos> to <eos>.
struct Sentence {
  int verb;
  Tense tense;
  std::array<int, 3> pronouns;
  std::vector<int> ids;
};

// The 1,008 sentences, ordered by verb, then tense, then pronoun order (the
// 24 orders in lexicographic order: 0 1 2, 0 1 3, 0 2 1, ..., 3 2 1).
std::vector<Sentence> all_sentences();

struct Split {
  std::vector<Sentence> train, held_out;  // 912 and 96, each in all_sentences()'s order
};
Split split();

// The positions t whose next token ids[t + 1] the grammar fixes: the prefix
// ids[0..t] has exactly one continuation over all 1,008 sentences (the other
// positions are the corpus's free choices: the first clause's pronoun, verb
// and tense, and the later clauses' pronouns). Each with what decides it.
// In the English half (targets up to and including "/"): kEnglishAgreement
// when ids[t] is one of the 13 English stems that take "-s" (every verb but
// go) and the target is "s", "," or "/" (the -s slot: "he walk" -> "s", "you
// walk" -> ","), or the target is "go" or "goes"; kOther otherwise ("ed",
// "will", a repeated verb, "I go" -> ","). After "/": kSpanishPronoun,
// kSpanishStem or kSpanishForm by the target's kind (a Spanish pronoun; a
// Spanish stem; an ending or a whole form of ir), kOther otherwise (",",
// "<eos>"). A sentence outside the corpus has a decision wherever its prefix
// has one continuation in the corpus and its next token is that one.
enum class Category { kEnglishAgreement, kSpanishForm, kSpanishStem, kSpanishPronoun, kOther };
struct Decision {
  int position;
  int target;
  Category category;
};
std::vector<Decision> decisions(const Sentence& s);  // in increasing position
// "english_agreement", "spanish_form", "spanish_stem", "spanish_pronoun" or
// "other": a category as train_mini_gpt's --json and the tests name it.
const char* category_name(Category c);

// The loss per predicted position (nats) of the best possible model of
// `train`, one that knows every sentence and how often it occurs: the
// entropy of the sentences, sum_s -ln p(s), over their len - 1 predicted
// positions. For the 912 training sentences, ln 912 / 23.01 = 0.2962. An
// empty list: std::invalid_argument.
double entropy_floor(const std::vector<Sentence>& train);

}  // namespace mha::grammar

#endif  // MHA_LABS_15_MINI_GPT_VERB_GRAMMAR_H_
