// The corpus of lab 15 (verb_grammar.h) against an independent Python
// version: tests/15_mini_gpt/verb_grammar.py (in the instructors'
// repository), written from the header's description alone, wrote
// verb_grammar_reference.txt (every sentence, its split and its
// grammar-fixed positions, and the entropy floor).
#include "labs/15_mini_gpt/verb_grammar.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace mha::grammar {
namespace {

const char* const kReference = "labs/15_mini_gpt/verb_grammar_reference.txt";

std::vector<std::string> ReferenceLines() {
  std::ifstream in(kReference);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  }
  return lines;
}

const char* TenseName(Tense t) {
  return t == Tense::kPresent ? "present" : t == Tense::kPast ? "past" : "future";
}

// One sentence as the Python writes it:
// "split verb tense pronouns | tokens | position:target:category ...".
std::string Line(const Sentence& s, bool held_out) {
  std::string line = std::string(held_out ? "held_out" : "train") + " " +
                     std::to_string(s.verb) + " " + TenseName(s.tense) + " " +
                     std::to_string(s.pronouns[0]) + std::to_string(s.pronouns[1]) +
                     std::to_string(s.pronouns[2]) + " | " + text(s.ids) + " |";
  for (const Decision& d : decisions(s)) {
    line += " " + std::to_string(d.position) + ":" + std::to_string(d.target) + ":" +
            category_name(d.category);
  }
  return line;
}

TEST(VerbGrammar, HasTheSixtyFourTokensOfTheTable) {
  ASSERT_EQ(tokens().size(), 64u);
  EXPECT_EQ(std::set<std::string>(tokens().begin(), tokens().end()).size(), 64u);
  std::string joined;
  for (const std::string& t : tokens()) joined += (joined.empty() ? "" : " ") + t;
  const std::vector<std::string> lines = ReferenceLines();
  ASSERT_FALSE(lines.empty()) << "cannot read " << kReference;
  EXPECT_EQ("tokens " + joined, lines.front());
}

TEST(VerbGrammar, IdAndTextAreInverses) {
  for (int i = 0; i < 64; ++i) EXPECT_EQ(id(tokens()[i]), i);
  EXPECT_EQ(id("walk"), 26);
  EXPECT_EQ(text({id("él"), id("camin"), id("a")}), "él camin a");
}

TEST(VerbGrammar, IdRejectsAnUnknownTokenNamingIt) {
  try {
    id("walks");
    ADD_FAILURE() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("\"walks\""), std::string::npos) << e.what();
  }
}

TEST(VerbGrammar, TextRejectsAnIdOutsideTheVocabulary) {
  EXPECT_THROW(text({0, 64}), std::invalid_argument);
  EXPECT_THROW(text({-1}), std::invalid_argument);
}

TEST(VerbGrammar, HasOneThousandAndEightSentencesOfAtMostTwentyFiveTokens) {
  const std::vector<Sentence> all = all_sentences();
  ASSERT_EQ(all.size(), 1008u);
  std::set<std::vector<int>> distinct;
  for (const Sentence& s : all) {
    EXPECT_LE(s.ids.size(), 25u) << text(s.ids);
    EXPECT_EQ(s.ids.front(), id("<bos>"));
    EXPECT_EQ(s.ids.back(), id("<eos>"));
    distinct.insert(s.ids);
  }
  EXPECT_EQ(distinct.size(), 1008u);
  EXPECT_EQ(text(all[72].ids),  // walk (72 sentences after work's), present, I you he
            "<bos> I walk , you walk , he walk s / yo camin o , tú camin as , él camin a <eos>");
}

TEST(VerbGrammar, HoldsOutFourWholeVerbTensePairs) {
  const Split s = split();
  EXPECT_EQ(s.train.size(), 912u);
  ASSERT_EQ(s.held_out.size(), 96u);
  std::set<std::pair<int, Tense>> pairs;
  for (const Sentence& h : s.held_out) pairs.insert({h.verb, h.tense});
  const std::set<std::pair<int, Tense>> expected = {
      {1, Tense::kPresent}, {3, Tense::kPresent}, {5, Tense::kPast}, {10, Tense::kFuture}};
  EXPECT_EQ(pairs, expected);
  for (const Sentence& t : s.train) EXPECT_EQ(pairs.count({t.verb, t.tense}), 0u);
}

TEST(VerbGrammar, EverySentenceAndDecisionMatchesThePythonVersion) {
  const std::vector<std::string> lines = ReferenceLines();
  ASSERT_EQ(lines.size(), 1 + 1008 + 1u) << kReference;
  const Split s = split();
  std::set<std::vector<int>> held;
  for (const Sentence& h : s.held_out) held.insert(h.ids);
  const std::vector<Sentence> all = all_sentences();
  for (std::size_t i = 0; i < all.size(); ++i) {
    ASSERT_EQ(Line(all[i], held.count(all[i].ids) > 0), lines[1 + i]) << "sentence " << i;
  }
}

TEST(VerbGrammar, EntropyFloorMatchesThePythonVersion) {
  const std::vector<std::string> lines = ReferenceLines();
  ASSERT_FALSE(lines.empty());
  double python = 0.0;
  ASSERT_EQ(std::sscanf(lines.back().c_str(), "entropy_floor %lf", &python), 1) << lines.back();
  const double floor = entropy_floor(split().train);
  EXPECT_NEAR(floor, python, 1e-9);  // tolerance: the Python wrote 9 decimals
  EXPECT_NEAR(floor, 0.2962, 5e-5);  // tolerance: the header quotes 4 decimals
}

TEST(VerbGrammar, EntropyFloorCountsARepeatedSentenceAsMoreLikely) {
  // Two sentences, one of them twice: p = 2/3 and 1/3.
  const std::vector<Sentence> all = all_sentences();
  const std::vector<Sentence> three = {all[0], all[0], all[1]};
  const double positions = 2.0 * (all[0].ids.size() - 1) + (all[1].ids.size() - 1);
  const double nats = 2 * -std::log(2.0 / 3.0) - std::log(1.0 / 3.0);
  EXPECT_NEAR(entropy_floor(three), nats / positions, 1e-12);  // tolerance: three logs, in double
}

TEST(VerbGrammar, EntropyFloorRejectsAnEmptyList) {
  EXPECT_THROW(entropy_floor({}), std::invalid_argument);
}

TEST(VerbGrammar, DecisionsOfASentenceOutsideTheCorpusStopWhereItLeavesIt) {
  // "<bos> I walk , you walk s": the corpus continues "you walk" with "," only
  // (I walk , ... is present): the "s" is no decision, nor anything after it.
  Sentence odd{1, Tense::kPresent, {0, 1, 2},
               {id("<bos>"), id("I"), id("walk"), id(","), id("you"), id("walk"), id("s"),
                id("/")}};
  const std::vector<Decision> d = decisions(odd);
  for (const Decision& x : d) EXPECT_LT(x.position, 5) << x.position;
}

}  // namespace
}  // namespace mha::grammar
