// Flags: how a lab program reads its flags, and what it says about bad ones.
#include "common/programs/lab_program.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
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

}  // namespace
}  // namespace mha
