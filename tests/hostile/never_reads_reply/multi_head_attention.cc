// hostile: a learner process that never reads its reply pipe. Lab 3's
// constructor, forward and attend write a call back to lab 2's softmax_rows
// (16 MiB of scores, in common/grading/remote.cc's framing) straight onto the answer
// pipe, then sleep with the pipe that carries the reply open and unread. The
// trusted process's reply is far larger than a pipe holds: writing it must
// stop at the call's deadline (10 s), not hold the slot for the lab's 120 s.
#include "labs/03_output_projection/multi_head_attention.h"

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace mha {
namespace {

void Put(std::vector<char>& b, const void* p, std::size_t n) {
  b.insert(b.end(), static_cast<const char*>(p), static_cast<const char*>(p) + n);
}
void PutU64(std::vector<char>& b, std::uint64_t v) { Put(b, &v, 8); }

[[noreturn]] void CallBackAndNeverRead() {
  const std::uint64_t rows = 4096, cols = 1024;
  const std::string name = "softmax_rows(const Tensor2& scores)";
  std::vector<char> payload;
  payload.push_back(4);  // a string
  PutU64(payload, name.size());
  Put(payload, name.data(), name.size());
  payload.push_back(5);  // a tensor of rank 2
  PutU64(payload, 2);
  PutU64(payload, rows);
  PutU64(payload, cols);
  payload.resize(payload.size() + rows * cols * sizeof(float), 0);
  std::vector<char> frame;
  const std::uint32_t magic = 0x3141484d, kind = 1;
  Put(frame, &magic, 4);
  Put(frame, &kind, 4);
  PutU64(frame, payload.size());
  frame.insert(frame.end(), payload.begin(), payload.end());
  std::size_t done = 0;
  while (done < frame.size()) {
    const ssize_t w = write(4, frame.data() + done, frame.size() - done);
    if (w <= 0) break;
    done += static_cast<std::size_t>(w);
  }
  for (;;) pause();  // descriptor 3, where the reply comes, is never read
}

}  // namespace

MultiHeadAttention::MultiHeadAttention(int embed_dim, int num_heads, std::uint64_t seed) {
  CallBackAndNeverRead();
}

AttentionResult MultiHeadAttention::attend(const Tensor2& x,
                                           const std::optional<Tensor2>& mask) const {
  CallBackAndNeverRead();
}

Tensor2 MultiHeadAttention::forward(const Tensor2& x, const std::optional<Tensor2>& mask) const {
  CallBackAndNeverRead();
}

std::size_t MultiHeadAttention::parameter_count() const {
  throw std::logic_error("lab 3: MultiHeadAttention::parameter_count is not implemented yet");
}

}  // namespace mha
