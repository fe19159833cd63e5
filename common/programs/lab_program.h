// main() of a lab's program (show_heads, print_numbers, heads_sweep,
// ablate_heads): the programs learners run with `bazel run` on their own labs.
//
//   int main(int argc, char** argv) {
//     return mha::RunLabProgram({"show_heads", "your labs 1-4 and 7",
//                                "bazel run --config=solutions ...",  // in the instructors' repository
//                                kUsage},
//                               [&] { return run(parse_args(argc, argv)); });
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

// The repository: where `bazel run` was started (BUILD_WORKSPACE_DIRECTORY),
// else the current directory. The programs read the repository's files and
// write their out/ folders relative to it.
std::filesystem::path WorkspaceRoot();

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

}  // namespace mha

#endif  // MHA_COMMON_LAB_PROGRAM_H_
