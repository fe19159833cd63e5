// Prints a few rows of a multi-head layer's and a grouped-query layer's
// output for a fixed seed and input, computed with your labs 3, 4 and 5:
//
//   bazel run //labs/05_grouped_query_attention:print_numbers
//   bazel run --config=solutions //labs/05_grouped_query_attention:print_numbers
//   (the second: the reference solutions, in the instructors' repository)
//
// docs/numpy/mha.py builds the same layers in NumPy and prints the same text:
//
//   /usr/bin/python3 docs/numpy/mha.py
//
// The weights agree bit for bit (NumpyRng replays np.random.default_rng), and
// the outputs to the printed four decimals, so the diff below prints nothing
// once labs 1-5 are right:
//
//   bazel run //labs/05_grouped_query_attention:print_numbers > /tmp/cc.txt
//   /usr/bin/python3 docs/numpy/mha.py | diff /tmp/cc.txt -
//
// While one of labs 1-5 is still a stub, print_numbers says which one and
// exits with status 1.
#include <cstdio>

#include "common/programs/lab_program.h"
#include "common/rng.h"
#include "labs/03_output_projection/multi_head_attention.h"
#include "labs/04_causal_mask/causal_mask.h"
#include "labs/05_grouped_query_attention/grouped_query_attention.h"

namespace {

constexpr int kDModel = 8, kHeads = 4, kKvHeads = 2, kTokens = 4;
constexpr std::uint64_t kLayerSeed = 0, kInputSeed = 2947;  // as in docs/numpy/mha.py

void print_rows(const char* title, const mha::Tensor2& y) {
  std::printf("%s\n", title);
  for (std::size_t t = 0; t < y.shape(0); ++t) {
    std::printf("  row %zu:", t);
    for (std::size_t c = 0; c < y.shape(1); ++c) std::printf(" %8.4f", y(t, c));
    std::printf("\n");
  }
}

// The numbers, with your labs 3, 4 and 5 (and through lab 3, labs 1 and 2).
int run() {
  // The input has its own generator: a (T, d_model) draw with fan-in 1,
  // default_rng(kInputSeed).standard_normal((T, d_model)).astype(float32).
  mha::NumpyRng input_rng(kInputSeed);
  const mha::Tensor2 x = input_rng.normal_matrix(kTokens, kDModel, 1);  // (T, d_model)
  const mha::Tensor2 mask = mha::causal_mask(kTokens);                   // (T, T)
  const mha::MultiHeadAttention layer(kDModel, kHeads, kLayerSeed);
  const mha::GroupedQueryAttention gqa(kDModel, kHeads, kKvHeads, kLayerSeed);

  std::printf("x: (T=%d, d_model=%d) from default_rng(%d); causal mask\n", kTokens, kDModel,
              static_cast<int>(kInputSeed));
  char title[160];
  std::snprintf(title, sizeof title,
                "MultiHeadAttention(d_model=%d, n_heads=%d, seed=%d).forward(x, causal_mask(%d))",
                kDModel, kHeads, static_cast<int>(kLayerSeed), kTokens);
  print_rows(title, layer.forward(x, mask));
  std::snprintf(title, sizeof title,
                "GroupedQueryAttention(d_model=%d, n_heads=%d, n_kv_heads=%d, seed=%d)"
                ".forward(x, causal_mask(%d))",
                kDModel, kHeads, kKvHeads, static_cast<int>(kLayerSeed), kTokens);
  print_rows(title, gqa.forward(x, mask));
  std::printf("parameters: MHA %zu, GQA %zu; KV cache floats per token: MHA %d, GQA %zu\n",
              layer.parameter_count(), gqa.parameter_count(), 2 * kDModel,
              gqa.kv_cache_floats_per_token());
  return 0;
}

}  // namespace

int main() {
  return mha::RunLabProgram(
      {"print_numbers", "your labs 1-5",
       "bazel run --config=solutions //labs/05_grouped_query_attention:print_numbers",  // in the instructors' repository
       ""},
      [] { return run(); });
}
