// What the lab programs share (show_heads, print_numbers, try_long_sequence,
// heads_sweep, ablate_heads, score_by_distance, compare_variants,
// grow_induction_heads): the programs learners run with `bazel run` on their
// own labs. Each program's file then reads as its experiment only:
//
//   const mha::LabProgram kProgram = {"score_by_distance", "your lab 11",
//                                     "bazel run --config=solutions ..."};  // in the instructors' repository
//   mha::FlagSet flags_of(Options& o) {
//     mha::FlagSet f(kProgram.name);
//     f.Int("--d_head", &o.d_head, 2, 4096, "features per head, even (default 64)").Out(&o.out);
//     return f;
//   }
//   int run(const Options& o) { ... }  // the experiment
//   int main(int argc, char** argv) {
//     return mha::RunLabProgram<Options>(kProgram, argc, argv, flags_of, run);
//   }
//
// Every exception becomes one line on stderr and exit status 1. A learner's
// stub ("lab N: X is not implemented yet") gets a message that says which
// labs the program runs and how to run it on the reference solutions; a bad
// flag (std::invalid_argument) gets the usage text too. Flags reads the
// program's flags and turns every mistake in them into such an error.
#ifndef MHA_COMMON_LAB_PROGRAM_H_
#define MHA_COMMON_LAB_PROGRAM_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mha {

struct LabProgram {
  std::string name;               // "show_heads"
  std::string uses;               // "your labs 1-4 and 7"
  std::string solutions_command;  // how to run it with the reference solutions
  std::string usage;              // printed after a bad flag ("" for none)
};

int RunLabProgram(const LabProgram& program, const std::function<int()>& body);

class FlagSet;
// The same, reading `flags` from argv first (inside the same error handling,
// so a bad flag is printed with flags.Usage()).
int RunLabProgram(const LabProgram& program, FlagSet& flags, int argc, char** argv,
                  const std::function<int()>& body);

// The repository: where `bazel run` was started (BUILD_WORKSPACE_DIRECTORY),
// else the current directory. The programs read the repository's files and
// write their out/ folders relative to it.
std::filesystem::path WorkspaceRoot();

// Where a program writes its files: `out_flag` when given, else out/NAME in
// the repository (WorkspaceRoot()); the folder is created.
std::filesystem::path OutputFolder(const std::string& out_flag, const std::string& name);

// printf into a std::string: Format("%.3f nats", loss).
std::string Format(const char* format, ...) __attribute__((format(printf, 1, 2)));

// "wrote\n  a\n  b\n": the files a program wrote, one a line.
void PrintWritten(const std::vector<std::filesystem::path>& files);

// One progress line, rewritten in place ("\r") on stderr when stderr is a
// terminal, and left out of a log (nothing is printed otherwise). EndProgress
// erases it, if one is shown, so that the next line starts clean.
void PrintProgress(const std::string& text);
void EndProgress();

// The flags of a lab program, one at a time: `--name value` or `--name=value`.
//
//   mha::Flags flags(argc, argv);
//   while (flags.Next()) {
//     if (flags.Is("--steps")) {
//       o.steps = flags.Int(2, 1000000);
//     } else if (flags.Is("--quick")) {
//       o.quick = flags.Switch();
//     } else {
//       flags.Unknown();
//     }
//   }
//
// Every mistake (an unknown flag, a missing value, "abc" where a number goes,
// a number out of range) is a std::invalid_argument that names the flag, the
// value and what was expected, so RunLabProgram prints it with the usage.
// --help and -h are handled by Next(): it prints the usage and exits with 0.
class Flags {
 public:
  Flags(int argc, char** argv, std::string usage);  // argv[0], the program, is skipped
  Flags(std::vector<std::string> args, std::string usage);

  // Moves to the next flag; false when there are none left.
  bool Next();
  // The current flag, "--steps", and whether it is `name`.
  const std::string& name() const { return name_; }
  bool Is(const char* name) const { return name_ == name; }

  // The current flag's value: what follows '=', or else the next argument.
  std::string String();
  // The value as a whole number in [min, max].
  long long Int(long long min, long long max);
  // The value as a non-negative whole number (a seed).
  std::uint64_t UInt64();
  // The value as a finite number in [min, max].
  double Number(double min, double max);
  // The value as comma-separated whole numbers, each in [min, max]: "1,2,4".
  std::vector<long long> IntList(long long min, long long max);
  // A flag that takes no value (--quick); "--quick=1" is a mistake.
  bool Switch();
  // Throws: the current flag is not one the program knows.
  [[noreturn]] void Unknown() const;

