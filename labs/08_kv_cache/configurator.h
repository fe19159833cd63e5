// Lab 8's configurator: which attention fits a model's KV cache in memory?
// (Not part of the lab's graded work: a tool built on it. You do not edit it.)
//
//   bazel run //labs/08_kv_cache:configure -- --d_model 8192 --n_layers 80 --context 131072 --batch 8 --memory_gb 40
//
// For one model shape it sizes every attention variant the labs built: MHA,
// GQA with each kv-head count that divides n_heads, MQA, and MLA with a few
// latent ranks. For each: the attention's parameters, the KV cache per token
// (one layer and all layers) and for the whole batch and context, and whether
// that fits the memory budget. Then it recommends one, with the reason.
//
// Flags (`--flag value` or `--flag=value`):
//   --d_model N      required: model width
//   --n_layers N     required: attention layers, each with its own cache
//   --context N      required: tokens of context each sequence keeps
//   --memory_gb X    required: memory for the KV cache, in GiB (2^30 bytes)
//   --n_heads N      query heads (default d_model / 128: d_head 128)
//   --batch N        sequences decoded together (default 1)
//   --dtype T        bf16, fp16 (2 bytes per value) or fp32 (4); default bf16
//   --mla_ranks A,B  latent widths kv_rank to try (default 2, 4 and 8 x d_head)
//   --rope_dim N     DeepSeek-style decoupled RoPE key cached beside the latent
//                    (default 64, as DeepSeek-V2; 0 is lab 6's MLA exactly)
//
// Counting: common/programs/attention_sizes.h, the rules of labs 5 and 6.
// The recommendation: of the variants whose cache fits, the one with the
// LARGEST cache per token, i.e. the most kv heads or the widest latent, which
// gives up the least of full attention's key/value capacity; at equal size,
// grouped heads before a latent (simpler: nothing to absorb). When nothing
// fits, it says how far the smallest cache is over, and what batch or
// context the budget would hold.
#ifndef MHA_LABS_08_KV_CACHE_CONFIGURATOR_H_
#define MHA_LABS_08_KV_CACHE_CONFIGURATOR_H_

#include <cstdint>
#include <string>
#include <vector>

namespace mha {
namespace configure {

struct Options {
  std::int64_t d_model = 0;
  std::int64_t n_heads = 0;  // 0 until parsed: then d_model / 128 unless given
  std::int64_t n_layers = 0;
  std::int64_t context = 0;
  std::int64_t batch = 1;
  double memory_gib = 0;
  std::string dtype = "bf16";
  std::int64_t bytes_per_value = 2;
  std::vector<std::int64_t> mla_ranks;  // filled with 2, 4, 8 x d_head unless given
  std::int64_t rope_dim = 64;
};

// Parses the flags above (argv without the program name). Bad flags throw
// std::invalid_argument naming the flag and the value:
//   "--d_model=abc is not a positive whole number"
//   "--dtype=int4: expected bf16, fp16 or fp32"
//   "--n_heads=60 does not divide --d_model=8192"
//   "--context is required"      "unknown flag --contxt"
Options parse_flags(const std::vector<std::string>& args);

// True when args ask for --help or -h.
bool wants_help(const std::vector<std::string>& args);
std::string usage();

struct Variant {
  std::string name;    // "MHA", "GQA-8", "MQA", "MLA-512"
  std::string family;  // "MHA", "GQA", "MQA", "MLA"
  std::int64_t kv_heads = 0;  // MHA, GQA, MQA
  std::int64_t kv_rank = 0;   // MLA
  std::int64_t params_per_layer = 0;
  std::int64_t cache_floats_per_token_per_layer = 0;
  std::int64_t cache_bytes_per_token = 0;  // all layers, in dtype
  double cache_bytes_total = 0;            // x context x batch (may exceed 2^63 in principle)
  bool fits = false;
};

// Every variant, largest cache first: MHA, GQA from most kv heads to fewest,
// MQA, then MLA from widest to narrowest latent.
std::vector<Variant> size_variants(const Options& options);

struct Recommendation {
  int index = -1;  // into the variants; -1 when nothing fits
  std::string reason;
};
Recommendation recommend(const Options& options, const std::vector<Variant>& variants);

// The whole printout: shape, table, recommendation.
std::string report(const Options& options);

// "320 KiB", "2.50 MiB", "40.0 GiB": powers of 1024, three significant digits.
std::string format_bytes(double bytes);

}  // namespace configure
}  // namespace mha

#endif  // MHA_LABS_08_KV_CACHE_CONFIGURATOR_H_
