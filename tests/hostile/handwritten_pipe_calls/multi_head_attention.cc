// hostile: lab 3 in cumulative grading over its own labs 1 and 2 left as
// stubs. It never calls them: it writes its call to attention_batched by
// hand on the descriptor its process answers on (4), in
// common/grading/remote.cc's framing, and reads the answer from descriptor
// 3, as if it were a call back of isolated grading. The old trusted process
// answered it with the reference solution (20/20 with no attention code).
// In cumulative grading nothing answers a call back now, and in isolated
// grading only the job's reference process does.
//@ after includes
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace mha {
namespace {

void Put(std::string& b, const void* p, std::size_t n) { b.append(static_cast<const char*>(p), n); }
void PutU64(std::string& b, std::uint64_t v) { Put(b, &v, 8); }
void PutTag(std::string& b, int tag) { b.push_back(static_cast<char>(tag)); }
void PutTensor(std::string& b, const float* data, std::vector<std::uint64_t> shape) {
  PutTag(b, 5);
  PutU64(b, shape.size());
  std::uint64_t n = 1;
  for (auto s : shape) PutU64(b, s), n *= s;
  Put(b, data, n * sizeof(float));
}

void ReadAll(char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t r = read(3, p, n);
    if (r <= 0) throw std::runtime_error("the pipe closed");
    p += r, n -= static_cast<std::size_t>(r);
  }
}

struct Cursor {
  const std::string& s;
  std::size_t at = 0;
  std::uint64_t U64() { std::uint64_t v; std::memcpy(&v, s.data() + at, 8); at += 8; return v; }
  std::string Str() { ++at; const auto n = U64(); std::string v = s.substr(at, n); at += n; return v; }
  Tensor3 T3() {
    ++at;
    U64();
    const std::size_t a = U64(), b = U64(), c = U64();
    Tensor3 t = Tensor3::from_shape({a, b, c});
    std::memcpy(t.data(), s.data() + at, t.size() * sizeof(float));
    at += t.size() * sizeof(float);
    return t;
  }
};

// attention_batched(q, k, v, no mask), written on the pipe by hand.
Tensor3 ByHand(const Tensor3& q, const Tensor3& k, const Tensor3& v) {
  std::string payload;
  const std::string name =
      "attention_batched(const Tensor3& q, const Tensor3& k, const Tensor3& v, const "
      "std::optional<Tensor2>& mask)";
  PutTag(payload, 4);
  PutU64(payload, name.size());
  Put(payload, name.data(), name.size());
  for (const Tensor3* t : {&q, &k, &v}) PutTensor(payload, t->data(), {t->shape(0), t->shape(1), t->shape(2)});
  PutTag(payload, 6);  // no mask
  std::string frame;
  const std::uint32_t magic = 0x3141484d, kind = 1;
  Put(frame, &magic, 4);
  Put(frame, &kind, 4);
  PutU64(frame, payload.size());
  frame += payload;
  if (write(4, frame.data(), frame.size()) != static_cast<ssize_t>(frame.size())) {
    throw std::runtime_error("could not write the call");
  }
  char header[16];
  ReadAll(header, 16);
  std::uint32_t got_kind;
  std::uint64_t n;
  std::memcpy(&got_kind, header + 4, 4);
  std::memcpy(&n, header + 8, 8);
  std::string reply(n, '\0');
  ReadAll(reply.data(), n);
  Cursor c{reply};
  if (got_kind == 3) {
    c.Str();
    throw std::runtime_error("my hand-written call was refused: " + c.Str());
  }
  ++c.at;  // the AttentionResult object's tag
  return c.T3();
}

Tensor2 MatMul(const Tensor2& a, const Tensor2& b) {
  Tensor2 c = xt::zeros<float>({a.shape(0), b.shape(1)});
  for (std::size_t i = 0; i < a.shape(0); ++i)
    for (std::size_t k = 0; k < a.shape(1); ++k)
      for (std::size_t j = 0; j < b.shape(1); ++j) c(i, j) += a(i, k) * b(k, j);
  return c;
}

Tensor3 Split(const Tensor2& m, int H) {
  const std::size_t T = m.shape(0), dh = m.shape(1) / H;
  Tensor3 t = Tensor3::from_shape({std::size_t(H), T, dh});
  for (int h = 0; h < H; ++h)
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t j = 0; j < dh; ++j) t(h, i, j) = m(i, h * dh + j);
  return t;
}

}  // namespace
}  // namespace mha
//@ instead of MultiHeadAttention::forward
Tensor2 MultiHeadAttention::forward(const Tensor2& x, const std::optional<Tensor2>& mask) const {
  (void)mask;
  const Tensor3 o = ByHand(Split(MatMul(x, W_Q), n_heads), Split(MatMul(x, W_K), n_heads),
                           Split(MatMul(x, W_V), n_heads));
  Tensor2 concat = Tensor2::from_shape({x.shape(0), std::size_t(d_model)});
  for (int h = 0; h < n_heads; ++h)
    for (std::size_t i = 0; i < x.shape(0); ++i)
      for (int j = 0; j < d_head; ++j) concat(i, h * d_head + j) = o(h, i, j);
  return MatMul(concat, W_O);
}
