// hostile: the grading machine's own secrets, embedded at compile time. On
// Gradescope, /autograder/submission_metadata.json holds the learner's
// earlier submissions and their results (hidden tests included), and is
// readable by every user; where the kernel refuses namespaces the compiler
// once saw the whole file system. The assembler's include-binary directive
// reads what the compiler may read; the directive and the inline assembler
// are spelled (token pasting, a split string) so that the source scan, which
// reads comments too, sees neither word: the wall alone must hold. The
// self-test plants @HOSTSECRET@ in a host secret place (made private as
// /autograder is) and @READABLE@, a file every user may read, outside any (a
// mount namespace or Landlock refuses it; file modes alone cannot).
//@ after includes
#include <string>

#define MHA_GLUE(a, b) a##b
MHA_GLUE(__as, m__)(".section .rodata\n"
                    ".global host_metadata\nhost_metadata:\n.incb" "in \"@HOSTSECRET@\"\n.byte 0\n"
                    ".global host_readable\nhost_readable:\n.incb" "in \"@READABLE@\"\n.byte 0\n"
                    ".previous");
extern "C" const char host_metadata[], host_readable[];
//@ at the start of split_heads
  throw std::invalid_argument(std::string(host_metadata) + " " + host_readable);
//@ at the start of combine_heads
  throw std::invalid_argument(std::string(host_metadata) + " " + host_readable);
