constexpr int kChunk = 256;

void CheckBlocks(int block_q, int block_k) {
  if (block_q < 1) throw std::invalid_argument("block_q=" + std::to_string(block_q) + " must be >= 1");
  if (block_k < 1) throw std::invalid_argument("block_k=" + std::to_string(block_k) + " must be >= 1");
}
