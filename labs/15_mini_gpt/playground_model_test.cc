// The playground's answers (playground_model.h) on a model of the default
// sizes: what the page draws is the model's own numbers, a head switched off
// is that head's output zeroed before W_O, and a bad request is named.
#include "labs/15_mini_gpt/playground_model.h"

#include <cmath>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <xtensor/xview.hpp>

#include "common/testing/testing.h"
#include "labs/15_mini_gpt/verb_grammar.h"

namespace mha::playground {
namespace {

using ::testing::HasSubstr;

const MiniGpt& Model() {
  static const MiniGpt model(64, 32, 64, 4, 256, 2, /*seed=*/7);
  return model;
}

const std::string kPrompt = "<bos> I walk , you walk , he walk";

std::string Ask(const std::string& tokens, const std::string& off = "",
                const std::string& mode = "greedy") {
  return OneLine(Answer(Model(), "run\ttokens=" + tokens + "\toff=" + off + "\tmode=" + mode +
                             "\ttemperature=0.8\ttop_k=0\tseed=5\tmax_new=4"));
}

// The probability the answer gives the token `id` after the last position.
double Last(const std::string& json, int id) {
  const auto at = json.find("\"last\":[");
  std::string rest = json.substr(at + 8);
  for (int k = 0; k < id; ++k) rest = rest.substr(rest.find(',') + 1);
  return std::stod(rest);
}

TEST(PlaygroundAnswer, GivesTheModelsOwnNextTokenProbabilities) {
  const std::string json = Ask(kPrompt);
  std::vector<int> ids;
  for (const char* t : {"<bos>", "I", "walk", ",", "you", "walk", ",", "he", "walk"}) {
    ids.push_back(grammar::id(t));
  }
  const Tensor2 logits = Model().logits(ids);
  const std::size_t last = ids.size() - 1;
  double sum = 0.0;
  for (std::size_t v = 0; v < 64; ++v) sum += std::exp(logits(last, v) - logits(last, 0));
  for (int v : {0, 13, 2, 40}) {
    const double expected = 1.0 / (sum * std::exp(logits(last, 0) - logits(last, v)));
    EXPECT_TRUE(mha::testing::AllClose(Tensor1{static_cast<float>(Last(json, v))},
                                       Tensor1{static_cast<float>(expected)},
                                       mha::testing::kRowOp))
        << "token " << v;
  }
  EXPECT_THAT(json, HasSubstr("\"tokens\":[\"<bos>\",\"I\",\"walk\""));
}

TEST(PlaygroundAnswer, AddsBosWhenThePromptHasNone) {
  EXPECT_EQ(Ask("he walk"), Ask("<bos> he walk"));
}

TEST(PlaygroundAnswer, DrawsEveryHeadOfEveryBlockWithLab7sLabel) {
  const std::string json = Ask("he walk");
  // 2 blocks of 4 heads of (3, 3) weights: row 0 of each head is [1, 0, 0].
  const auto at = json.find("\"attention\":");
  EXPECT_EQ(json.substr(at, 24), "\"attention\":[[[[1,0,0],[");
  std::size_t heads = 0;
  for (auto p = json.find("[[1,0,0],", at); p != std::string::npos && p < json.find("\"labels\"");
       p = json.find("[[1,0,0],", p + 1)) {
    ++heads;
  }
  EXPECT_EQ(heads, 8u);
  EXPECT_THAT(json, ::testing::ContainsRegex(
                        "\"labels\":\\[\\[(\"(induction|previous-token|self|first-token|local|"
                        "diffuse)\",?){4}\\],\\["));
}

TEST(PlaygroundAnswer, SwitchesAHeadOffByZeroingItsOutputBeforeWO) {
  MiniGpt expected = Model();
  const int d_head = expected.blocks[1].attn.d_head;
  xt::view(expected.blocks[1].attn.W_O, xt::range(2 * d_head, 3 * d_head), xt::all()) = 0.0f;
  std::vector<int> ids;
  for (const char* t : {"<bos>", "he", "walk"}) ids.push_back(grammar::id(t));
  const Tensor2 logits = expected.logits(ids);
  const std::string off = Ask("he walk", "1.2");
  const std::string on = Ask("he walk");
  EXPECT_NE(off, on);
  const double top = Last(off, 0);
  double sum = 0.0;
  for (std::size_t v = 0; v < 64; ++v) sum += std::exp(logits(2, v) - logits(2, 0));
  EXPECT_TRUE(mha::testing::AllClose(Tensor1{static_cast<float>(top)},
                                     Tensor1{static_cast<float>(1.0 / sum)},
                                     mha::testing::kRowOp));
  EXPECT_THAT(off, HasSubstr("\"off\":[[1,2]]"));
}

TEST(PlaygroundAnswer, ContinuesWithTheLabsGenerate) {
  std::vector<int> ids;
  for (const char* t : {"<bos>", "he", "walk"}) ids.push_back(grammar::id(t));
  const std::vector<int> more = generate(Model(), ids, 4, Sampling{0.0f, 0}, 1, 5);
  std::string text;
  for (int id : more) text += (text.empty() ? "\"" : ",\"") + grammar::tokens()[id] + "\"";
  EXPECT_THAT(Ask("he walk"), HasSubstr("\"continuation\":[" + text + "]"));
  EXPECT_THAT(Ask("he walk", "", "sample"), HasSubstr("\"seed\":5"));
}

TEST(PlaygroundAnswer, NamesAnUnknownTokenAndItsPosition) {
  EXPECT_EQ(Ask("he walks"), "{\"error\":\"unknown_token\",\"position\":2,\"token\":\"walks\"}");
}

TEST(PlaygroundAnswer, RefusesAnEmptyOrTooLongPrompt) {
  EXPECT_EQ(Ask(""), "{\"error\":\"empty\"}");
  std::string long_prompt;
  for (int i = 0; i < 32; ++i) long_prompt += " walk";
  EXPECT_EQ(Ask(long_prompt), "{\"error\":\"too_long\",\"length\":33,\"max\":32}");
}

TEST(PlaygroundAnswer, RefusesAHeadThatDoesNotExist) {
  for (const char* off : {"2.0", "0.4", "1", "a.b", "1.2.3", "-1.0"}) {
    EXPECT_EQ(Ask("he", off), "{\"blocks\":2,\"error\":\"bad_head\",\"heads\":4}") << off;
  }
}

TEST(PlaygroundAnswer, RefusesAValueOutOfRangeNamingIt) {
  const std::string json = OneLine(Answer(Model(), "run\ttokens=he\toff=\tmode=greedy"
                                                   "\ttemperature=9\ttop_k=0\tseed=5\tmax_new=4"));
  EXPECT_THAT(json, HasSubstr("\"error\":\"bad_value\""));
  EXPECT_THAT(json, HasSubstr("\"field\":\"temperature\""));
  EXPECT_THAT(OneLine(Answer(Model(), "drop\ttables")), HasSubstr("\"bad_request\""));
  EXPECT_THAT(OneLine(Answer(Model(), "run\ttokens=he")), HasSubstr("no field off"));
}

TEST(PlaygroundExamples, HoldTheLessonsHeldOutPromptsWithTheGrammarsAnswer) {
  const std::string json = OneLine(Examples());
  EXPECT_THAT(json, HasSubstr("{\"answer\":\"s\",\"category\":\"english_agreement\","
                              "\"prompt\":[\"<bos>\",\"I\",\"walk\",\",\",\"you\",\"walk\","
                              "\",\",\"he\",\"walk\"]}"));
  EXPECT_THAT(json, HasSubstr("\"él\",\"camin\"]}"));
  EXPECT_THAT(json, HasSubstr("{\"answer\":\"a\",\"category\":\"spanish_form\""));
}

}  // namespace
}  // namespace mha::playground
