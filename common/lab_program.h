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
// flag (std::invalid_argument) gets the usage text too.
#ifndef MHA_COMMON_LAB_PROGRAM_H_
#define MHA_COMMON_LAB_PROGRAM_H_

#include <functional>
#include <string>

namespace mha {

struct LabProgram {
  std::string name;               // "show_heads"
  std::string uses;               // "your labs 1-4 and 7"
  std::string solutions_command;  // how to run it with the reference solutions
  std::string usage;              // printed after a bad flag ("" for none)
};

int RunLabProgram(const LabProgram& program, const std::function<int()>& body);

}  // namespace mha

#endif  // MHA_COMMON_LAB_PROGRAM_H_
