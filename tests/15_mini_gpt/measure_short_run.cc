// Measures lab 15's short training run (tests/15_mini_gpt/short_run.h) on
// several seeds, the reference solution's spread from which the hidden test's
// bound is set:
//
//   bazel run -c opt --config=solutions //tests/15_mini_gpt:measure_short_run -- 0 1 2 3 4
//
// Prints, per seed, the first step's loss, the losses after training (every
// position of the training sentences, per position and per sentence; the
// held-out sentences) and the seconds; then the spread and the corpus's
// entropy floor.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "labs/15_mini_gpt/verb_grammar.h"
#include "tests/15_mini_gpt/short_run.h"

int main(int argc, char** argv) {
  std::vector<std::uint64_t> seeds;
  for (int i = 1; i < argc; ++i) seeds.push_back(std::strtoull(argv[i], nullptr, 10));
  if (seeds.empty()) seeds = {0, 1, 2, 3, 4};
  std::printf("%4s %10s %10s %10s %13s %9s %8s\n", "seed", "first", "reference", "train",
              "per sentence", "held out", "seconds");
  double lo = 1e9, hi = 0;
  for (std::uint64_t seed : seeds) {
    const mha::short_run::Result r = mha::short_run::Train(seed, {}, [seed](int step, double loss) {
      if (step % 50 == 0) std::fprintf(stderr, "seed %llu: step %d, loss %.4f\n",
                                       static_cast<unsigned long long>(seed), step, loss);
    });
    std::printf("%4llu %10.4f %10.4f %10.4f %13.4f %9.4f %8.1f\n",
                static_cast<unsigned long long>(seed), r.first_loss, r.first_loss_reference,
                r.train_loss, r.sentence_mean_loss, r.held_out_loss, r.seconds);
    std::fflush(stdout);
    lo = std::min(lo, r.train_loss);
    hi = std::max(hi, r.train_loss);
  }
  std::printf("train loss per position: %.4f .. %.4f; entropy floor %.4f\n", lo, hi,
              mha::grammar::entropy_floor(mha::grammar::split().train));
  return 0;
}
