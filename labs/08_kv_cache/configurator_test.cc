// Tests of the configurator (configurator.h) against published model shapes.
// Published numbers: Llama 2 and Llama 3 model cards and configs, Mistral 7B's
// config, DeepSeek-V2's paper (a 512-wide latent plus a 64-wide RoPE key per
// token and layer).
#include "labs/08_kv_cache/configurator.h"

#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/programs/attention_sizes.h"

namespace mha {
namespace configure {
namespace {

Options Model(std::int64_t d_model, std::int64_t n_heads, std::int64_t n_layers,
              std::int64_t context = 4096, std::int64_t batch = 1, double memory_gib = 80) {
  return parse_flags({"--d_model", std::to_string(d_model), "--n_heads", std::to_string(n_heads),
                      "--n_layers", std::to_string(n_layers), "--context", std::to_string(context),
                      "--batch", std::to_string(batch), "--memory_gb",
                      std::to_string(memory_gib)});
}

const Variant& Find(const std::vector<Variant>& variants, const std::string& name) {
  for (const Variant& v : variants) {
    if (v.name == name) return v;
  }
  throw std::runtime_error("no variant " + name);
}

std::string Message(const std::vector<std::string>& args) {
  try {
    parse_flags(args);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

// ------------------------------------------------------- published shapes

TEST(ConfiguratorPublishedShapes, Llama2_7BIsMhaWithHalfAMebibytePerToken) {
  // 4096 wide, 32 heads of 128, 32 layers, every head its own K and V.
  const auto variants = size_variants(Model(4096, 32, 32));
  const Variant& mha = Find(variants, "MHA");
  EXPECT_EQ(mha.kv_heads, 32);
  EXPECT_EQ(mha.params_per_layer, 67108864);  // 4 x 4096^2
  EXPECT_EQ(mha.cache_bytes_per_token, 524288);  // 2 x 32 layers x 32 heads x 128 x 2 bytes
  EXPECT_EQ(format_bytes(mha.cache_bytes_per_token), "512 KiB");
}

TEST(ConfiguratorPublishedShapes, Llama3_8BIsGqaWithEightKvHeads) {
  const auto variants = size_variants(Model(4096, 32, 32));
  const Variant& gqa = Find(variants, "GQA-8");
  EXPECT_EQ(gqa.params_per_layer, 41943040);  // W_Q, W_O 4096^2; W_K, W_V 4096 x 1024
  EXPECT_EQ(gqa.cache_bytes_per_token, 131072);  // 2 x 32 x 8 x 128 x 2 = 128 KiB
}

TEST(ConfiguratorPublishedShapes, Llama3_70BCaches320KiBPerTokenInBf16) {
  // 8192 wide, 64 heads of 128, 8 kv heads, 80 layers:
  // 2 x 80 x 8 x 128 x 2 bytes = 327,680 bytes.
  const auto variants = size_variants(Model(8192, 64, 80, /*context=*/131072));
  const Variant& gqa = Find(variants, "GQA-8");
  EXPECT_EQ(gqa.params_per_layer, 150994944);
  EXPECT_EQ(gqa.cache_bytes_per_token, 327680);
  EXPECT_EQ(format_bytes(gqa.cache_bytes_per_token), "320 KiB");
  EXPECT_EQ(format_bytes(gqa.cache_bytes_total), "40.0 GiB");  // one 128k-token sequence
  EXPECT_EQ(Find(variants, "MHA").cache_bytes_per_token, 8 * 327680);
}

TEST(ConfiguratorPublishedShapes, TheDtypeScalesTheCache) {
  Options fp32 = parse_flags({"--d_model=8192", "--n_layers=80", "--context=1", "--memory_gb=1",
                              "--dtype=fp32"});
  EXPECT_EQ(Find(size_variants(fp32), "GQA-8").cache_bytes_per_token, 2 * 327680);
  Options fp16 = parse_flags({"--d_model=8192", "--n_layers=80", "--context=1", "--memory_gb=1",
                              "--dtype=fp16"});
  EXPECT_EQ(Find(size_variants(fp16), "GQA-8").cache_bytes_per_token, 327680);
}

TEST(ConfiguratorPublishedShapes, Mistral7BIsGqaWithEightKvHeads) {
  const auto variants = size_variants(Model(4096, 32, 32));
  EXPECT_EQ(Find(variants, "GQA-8").cache_bytes_per_token, 131072);
}

TEST(ConfiguratorPublishedShapes, DeepSeekV2CachesA512LatentAndA64RopeKeyPerLayer) {
  // 5120 wide, 128 heads, 60 layers; kv_rank 512, decoupled RoPE key 64:
  // 576 values per token and layer, 576 x 60 x 2 = 69,120 bytes per token.
  const Options o = parse_flags({"--d_model=5120", "--n_heads=128", "--n_layers=60",
                                 "--context=128000", "--memory_gb=80", "--mla_ranks=512",
                                 "--rope_dim=64"});
  const Variant& mla = Find(size_variants(o), "MLA-512");
  EXPECT_EQ(mla.cache_floats_per_token_per_layer, 576);
  EXPECT_EQ(mla.cache_bytes_per_token, 69120);
  // MHA on the same 128 heads caches 2 x 5120 values per layer: 17.8x more.
  EXPECT_EQ(Find(size_variants(o), "MHA").cache_floats_per_token_per_layer, 10240);
}

// ---------------------------------------------------------------- variants

TEST(ConfiguratorVariants, ListsMhaEveryGqaGroupingMqaAndMla) {
  const auto variants = size_variants(Model(8192, 64, 80));
  std::vector<std::string> names;
  for (const Variant& v : variants) names.push_back(v.name);
  EXPECT_EQ(names, (std::vector<std::string>{"MHA", "GQA-32", "GQA-16", "GQA-8", "GQA-4", "GQA-2",
                                             "MQA", "MLA-1024", "MLA-512", "MLA-256"}));
}

TEST(ConfiguratorVariants, OnlyKvHeadCountsThatSplitTheQueryHeadsEvenly) {
  const auto variants = size_variants(Model(768, 12, 12));  // GPT-2 small: 12 heads of 64
  std::vector<std::int64_t> heads;
  for (const Variant& v : variants) {
    if (v.family != "MLA") heads.push_back(v.kv_heads);
  }
  EXPECT_EQ(heads, (std::vector<std::int64_t>{12, 6, 4, 3, 2, 1}));
}

TEST(ConfiguratorVariants, CountsWithTheLabFormulas) {
  const Options o = Model(1024, 16, 24);
  for (const Variant& v : size_variants(o)) {
    if (v.family == "MLA") {
      EXPECT_EQ(v.params_per_layer, sizes::mla_parameters(1024, 16, v.kv_rank, 64)) << v.name;
      EXPECT_EQ(v.cache_floats_per_token_per_layer, v.kv_rank + 64) << v.name;
    } else {
      EXPECT_EQ(v.params_per_layer, sizes::gqa_parameters(1024, 16, v.kv_heads)) << v.name;
      EXPECT_EQ(v.cache_floats_per_token_per_layer, 2 * v.kv_heads * 64) << v.name;
    }
  }
}

// ---------------------------------------------------------- recommendation

TEST(ConfiguratorRecommendation, PicksTheLargestCacheThatFits) {
  // Llama-3-70B's shape, 8 sequences of 128k tokens, 40 GiB: GQA-8 needs
  // 320 GiB; MQA needs exactly 40 GiB; MLA-256 (+64 RoPE) 50 GiB.
  const Options o = parse_flags({"--d_model", "8192", "--n_layers", "80", "--context", "131072",
                                 "--batch", "8", "--memory_gb", "40"});
  const auto variants = size_variants(o);
  const Recommendation rec = recommend(o, variants);
  ASSERT_GE(rec.index, 0);
  EXPECT_EQ(variants[rec.index].name, "MQA");
  EXPECT_NE(rec.reason.find("MLA-256, would need 50.0 GiB"), std::string::npos) << rec.reason;
  EXPECT_NE(rec.reason.find("64x smaller than MHA"), std::string::npos) << rec.reason;
}

TEST(ConfiguratorRecommendation, KeepsMhaWhenItFits) {
  const Options o = Model(768, 12, 12, /*context=*/1024, /*batch=*/1, /*memory_gib=*/1);
  const auto variants = size_variants(o);
  const Recommendation rec = recommend(o, variants);
  ASSERT_GE(rec.index, 0);
  EXPECT_EQ(variants[rec.index].name, "MHA");
}

TEST(ConfiguratorRecommendation, SaysWhatTheBudgetHoldsWhenNothingFits) {
  // MQA needs 40 KiB per token here: 5 GiB for 128k tokens; 4 GiB holds none.
  const Options o = parse_flags({"--d_model=8192", "--n_layers=80", "--context=131072",
                                 "--batch=8", "--memory_gb=4", "--mla_ranks=512"});
  const Recommendation rec = recommend(o, size_variants(o));
  EXPECT_EQ(rec.index, -1);
  EXPECT_NE(rec.reason.find("Nothing fits in 4.00 GiB"), std::string::npos) << rec.reason;
  EXPECT_NE(rec.reason.find("less than one sequence"), std::string::npos) << rec.reason;
}

TEST(ConfiguratorRecommendation, SuggestsASmallerBatchWhenOneSequenceFits) {
  const Options o = parse_flags({"--d_model=8192", "--n_layers=80", "--context=131072",
                                 "--batch=8", "--memory_gb=12", "--mla_ranks=512"});
  const Recommendation rec = recommend(o, size_variants(o));
  EXPECT_EQ(rec.index, -1);
  EXPECT_NE(rec.reason.find("a batch of 2 at this context"), std::string::npos) << rec.reason;
}

TEST(ConfiguratorReport, ShowsEveryVariantAndTheRecommendation) {
  const std::string text = report(parse_flags({"--d_model=8192", "--n_layers=80",
                                               "--context=131072", "--batch=8", "--memory_gb=40"}));
  for (const char* s : {"d_model=8192, 64 query heads of d_head=128, 80 layers, bf16",
                        "MHA", "GQA-8", "MQA", "MLA-512", "320 KiB", "Recommended: MQA"}) {
    EXPECT_NE(text.find(s), std::string::npos) << "missing \"" << s << "\" in:\n" << text;
  }
}

// ------------------------------------------------------------------ flags

TEST(ConfiguratorFlags, DefaultsToHeadsOf128OneSequenceBf16AndRope64) {
  const Options o = parse_flags({"--d_model=4096", "--n_layers=32", "--context=8192",
                                 "--memory_gb=24"});
  EXPECT_EQ(o.n_heads, 32);
  EXPECT_EQ(o.batch, 1);
  EXPECT_EQ(o.dtype, "bf16");
  EXPECT_EQ(o.bytes_per_value, 2);
  EXPECT_EQ(o.rope_dim, 64);
  EXPECT_EQ(o.mla_ranks, (std::vector<std::int64_t>{1024, 512, 256}));
}

TEST(ConfiguratorFlags, ANonNumberIsNamed) {
  EXPECT_EQ(Message({"--d_model", "abc", "--n_layers=1", "--context=1", "--memory_gb=1"}),
            "--d_model=abc is not a positive whole number");
  EXPECT_EQ(Message({"--d_model=0", "--n_layers=1", "--context=1", "--memory_gb=1"}),
            "--d_model=0 is not a positive whole number");
  EXPECT_EQ(Message({"--d_model=512", "--n_layers=1", "--context=1", "--memory_gb=-3"}),
            "--memory_gb=-3 is not a positive number of GiB");
}

TEST(ConfiguratorFlags, AnUnknownDtypeIsNamed) {
  EXPECT_EQ(Message({"--d_model=512", "--n_layers=1", "--context=1", "--memory_gb=1",
                     "--dtype=int4"}),
            "--dtype=int4: expected bf16, fp16 or fp32");
}

TEST(ConfiguratorFlags, HeadsThatDoNotDivideTheWidthAreNamed) {
  EXPECT_EQ(Message({"--d_model=8192", "--n_heads=60", "--n_layers=1", "--context=1",
                     "--memory_gb=1"}),
            "--n_heads=60 does not divide --d_model=8192");
  EXPECT_EQ(Message({"--d_model=1000", "--n_layers=1", "--context=1", "--memory_gb=1"}),
            "--d_model=1000 is not a multiple of 128, the default d_head: give --n_heads");
}

TEST(ConfiguratorFlags, MissingUnknownAndRepeatedFlagsAreNamed) {
  EXPECT_EQ(Message({"--d_model=512", "--n_layers=1", "--memory_gb=1"}), "--context is required");
  EXPECT_EQ(Message({"--d_model=512", "--n_layers=1", "--contxt=1", "--memory_gb=1"}),
            "unknown flag --contxt");
  EXPECT_EQ(Message({"--d_model=512", "--d_model=256", "--n_layers=1", "--context=1",
                     "--memory_gb=1"}),
            "--d_model given twice");
  EXPECT_EQ(Message({"--d_model"}), "--d_model needs a value");
  EXPECT_EQ(Message({"512"}), "unexpected argument \"512\": flags start with --");
}

TEST(ConfiguratorFlags, ABadMlaRankIsNamed) {
  EXPECT_EQ(Message({"--d_model=512", "--n_layers=1", "--context=1", "--memory_gb=1",
                     "--mla_ranks=64,x"}),
            "--mla_ranks=x is not a positive whole number");
}

TEST(ConfiguratorFlags, RopeDimZeroIsLab6sMla) {
  const Options o = parse_flags({"--d_model=512", "--n_layers=1", "--context=1", "--memory_gb=1",
                                 "--rope_dim=0", "--mla_ranks=64"});
  EXPECT_EQ(Find(size_variants(o), "MLA-64").cache_floats_per_token_per_layer, 64);
  EXPECT_EQ(Find(size_variants(o), "MLA-64").params_per_layer, 2 * 512 * 512 + 3 * 512 * 64);
}

TEST(ConfiguratorFormat, BytesInPowersOf1024WithThreeDigits) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(327680), "320 KiB");
  EXPECT_EQ(format_bytes(2.5 * 1024 * 1024), "2.50 MiB");
  EXPECT_EQ(format_bytes(40.0 * 1024 * 1024 * 1024), "40.0 GiB");
}

}  // namespace
}  // namespace configure
}  // namespace mha
