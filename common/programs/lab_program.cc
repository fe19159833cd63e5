#include "common/programs/lab_program.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace mha {

int RunLabProgram(const LabProgram& program, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::invalid_argument& e) {
    // invalid_argument is a logic_error too: catch it first. A bad flag, or a
    // lab that rejected what the program gave it.
    std::cerr << program.name << ": " << e.what() << "\n" << program.usage;
  } catch (const std::logic_error& e) {
    const std::string what = e.what();
    if (what.find("not implemented yet") != std::string::npos) {
      std::cerr << program.name << " runs " << program.uses
                << ", and one of them is still a stub:\n  " << what
                << "\nFinish that lab (or, in the instructors' repository, run the reference "
                   "solutions with `"
                << program.solutions_command << "`).\n";
    } else {
      std::cerr << program.name << ": " << what << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << program.name << ": " << e.what() << "\n";
  }
  return 1;
}

std::filesystem::path WorkspaceRoot() {
  const char* ws = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  return std::filesystem::path(ws ? ws : ".");
}

Flags::Flags(int argc, char** argv, std::string usage)
    : Flags(std::vector<std::string>(argv + 1, argv + argc), std::move(usage)) {}

Flags::Flags(std::vector<std::string> args, std::string usage)
    : args_(std::move(args)), usage_(std::move(usage)) {}

bool Flags::Next() {
  if (next_ >= args_.size()) return false;
  std::string arg = args_[next_++];
  if (arg == "--help" || arg == "-h") {
    std::cout << usage_;
    std::exit(0);
  }
  if (arg.rfind("--", 0) != 0) {
    throw std::invalid_argument("unexpected argument \"" + arg + "\": flags start with --");
  }
  inline_value_.reset();
  if (const auto eq = arg.find('='); eq != std::string::npos) {
    inline_value_ = arg.substr(eq + 1);
    arg = arg.substr(0, eq);
  }
  name_ = arg;
  return true;
}

std::string Flags::String() {
  if (inline_value_) return *inline_value_;
  if (next_ >= args_.size()) throw std::invalid_argument(name_ + " needs a value");
  return args_[next_++];
}

void Flags::Bad(const std::string& value, const std::string& expected) const {
  throw std::invalid_argument(name_ + " " + value + ": expected " + expected);
}

namespace {

// The whole of `text` as a base-10 integer, or false (empty, trailing
// characters, or too large for long long).
bool ParseInteger(const std::string& text, long long& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtoll(text.c_str(), &end, 10);
  return errno == 0 && *end == '\0';
}

}  // namespace

long long Flags::Int(long long min, long long max) {
  const std::string text = String();
  long long value = 0;
  const std::string expected =
      "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  if (!ParseInteger(text, value) || value < min || value > max) Bad(text, expected);
  return value;
}

std::uint64_t Flags::UInt64() {
  const std::string text = String();
  // strtoull accepts "-1" (and wraps it), so a sign is refused first.
  char* end = nullptr;
  errno = 0;
  const unsigned long long value =
      text.empty() || text[0] == '-' || text[0] == '+' ? 0 : std::strtoull(text.c_str(), &end, 10);
  if (end == nullptr || errno != 0 || *end != '\0') {
    Bad(text, "a whole number from 0 to " + std::to_string(UINT64_MAX));
  }
  return value;
}

double Flags::Number(double min, double max) {
  const std::string text = String();
  char* end = nullptr;
  errno = 0;
  const double value = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  if (end == nullptr || *end != '\0' || errno != 0 || !std::isfinite(value) || value < min ||
      value > max) {
    std::ostringstream expected;
    expected << "a number from " << min << " to " << max;
    Bad(text, expected.str());
  }
  return value;
}

std::vector<long long> Flags::IntList(long long min, long long max) {
  const std::string text = String();
  const std::string expected = "whole numbers from " + std::to_string(min) + " to " +
                               std::to_string(max) + ", separated by commas (1,2,4)";
  std::vector<long long> out;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    long long value = 0;
    if (!ParseInteger(item, value) || value < min || value > max) Bad(text, expected);
    out.push_back(value);
  }
  if (out.empty() || text.back() == ',') Bad(text, expected);
  return out;
}

bool Flags::Switch() {
  if (inline_value_) {
    throw std::invalid_argument(name_ + " takes no value (given \"" + *inline_value_ + "\")");
  }
  return true;
}

void Flags::Unknown() const { throw std::invalid_argument("unknown flag " + name_); }

}  // namespace mha
