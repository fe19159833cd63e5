// Sizes the KV cache of every attention variant for one model shape and
// recommends one that fits a memory budget. See configurator.h for the flags.
//
//   bazel run //labs/08_kv_cache:configure -- --d_model 8192 --n_layers 80 --context 131072 --batch 8 --memory_gb 40
//
// Exit status: 0 after the report or --help, 2 on a bad flag (with a message
// naming it on stderr).
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "labs/08_kv_cache/configurator.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (mha::configure::wants_help(args)) {
    std::cout << mha::configure::usage();
    return 0;
  }
  try {
    std::cout << mha::configure::report(mha::configure::parse_flags(args));
  } catch (const std::invalid_argument& e) {
    std::cerr << "configure: " << e.what() << "\n\n" << mha::configure::usage();
    return 2;
  }
  return 0;
}
