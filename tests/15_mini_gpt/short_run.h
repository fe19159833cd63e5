// The short training run of lab 15's hidden tests: the learner's Mini-GPT,
// loss and gradients, clipping, schedule and AdamW on the verb grammar,
// every position scored, at the PyTorch pilot's settings
// (tests/15_mini_gpt/pilot.py --score all --steps 300 --d_model 32 --d_ff 128):
// d_model 32, 4 heads, d_ff 128, 2 blocks; 300 steps of 16 training
// sentences drawn with replacement by NumpyRng(seed + 1).random(); the
// step's gradient the mean of the sentences'; the global norm clipped to 1;
// AdamW (0.9, 0.95, 1e-8, weight decay 0.1) at learning_rate_at(step, 3e-3,
// 3e-4, 30, 300).
//
// The model is built by the test: the learner's constructor, then every
// field from the API's draws (tests/common/seeded_weights.h). The losses at
// the end are the double reference's (tests/15_mini_gpt/reference.h) on the
// trained weights: no number the learner's code reports decides them.
//
//   bazel run -c opt --config=solutions //tests/15_mini_gpt:measure_short_run
// measures the reference solution's spread over seeds (the bound of the test).
#ifndef MHA_TESTS_15_MINI_GPT_SHORT_RUN_H_
#define MHA_TESTS_15_MINI_GPT_SHORT_RUN_H_

#include <cstdint>
#include <functional>

namespace mha {
namespace short_run {

struct Settings {
  int d_model = 32, n_heads = 4, d_ff = 128, n_layers = 2;
  int steps = 300, batch = 16, warmup = 30;
  double max_lr = 3e-3, min_lr = 3e-4, max_norm = 1.0;
};

struct Result {
  double first_loss = 0;            // the first step's mean loss, as the learner's code gave it
  double first_loss_reference = 0;  // the same, by the double reference on the initial weights
  double train_loss = 0;            // after training, over every predicted position of the
                                    // 912 training sentences (the entropy floor's measure)
  double sentence_mean_loss = 0;    // the mean of each training sentence's mean (the pilot's)
  double held_out_loss = 0;         // over every position of the 96 held-out sentences
  double seconds = 0;               // training only
};

// progress(step, mean loss of the step), when given, after every step.
Result Train(std::uint64_t seed, const Settings& settings = {},
             const std::function<void(int, double)>& progress = nullptr);

}  // namespace short_run
}  // namespace mha

#endif  // MHA_TESTS_15_MINI_GPT_SHORT_RUN_H_
