#include "common/programs/lab_program.h"

#include <cerrno>
#include <cstdarg>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <unistd.h>

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

int RunLabProgram(const LabProgram& program, FlagSet& flags, int argc, char** argv,
                  const std::function<int()>& body) {
  LabProgram with_usage = program;
  with_usage.usage = flags.Usage();
  return RunLabProgram(with_usage, [&] {
    flags.Parse(argc, argv);
    return body();
  });
}

std::filesystem::path WorkspaceRoot() {
  const char* ws = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  return std::filesystem::path(ws ? ws : ".");
}

std::filesystem::path OutputFolder(const std::string& out_flag, const std::string& name) {
  const std::filesystem::path dir =
      out_flag.empty() ? WorkspaceRoot() / "out" / name : std::filesystem::path(out_flag);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string Format(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string out(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, format, again);
  va_end(again);
  return out;
}

void PrintWritten(const std::vector<std::filesystem::path>& files) {
  std::cout << "wrote";
  for (const auto& f : files) std::cout << "\n  " << f.string();
  std::cout << std::endl;
}

namespace {
bool g_progress_shown = false;  // a progress line is on the terminal, unfinished
}  // namespace

void PrintProgress(const std::string& text) {
  if (!isatty(fileno(stderr))) return;
  std::cerr << "\r" << text << std::flush;
  g_progress_shown = true;
}

void EndProgress() {
  if (g_progress_shown) std::cerr << "\r\033[K" << std::flush;  // back, erase to the line's end
  g_progress_shown = false;
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

FlagSet::FlagSet(std::string program) : program_(std::move(program)) {}

FlagSet& FlagSet::Add(const std::string& name, const std::string& value, const std::string& help,
                      std::function<void(Flags&)> read) {
  flags_.push_back({name, value, help, std::move(read)});
  return *this;
}

FlagSet& FlagSet::Int(const std::string& name, int* target, long long min, long long max,
                      const std::string& help) {
  return Int(name, [target](long long v) { *target = static_cast<int>(v); }, min, max, help);
}

FlagSet& FlagSet::Int(const std::string& name, std::function<void(long long)> set,
                      long long min, long long max, const std::string& help) {
  return Add(name, "N", help, [=](Flags& f) { set(f.Int(min, max)); });
}

FlagSet& FlagSet::Number(const std::string& name, float* target, double min, double max,
                         const std::string& help) {
  return Number(name, [target](double v) { *target = static_cast<float>(v); }, min, max, help);
}

FlagSet& FlagSet::Number(const std::string& name, std::function<void(double)> set, double min,
                         double max, const std::string& help) {
  return Add(name, "X", help, [=](Flags& f) { set(f.Number(min, max)); });
}

FlagSet& FlagSet::Seed(const std::string& name, std::uint64_t* target, const std::string& help) {
  return Add(name, "S", help, [target](Flags& f) { *target = f.UInt64(); });
}

FlagSet& FlagSet::Text(const std::string& name, std::string* target, const std::string& value,
                       const std::string& help) {
  return Add(name, value, help, [target](Flags& f) { *target = f.String(); });
}

FlagSet& FlagSet::Choice(const std::string& name, std::string* target,
                         const std::vector<std::string>& choices, const std::string& help) {
  std::string list;
  for (const std::string& c : choices) list += (list.empty() ? "" : "|") + c;
  return Add(name, list, help, [=](Flags& f) {
    const std::string v = f.String();
    for (const std::string& c : choices) {
      if (v == c) {
        *target = v;
        return;
      }
    }
    std::string expected;
    for (std::size_t i = 0; i < choices.size(); ++i) {
      expected += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
    }
    throw std::invalid_argument(f.name() + " " + v + ": expected " + expected);
  });
}

FlagSet& FlagSet::IntList(const std::string& name, std::vector<int>* target, long long min,
                          long long max, const std::string& help) {
  return Add(name, "A,B,...", help, [=](Flags& f) {
    target->clear();
    for (long long v : f.IntList(min, max)) target->push_back(static_cast<int>(v));
  });
}

FlagSet& FlagSet::Switch(const std::string& name, std::function<void()> on,
                         const std::string& help) {
  return Add(name, "", help, [on](Flags& f) {
    f.Switch();
    on();
  });
}

FlagSet& FlagSet::Out(std::string* target) {
  return Text("--out", target, "DIR",
              "where the files go (default: out/" + program_ +
                  " in the repository under\nbazel run, else ./out/" + program_ + ")");
}

FlagSet& FlagSet::Note(const std::string& text) {
  notes_.push_back(text);
  return *this;
}

void FlagSet::Parse(int argc, char** argv) {
  Parse(std::vector<std::string>(argv + 1, argv + argc));
}

void FlagSet::Parse(const std::vector<std::string>& args) {
  // Pass 1 applies the switches (presets such as --quick) and skips values;
  // pass 2 applies the flags with values, so that they win.
  for (const bool switches : {true, false}) {
    Flags f(args, Usage());
    while (f.Next()) {
      const Flag* flag = nullptr;
      for (const Flag& candidate : flags_) {
        if (f.Is(candidate.name.c_str())) flag = &candidate;
      }
      if (flag == nullptr) f.Unknown();
      const bool is_switch = flag->value.empty();
      if (is_switch == switches) {
        flag->read(f);
      } else if (!is_switch) {
        f.String();  // the value, read in the other pass
      }
    }
  }
}

std::string FlagSet::Usage() const {
  std::string out = "usage: " + program_ + (flags_.empty() ? "" : " [flags]") + "\n";
  for (const Flag& flag : flags_) {
    std::string head = "  " + flag.name + (flag.value.empty() ? "" : " " + flag.value);
    std::string help = flag.help;
    // Help on its own lines below a long flag, else beside it; every
    // further line of help indented to the same column.
    const std::size_t column = 20;
    std::string indent(column, ' ');
    if (head.size() + 2 > column) {
      head += "\n" + indent;
    } else {
      head += std::string(column - head.size(), ' ');
    }
    for (std::size_t at = 0; (at = help.find('\n', at)) != std::string::npos; at += column + 1) {
      help.insert(at + 1, indent);
    }
    out += head + help + "\n";
  }
  for (const std::string& note : notes_) out += note + "\n";
  return out;
}

}  // namespace mha
