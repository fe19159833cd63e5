// hostile: lab 13 calls back lab 3's forward and lab 10's mha_backward on a
// layer whose every weight is empty (0 x 0) while it still says d_model 8,
// and on one whose sizes are all 0: the reference indexed into weights that
// are not there (in the old design, in the process that held the goldens
// and wrote the verdicts). Both are refused by name before any reference
// code runs, in the job's reference process.
//@ after includes
#include <string>

namespace mha {
namespace {

std::string Try(MultiHeadAttention layer) {
  const Tensor2 x = xt::ones<float>({std::size_t(4), std::size_t(8)});
  std::string out;
  try {
    const Tensor2 y = layer.forward(x);
    out += "forward gave " + std::to_string(y.size()) + " values;";
  } catch (const std::exception& e) {
    out += std::string(e.what()) + ";";
  }
  try {
    const MhaGrads g = mha_backward(layer, x, std::nullopt, x);
    out += " leaked:";
    for (float v : g.dW_Q) out += " " + std::to_string(v);
  } catch (const std::exception& e) {
    out += std::string(" ") + e.what();
  }
  return out;
}

[[noreturn]] void Leak() {
  MultiHeadAttention empty(8, 2, 1);
  empty.W_Q = empty.W_K = empty.W_V = empty.W_O = Tensor2::from_shape({0, 0});
  MultiHeadAttention zero = empty;
  zero.d_model = zero.n_heads = zero.d_head = 0;
  throw std::runtime_error(Try(empty) + " | " + Try(zero));
}

}  // namespace
}  // namespace mha
//@ at the start of AttentionOnlyTransformer::AttentionOnlyTransformer
  Leak();
//@ at the start of AttentionOnlyTransformer::logits
  Leak();
//@ at the start of AttentionOnlyTransformer::attention_weights
  Leak();
//@ at the start of loss_and_grads
  Leak();
//@ at the start of composition_scores
  Leak();