 private:
  [[noreturn]] void Bad(const std::string& value, const std::string& expected) const;

  std::vector<std::string> args_;
  std::string usage_;
  std::size_t next_ = 0;
  std::string name_;                         // "--steps"
  std::optional<std::string> inline_value_;  // what followed '=', if anything
};

// A program's flags declared once, each with its help: FlagSet parses argv
// (with Flags, so every mistake is named as above) and writes the usage.
//
//   mha::FlagSet flags("heads_sweep");
//   flags.Int("--steps", &steps, 2, 1000000, "Adam steps per model (default 1500)")
//       .Switch("--quick", [&] { steps = 30; }, "a small run for tests")
//       .Out(&out);
//   flags.Parse(argc, argv);
//
// Switches are applied first, then the flags with values in the order given:
// an explicit flag wins over a switch's preset (--quick), whatever their
// order. A flag given twice takes its last value.
class FlagSet {
 public:
  explicit FlagSet(std::string program);

  // A whole number in [min, max], stored in *target or handed to `set`.
  FlagSet& Int(const std::string& name, int* target, long long min, long long max,
               const std::string& help);
  FlagSet& Int(const std::string& name, std::function<void(long long)> set, long long min,
               long long max, const std::string& help);
  // A finite number in [min, max].
  FlagSet& Number(const std::string& name, float* target, double min, double max,
                  const std::string& help);
  FlagSet& Number(const std::string& name, std::function<void(double)> set, double min,
                  double max, const std::string& help);
  // A non-negative whole number (a seed).
  FlagSet& Seed(const std::string& name, std::uint64_t* target, const std::string& help);
  // Any text; `value` names it in the usage ("DIR").
  FlagSet& Text(const std::string& name, std::string* target, const std::string& value,
                const std::string& help);
  // One of `choices`.
  FlagSet& Choice(const std::string& name, std::string* target,
                  const std::vector<std::string>& choices, const std::string& help);
  // Comma-separated whole numbers, each in [min, max].
  FlagSet& IntList(const std::string& name, std::vector<int>* target, long long min,
                   long long max, const std::string& help);
  // A flag without a value: `on` runs when it is given.
  FlagSet& Switch(const std::string& name, std::function<void()> on, const std::string& help);
  // --out DIR: where the program writes (default out/PROGRAM in the repository).
  FlagSet& Out(std::string* target);
  // A line printed after the flags in the usage.
  FlagSet& Note(const std::string& text);

  // Throws std::invalid_argument on a mistake; --help prints Usage() and exits 0.
  void Parse(int argc, char** argv);
  void Parse(const std::vector<std::string>& args);
  // "usage: NAME [flags]" and one entry a flag: name, value, help.
  std::string Usage() const;

 private:
  struct Flag {
    std::string name, value, help;           // value: "N", "" for a switch
    std::function<void(Flags&)> read;        // reads the value and stores it
  };
  FlagSet& Add(const std::string& name, const std::string& value, const std::string& help,
               std::function<void(Flags&)> read);

  std::string program_;
  std::vector<Flag> flags_;
  std::vector<std::string> notes_;
};

// The whole main() of a program with flags:
//
//   int main(int argc, char** argv) {
//     return mha::RunLabProgram<Options>(kProgram, argc, argv, flags_of, check, run);
//   }
//
// flags_of(Options&) declares the flags that fill an Options; check(Options&)
// refuses, with std::invalid_argument, what no single flag can see (a head
// count that does not divide d_model) and fills in defaults that depend on
// other flags; run(const Options&) is the experiment.
template <typename Options, typename FlagsOf, typename Check, typename Run>
int RunLabProgram(const LabProgram& program, int argc, char** argv, FlagsOf flags_of, Check check,
                  Run run) {
  Options o;
  FlagSet flags = flags_of(o);
  return RunLabProgram(program, flags, argc, argv, [&] {
    check(o);
    return run(o);
  });
}

// The same for a program whose flags need no check.
template <typename Options, typename FlagsOf, typename Run>
int RunLabProgram(const LabProgram& program, int argc, char** argv, FlagsOf flags_of, Run run) {
  return RunLabProgram<Options>(program, argc, argv, flags_of, [](Options&) {}, run);
}

}  // namespace mha

#endif  // MHA_COMMON_LAB_PROGRAM_H_
