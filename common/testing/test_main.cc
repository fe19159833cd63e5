// The main() of the labs' tests (lab_test, graded_test in common/lab.bzl):
// GoogleTest's, except that a failure prints in the learner's language
// (common/testing/translation.h) when LANG or LANGUAGE asks for one that
// po/cli/ has. Only what the terminal shows is translated: the test's XML
// report, which ./lab and the grader read, keeps the English.
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>

#include <gtest/gtest.h>

#include "common/testing/translation.h"

namespace mha {
namespace testing {
namespace {

// GoogleTest's own printer, given each failure translated.
class TranslatingPrinter : public ::testing::TestEventListener {
 public:
  TranslatingPrinter(::testing::TestEventListener* printer, Translator translator)
      : printer_(printer), translator_(std::move(translator)) {}

  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    const std::string message = translator_.Translate(result.message());
    printer_->OnTestPartResult(::testing::TestPartResult(result.type(), result.file_name(),
                                                         result.line_number(), message.c_str()));
  }

  // Everything else as GoogleTest prints it.
  void OnTestProgramStart(const ::testing::UnitTest& u) override {
    printer_->OnTestProgramStart(u);
  }
  void OnTestIterationStart(const ::testing::UnitTest& u, int i) override {
    printer_->OnTestIterationStart(u, i);
  }
  void OnEnvironmentsSetUpStart(const ::testing::UnitTest& u) override {
    printer_->OnEnvironmentsSetUpStart(u);
  }
  void OnEnvironmentsSetUpEnd(const ::testing::UnitTest& u) override {
    printer_->OnEnvironmentsSetUpEnd(u);
  }
  void OnTestSuiteStart(const ::testing::TestSuite& s) override { printer_->OnTestSuiteStart(s); }
  void OnTestStart(const ::testing::TestInfo& t) override { printer_->OnTestStart(t); }
  void OnTestDisabled(const ::testing::TestInfo& t) override { printer_->OnTestDisabled(t); }
  void OnTestEnd(const ::testing::TestInfo& t) override { printer_->OnTestEnd(t); }
  void OnTestSuiteEnd(const ::testing::TestSuite& s) override { printer_->OnTestSuiteEnd(s); }
#ifndef GTEST_REMOVE_LEGACY_TEST_CASEAPI_
  // GoogleTest's printer still prints a suite's lines under their old names.
  void OnTestCaseStart(const ::testing::TestCase& s) override { printer_->OnTestCaseStart(s); }
  void OnTestCaseEnd(const ::testing::TestCase& s) override { printer_->OnTestCaseEnd(s); }
#endif
  void OnEnvironmentsTearDownStart(const ::testing::UnitTest& u) override {
    printer_->OnEnvironmentsTearDownStart(u);
  }
  void OnEnvironmentsTearDownEnd(const ::testing::UnitTest& u) override {
    printer_->OnEnvironmentsTearDownEnd(u);
  }
  void OnTestIterationEnd(const ::testing::UnitTest& u, int i) override {
    printer_->OnTestIterationEnd(u, i);
  }
  void OnTestProgramEnd(const ::testing::UnitTest& u) override { printer_->OnTestProgramEnd(u); }

 private:
  std::unique_ptr<::testing::TestEventListener> printer_;
  Translator translator_;
};

}  // namespace
}  // namespace testing
}  // namespace mha

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::optional<mha::testing::Translator> translator;
  try {
    translator = mha::testing::LearnerTranslator();
  } catch (const std::exception& e) {
    // A broken registry must not stop the tests: they speak English then.
    std::cerr << "warning: " << e.what() << "; the tests print English\n";
  }
  ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (translator && listeners.default_result_printer() != nullptr) {
    ::testing::TestEventListener* printer = listeners.Release(listeners.default_result_printer());
    listeners.Append(new mha::testing::TranslatingPrinter(printer, std::move(*translator)));
  }
  return RUN_ALL_TESTS();
}
