// The course reader's playground program: your Mini-GPT, loaded from the
// checkpoint train_mini_gpt saved, answering ./lab read one line at a time
// (the protocol is at the top of playground_model.h).
//
//   playground --checkpoint out/train_mini_gpt/checkpoint.npz
//
// ./lab read starts it with pipes when its "Your Mini-GPT" page is opened
// (tools/lab/learner/playground.py); it reads requests on stdin and writes
// answers on stdout, and opens no socket. By hand, type a request line:
//
//   run<TAB>tokens=I walk , you walk , he walk<TAB>off=<TAB>mode=greedy<TAB>...
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>

#include "labs/15_mini_gpt/checkpoint.h"
#include "labs/15_mini_gpt/playground_model.h"
#include "labs/15_mini_gpt/verb_grammar.h"

namespace {

// The one line a refused start writes before the program exits.
int Refuse(const std::string& detail) {
  std::cout << mha::playground::OneLine(
                   mha::Json::Object().Set("error", "checkpoint").Set("detail", detail))
            << std::endl;
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--checkpoint" && i + 1 < argc) {
      path = argv[++i];
    } else if (arg.rfind("--checkpoint=", 0) == 0) {
      path = arg.substr(13);
    } else {
      std::cerr << "playground: unknown argument " << arg
                << " (usage: playground --checkpoint FILE)" << std::endl;
      return 2;
    }
  }
  if (path.empty()) return Refuse("no --checkpoint FILE given");
  try {
    mha::checkpoint::Checkpoint c = mha::checkpoint::Load(path);
    // The page speaks the corpus's 64 tokens: any other vocabulary is refused by name.
    mha::checkpoint::Config expected = c.config;
    expected.vocab = static_cast<int>(mha::grammar::tokens().size());
    mha::checkpoint::Expect(c, expected, mha::grammar::tokens(), path);
    std::cout << mha::playground::OneLine(mha::playground::Hello(c.model, c.seed)) << std::endl;
    for (std::string line; std::getline(std::cin, line);) {
      std::cout << mha::playground::OneLine(mha::playground::Answer(c.model, line)) << std::endl;
    }
  } catch (const std::exception& e) {
    return Refuse(e.what());
  }
  return 0;
}
