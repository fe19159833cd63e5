// Flags and FlagSet: how a lab program reads its flags, and what it says
// about bad ones; OutputFolder: where it writes.
#include "common/programs/lab_program.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace mha {
namespace {

using ::testing::HasSubstr;

// argv for Flags, program name first, kept alive by the fixture.
class FlagsTest : public ::testing::Test {
 protected:
  Flags Make(std::initializer_list<const char*> args) {
    storage_ = {"program"};
    storage_.insert(storage_.end(), args.begin(), args.end());
    argv_.clear();
    for (std::string& s : storage_) argv_.push_back(s.data());
    return Flags(static_cast<int>(argv_.size()), argv_.data(), "usage: program\n");
  }
  // The message of the invalid_argument that `read` throws, or "" if none.
  template <typename F>
  static std::string ErrorOf(F read) {
    try {
      read();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  }

 private:
  std::vector<std::string> storage_;
  std::vector<char*> argv_;
};

TEST_F(FlagsTest, ReadsAValueAfterASpaceOrAnEqualsSign) {
  Flags flags = Make({"--steps", "30", "--out=dir/x"});
  ASSERT_TRUE(flags.Next());
  EXPECT_TRUE(flags.Is("--steps"));
  EXPECT_EQ(flags.Int(2, 100), 30);
  ASSERT_TRUE(flags.Next());
  EXPECT_TRUE(flags.Is("--out"));
  EXPECT_EQ(flags.String(), "dir/x");
  EXPECT_FALSE(flags.Next());
}

TEST_F(FlagsTest, AFlagWithoutItsValueSaysSo) {
  Flags flags = Make({"--steps"});
  ASSERT_TRUE(flags.Next());
  EXPECT_EQ(ErrorOf([&] { flags.Int(2, 100); }), "--steps needs a value");
}

TEST_F(FlagsTest, TextWhereANumberGoesNamesTheFlagTheValueAndTheRange) {
  Flags flags = Make({"--steps", "abc"});
  ASSERT_TRUE(flags.Next());
  EXPECT_EQ(ErrorOf([&] { flags.Int(2, 100); }),
            "--steps abc: expected a whole number from 2 to 100");
}

TEST_F(FlagsTest, ANumberOutOfRangeOrTooLargeIsRefused) {
  Flags flags = Make({"--steps=1", "--steps=99999999999999999999", "--steps=3x"});
  for (const char* value : {"1", "99999999999999999999", "3x"}) {
    ASSERT_TRUE(flags.Next());
    EXPECT_THAT(ErrorOf([&] { flags.Int(2, 100); }), HasSubstr(std::string(value) + ": expected"));
  }
}

TEST_F(FlagsTest, ASeedIsANonNegativeWholeNumber) {
  Flags flags = Make({"--seed", "18446744073709551615", "--seed", "-1", "--seed", ""});
  ASSERT_TRUE(flags.Next());
  EXPECT_EQ(flags.UInt64(), 18446744073709551615ull);
  ASSERT_TRUE(flags.Next());
  EXPECT_THAT(ErrorOf([&] { flags.UInt64(); }), HasSubstr("--seed -1: expected a whole number"));
  ASSERT_TRUE(flags.Next());
  EXPECT_THAT(ErrorOf([&] { flags.UInt64(); }), HasSubstr("expected a whole number"));
}

TEST_F(FlagsTest, ANumberMustBeFiniteAndInRange) {
  Flags flags = Make({"--lr", "0.003", "--lr", "nan", "--lr", "5"});
  ASSERT_TRUE(flags.Next());
  EXPECT_DOUBLE_EQ(flags.Number(1e-6, 1.0), 0.003);
  ASSERT_TRUE(flags.Next());
  EXPECT_THAT(ErrorOf([&] { flags.Number(1e-6, 1.0); }), HasSubstr("--lr nan: expected a number"));
  ASSERT_TRUE(flags.Next());
  EXPECT_THAT(ErrorOf([&] { flags.Number(1e-6, 1.0); }), HasSubstr("--lr 5: expected a number"));
}

TEST_F(FlagsTest, AListIsCommaSeparatedWholeNumbersInRange) {
  Flags flags = Make({"--heads=1,2,16", "--heads=1,,2", "--heads=1,99", "--heads="});
  ASSERT_TRUE(flags.Next());
  EXPECT_EQ(flags.IntList(1, 64), (std::vector<long long>{1, 2, 16}));
  for (const char* value : {"1,,2", "1,99", ""}) {
    ASSERT_TRUE(flags.Next());
    EXPECT_EQ(ErrorOf([&] { flags.IntList(1, 64); }),
              "--heads " + std::string(value) +
                  ": expected whole numbers from 1 to 64, separated by commas (1,2,4)");
  }
}

TEST_F(FlagsTest, ASwitchTakesNoValue) {
  Flags flags = Make({"--quick", "--quick=yes"});
  ASSERT_TRUE(flags.Next());
  EXPECT_TRUE(flags.Switch());
  ASSERT_TRUE(flags.Next());
  EXPECT_EQ(ErrorOf([&] { flags.Switch(); }), "--quick takes no value (given \"yes\")");
}

TEST_F(FlagsTest, AnUnknownFlagIsNamed) {
  Flags flags = Make({"--stpes", "3"});
  ASSERT_TRUE(flags.Next());
  EXPECT_EQ(ErrorOf([&] { flags.Unknown(); }), "unknown flag --stpes");
}

TEST_F(FlagsTest, AnArgumentThatIsNotAFlagIsRefused) {
  Flags flags = Make({"3"});
  EXPECT_EQ(ErrorOf([&] { flags.Next(); }), "unexpected argument \"3\": flags start with --");
}

TEST_F(FlagsTest, HelpPrintsTheUsageAndExitsWithZero) {
  Flags flags = Make({"--help"});
  EXPECT_EXIT(flags.Next(), ::testing::ExitedWithCode(0), "");
}

TEST(WorkspaceRoot, IsWhereBazelRunWasStartedElseTheCurrentDirectory) {
  ASSERT_EQ(setenv("BUILD_WORKSPACE_DIRECTORY", "where-bazel-run-started", 1), 0);
  EXPECT_EQ(WorkspaceRoot(), std::filesystem::path("where-bazel-run-started"));
  ASSERT_EQ(unsetenv("BUILD_WORKSPACE_DIRECTORY"), 0);
  EXPECT_EQ(WorkspaceRoot(), std::filesystem::path("."));
}

// FlagSet: a program's flags declared once.
struct Settings {
  int steps = 100;
  std::string task = "both";
  std::vector<int> heads = {1, 2};
  std::string out;
  bool quick = false;
};

FlagSet SettingsFlags(Settings& s) {
  FlagSet f("program");
  f.Int("--steps", &s.steps, 2, 1000, "Adam steps (default 100)")
      .Choice("--task", &s.task, {"copy", "order", "both"}, "which task")
      .IntList("--heads", &s.heads, 1, 64, "head counts,\ncomma separated")
      .Out(&s.out)
      .Switch("--quick", [&s] {
        s.quick = true;
        s.steps = 30;
      }, "a small run");
  return f;
}

std::string ParseError(std::vector<std::string> args) {
  Settings s;
  try {
    SettingsFlags(s).Parse(args);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(FlagSetTest, StoresEachFlagsValue) {
  Settings s;
  SettingsFlags(s).Parse({"--steps=7", "--task", "order", "--heads", "4,8", "--out", "dir"});
  EXPECT_EQ(s.steps, 7);
  EXPECT_EQ(s.task, "order");
  EXPECT_EQ(s.heads, (std::vector<int>{4, 8}));
  EXPECT_EQ(s.out, "dir");
}

TEST(FlagSetTest, AnExplicitFlagWinsOverASwitchWhateverTheOrder) {
  Settings before, after, alone;
  SettingsFlags(before).Parse({"--steps", "7", "--quick"});
  SettingsFlags(after).Parse({"--quick", "--steps", "7"});
  SettingsFlags(alone).Parse({"--quick"});
  EXPECT_EQ(before.steps, 7);
  EXPECT_EQ(after.steps, 7);
  EXPECT_TRUE(before.quick);
  EXPECT_EQ(alone.steps, 30);
}

TEST(FlagSetTest, NamesABadValueAnUnknownFlagAndAWrongChoice) {
  EXPECT_EQ(ParseError({"--steps", "1"}), "--steps 1: expected a whole number from 2 to 1000");
  EXPECT_EQ(ParseError({"--stpes", "3"}), "unknown flag --stpes");
  EXPECT_EQ(ParseError({"--task", "all"}), "--task all: expected copy, order or both");
  EXPECT_EQ(ParseError({"--quick=1"}), "--quick takes no value (given \"1\")");
}

TEST(FlagSetTest, TheUsageListsEveryFlagWithItsValueAndHelp) {
  Settings s;
  const std::string usage = SettingsFlags(s).Usage();
  EXPECT_THAT(usage, HasSubstr("usage: program [flags]\n"));
  EXPECT_THAT(usage, HasSubstr("  --steps N         Adam steps (default 100)\n"));
  EXPECT_THAT(usage, HasSubstr("  --heads A,B,...   head counts,\n                    comma separated\n"));
  EXPECT_THAT(usage, HasSubstr("  --out DIR         where the files go (default: out/program"));
  EXPECT_THAT(usage, HasSubstr("  --task copy|order|both\n                    which task\n"));
}

TEST(OutputFolderTest, IsTheOutFlagElseOutNameInTheRepositoryAndExists) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::filesystem::path root = std::filesystem::path(tmp ? tmp : "/tmp") / "output_folder";
  ASSERT_EQ(setenv("BUILD_WORKSPACE_DIRECTORY", root.c_str(), 1), 0);
  EXPECT_EQ(OutputFolder("", "heads_sweep"), root / "out" / "heads_sweep");
  EXPECT_TRUE(std::filesystem::is_directory(root / "out" / "heads_sweep"));
  EXPECT_EQ(OutputFolder((root / "mine").string(), "heads_sweep"), root / "mine");
  EXPECT_TRUE(std::filesystem::is_directory(root / "mine"));
  ASSERT_EQ(unsetenv("BUILD_WORKSPACE_DIRECTORY"), 0);
}

}  // namespace
}  // namespace mha
