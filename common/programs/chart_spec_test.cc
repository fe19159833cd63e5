// Json and WriteChart: the chart data every lab program writes for
// tools/plot/draw_chart.py (whose pytest draws a PNG from such a spec).
#include "common/programs/chart_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace mha {
namespace {

using ::testing::HasSubstr;

TEST(JsonTest, WritesNumbersWithAFloatsPrecision) {
  EXPECT_EQ(Json(0.1f).Dump(), "0.100000001");
  EXPECT_EQ(Json(3).Dump(), "3");
  EXPECT_EQ(Json(-2.5).Dump(), "-2.5");
  EXPECT_EQ(Json(std::size_t{4096}).Dump(), "4096");
}

TEST(JsonTest, WritesNaNAndInfinityAsNull) {
  EXPECT_EQ(Json(std::nan("")).Dump(), "null");
  EXPECT_EQ(Json(HUGE_VAL).Dump(), "null");
}

TEST(JsonTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(Json("a \"b\" \\ c\n").Dump(), "\"a \\\"b\\\" \\\\ c\\u000a\"");
}

TEST(JsonTest, WritesArraysOfNumbersAndOfStrings) {
  EXPECT_EQ(Json(std::vector<double>{1, 2.5}).Dump(), "[1,2.5]");
  EXPECT_EQ(Json(std::vector<std::string>{"x", "y"}).Dump(), "[\"x\",\"y\"]");
  EXPECT_EQ(Json::Array().Add(1).Add("two").Add(true).Add(Json()).Dump(),
            "[1,\"two\",true,null]");
}

TEST(JsonTest, WritesAnObjectsMembersInKeyOrderOneALine) {
  const Json j = Json::Object().Set("title", "t").Set("kind", "lines").Set("kind", "bars");
  EXPECT_EQ(j.Dump(), "{\"kind\":\"bars\",\n\"title\":\"t\"}");
}

TEST(JsonTest, RefusesAMemberOnAnArrayAndAnItemOnAnObject) {
  Json array = Json::Array();
  Json object = Json::Object();
  EXPECT_THROW(array.Set("k", 1), std::logic_error);
  EXPECT_THROW(object.Add(1), std::logic_error);
}

TEST(LinesChartTest, NumbersTheStepsOfASeriesWithoutX) {
  const std::string spec =
      LinesChart("t", "s", "step", "loss", {{"one", {}, {3, 2}, "line"}}).Dump();
  EXPECT_THAT(spec, HasSubstr("\"kind\":\"lines\""));
  EXPECT_THAT(spec, HasSubstr("\"x\":[0,1],\n\"y\":[3,2]"));
}

TEST(BarsChartTest, KeepsEveryBarsLabelValueAndNote) {
  const std::string spec =
      BarsChart("t", "s", "increase", {{"group", {{"head 0", -0.5, "accuracy 1"}}}}).Dump();
  EXPECT_THAT(spec, HasSubstr("\"kind\":\"bars\""));
  EXPECT_THAT(spec, HasSubstr("{\"label\":\"head 0\",\n\"note\":\"accuracy 1\",\n\"value\":-0.5}"));
}

TEST(HeatmapPanelTest, WritesTheMatrixRowByRow) {
  const float w[6] = {1, 0, 0, 0.5f, 0.5f, 0};
  EXPECT_EQ(HeatmapPanel("head 0", w, 2, 3).Dump(),
            "{\"title\":\"head 0\",\n\"values\":[[1,0,0],[0.5,0.5,0]]}");
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::filesystem::path TempDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return std::filesystem::path(tmp ? tmp : "/tmp") / "chart_spec_test";
}

TEST(WriteChartTest, WritesTheSpecAndALineEndIntoANewFolder) {
  const auto path = TempDir() / "new_folder" / "chart.json";
  std::filesystem::remove_all(path.parent_path());
  WriteChart(Json::Object().Set("kind", "lines"), path);
  EXPECT_EQ(ReadFile(path), "{\"kind\":\"lines\"}\n");
}

TEST(WriteChartTest, NamesThePathItCannotWrite) {
  const auto dir = TempDir() / "a_folder";
  std::filesystem::create_directories(dir);
  try {
    WriteChart(Json::Object(), dir);  // a folder, not a file
    FAIL() << "no error writing onto a folder";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(dir.string()));
  }
}

TEST(DrawChartsTest, WithoutTheScriptPrintsTheCommandThatDrawsTheCharts) {
  // A test runs in its runfiles, where tools/plot/draw_chart.py is not.
  ::testing::internal::CaptureStdout();
  const bool drawn = DrawCharts({"out/a.json", "out/b.json"});
  const std::string said = ::testing::internal::GetCapturedStdout();
  EXPECT_FALSE(drawn);
  EXPECT_THAT(said, HasSubstr("/usr/bin/python3 tools/plot/draw_chart.py out/a.json out/b.json"));
  EXPECT_THAT(said, HasSubstr("python3-matplotlib"));
}

}  // namespace
}  // namespace mha
