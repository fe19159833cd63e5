namespace mha {
namespace {

// Calls back lab 10's mha_backward (on lab 13's call surface) on a layer
// made by lab 3's constructor and then broken through its public members by
// Break, and returns what came back as text: in the old design the
// reference ran in the process that holds the hidden goldens, and dW_V was
// computed from memory past W_O (freed goldens among it).
template <class Breaker>
std::string LeakThrough(Breaker Break) {
  const int d = 8, T = 4;
  MultiHeadAttention layer(d, 2, 1);
  Break(layer);
  const Tensor2 x = xt::ones<float>({std::size_t(T), std::size_t(d)});
  const Tensor2 d_y = xt::ones<float>({std::size_t(T), std::size_t(d)});
  try {
    const MhaGrads g = mha_backward(layer, x, std::nullopt, d_y);
    std::string out = "leaked:";
    for (float v : g.dW_V) out += " " + std::to_string(v);
    for (float v : g.dW_O) out += " " + std::to_string(v);
    return out;
  } catch (const std::exception& e) {
    return e.what();
  }
}

[[noreturn]] void Leak() {
  std::string all;
  // W_O of one row: d_y W_O^T reads d-1 rows past it.
  all += LeakThrough([](MultiHeadAttention& l) { l.W_O = xt::ones<float>({std::size_t(1), std::size_t(8)}); });
  // n_heads * d_head > d_model: the per-head products write past the buffers.
  all += " | " + LeakThrough([](MultiHeadAttention& l) { l.n_heads = 4; l.d_head = 8; });
  throw std::runtime_error(all);
}

}  // namespace
}  // namespace mha
