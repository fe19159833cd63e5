// hostile: lab 8's decoders hand every step to the layer they decode,
// GroupedQueryAttention::forward and MultiHeadLatentAttention::forward_absorbed
// (right for a first prefill, P = 0), instead of projecting and attending
// themselves; everything else is the stub. Lab 8's call surface has lab 5's
// repeat_kv and lab 6's compress, so those labs' clients are linked: without
// the object check, it is the trusted process that refuses the two calls.
//@ after includes
#include <limits>

namespace mha {
namespace {

// (T, T): 0 on and below the diagonal, -inf above (built here, not lab 4's).
Tensor2 Causal(int T) {
  Tensor2 m = xt::zeros<float>({static_cast<std::size_t>(T), static_cast<std::size_t>(T)});
  for (int i = 0; i < T; ++i)
    for (int j = i + 1; j < T; ++j) m(i, j) = -std::numeric_limits<float>::infinity();
  return m;
}

}  // namespace
}  // namespace mha
//@ instead of GqaDecoder::step
Tensor2 GqaDecoder::step(const Tensor2& x_new) {
  return layer_->forward(x_new, Causal(static_cast<int>(x_new.shape(0))));
}
//@ instead of MlaDecoder::step
Tensor2 MlaDecoder::step(const Tensor2& x_new) {
  return layer_->forward_absorbed(x_new, Causal(static_cast<int>(x_new.shape(0))));
}
