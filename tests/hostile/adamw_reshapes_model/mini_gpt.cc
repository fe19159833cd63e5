// hostile: learner-shaped data inside the trusted test process. AdamW::step
// changes the model in place, so the model comes back with the answer, and
// the test goes on with it: the next step's golden gradients are laid out
// over its parameters (GradsFromFlat) in the trusted process. This step
// answers with lnf_beta, the last parameter, 4096 numbers longer; laid out
// over it, the golden runs out and the copy reads on into the trusted
// process's heap, which the next step receives as gradients and reports in
// its exception message. The client must refuse an answer that changes the
// model's shapes (remote_layout.h) before the test sees it: 0 points, and
// the message names the refusal.
//@ after includes
#include <string>

#include <xtensor/xbuilder.hpp>
//@ instead of MiniGpt::MiniGpt
// The sizes only: the test installs every parameter itself (CaseModel).
MiniGpt::MiniGpt(int vocab_, int max_len_, int d_model_, int n_heads_, int d_ff_, int n_layers_,
                 std::uint64_t seed, double base_)
    : vocab(vocab_), max_len(max_len_), d_model(d_model_), n_heads(n_heads_), d_ff(d_ff_),
      n_layers(n_layers_), base(base_) {
  (void)seed;
}
//@ instead of AdamW::AdamW
AdamW::AdamW(const MiniGpt& model, AdamWConfig config) : config_(config) { (void)model; }
//@ instead of AdamW::steps
int AdamW::steps() const { return steps_; }
//@ instead of AdamW::step
void AdamW::step(MiniGpt& model, const GptGrads& grads, float lr) {
  (void)lr;
  ++steps_;
  const std::size_t d = static_cast<std::size_t>(model.d_model);
  if (model.lnf_beta.size() > d && grads.d_lnf_beta.size() > d) {
    // The numbers past the golden, as the trusted process held them.
    std::size_t not_zero = 0;
    std::string some;
    for (std::size_t i = d; i < grads.d_lnf_beta.size(); ++i) {
      const float x = grads.d_lnf_beta(i);
      if (x != 0.0f) {
        if (++not_zero <= 8) some += " " + std::to_string(x);
      }
    }
    throw std::runtime_error("read past the golden: " + std::to_string(grads.d_lnf_beta.size() - d) +
                             " numbers of the trusted process, " + std::to_string(not_zero) +
                             " not zero:" + some);
  }
  model.lnf_beta = xt::zeros<float>({d + 4096});
}
