// hostile: before any test runs, writes an all-passing gtest JSON and XML
// report (and a Gradescope results.json) to every path it can guess, prints
// gtest's success lines and ends the process with status 0.
//@ after includes
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const char kJson[] =
    "{\"tests\": 14, \"failures\": 0, \"errors\": 0, \"testsuites\": [{\"name\": \"SplitHeads\", "
    "\"tests\": 14, \"failures\": 0, \"testsuite\": [{\"name\": \"MatchesNumpyReshapeThenTranspose\", "
    "\"status\": \"RUN\", \"result\": \"COMPLETED\"}]}]}\n";
const char kXml[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites tests=\"14\" failures=\"0\" errors=\"0\">"
    "<testsuite name=\"SplitHeads\" tests=\"14\" failures=\"0\"><testcase name=\"MatchesNumpyReshapeThenTranspose\" "
    "status=\"run\" result=\"completed\"/></testsuite></testsuites>\n";
const char kGradescope[] = "{\"score\": 1000, \"output\": \"all tests passed\", \"tests\": []}\n";

void Put(const std::string& path, const char* text) {
  if (FILE* f = std::fopen(path.c_str(), "w")) {
    std::fputs(text, f);
    std::fclose(f);
  }
}

struct FakeReports {
  FakeReports() {
    std::vector<std::string> env = {"XML_OUTPUT_FILE", "GTEST_OUTPUT", "TEST_UNDECLARED_OUTPUTS_DIR",
                                    "TEST_PREMATURE_EXIT_FILE"};
    for (const auto& name : env) {
      if (const char* v = std::getenv(name.c_str())) {
        std::string p = v;
        if (p.rfind("xml:", 0) == 0 || p.rfind("json:", 0) == 0) p = p.substr(p.find(':') + 1);
        Put(p, p.find(".json") != std::string::npos ? kJson : kXml);
      }
    }
    for (const char* dir : {".", "..", "../..", "../../..", "/tmp", "/work", "/work/main",
                            "/autograder/results", "/autograder/source"}) {
      const std::string d = dir;
      Put(d + "/test.xml", kXml);
      Put(d + "/test_detail.xml", kXml);
      Put(d + "/report.json", kJson);
      Put(d + "/test_detail.json", kJson);
      Put(d + "/results.json", kGradescope);
    }
    std::printf("[==========] 14 tests from 2 test suites ran. (1 ms total)\n[  PASSED  ] 14 tests.\n");
    std::fflush(stdout);
    _exit(0);
  }
} fake_reports;

}  // namespace
