// The checkpoint file (checkpoint.h): round trips, NumPy's files read, the
// bytes NumPy reads written, and every refusal named. The files in testdata/
// come from np.savez (tests/15_mini_gpt/checkpoint_fixtures.py, in the
// instructors' repository) and from this test (written_by_cpp.npz, which
// tools/lab/tests/test_mini_gpt_checkpoint.py reads with np.load there).
#include "labs/15_mini_gpt/checkpoint.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "labs/15_mini_gpt/npz.h"
#include "labs/15_mini_gpt/verb_grammar.h"

namespace mha::checkpoint {
namespace {

const std::string kTestData = "labs/15_mini_gpt/testdata/";

std::filesystem::path Temp(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::filesystem::path(dir ? dir : "/tmp") / name;
}

std::string Bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The message of the std::runtime_error `f` throws ("" and a failure if none).
template <class F>
std::string Refusal(F f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a std::runtime_error";
  return "";
}

// The k-th tensor of the fixture model holds (i + 1000 k) / 1024.
void ExpectFixtureValues(const float* data, std::size_t n, int k, const std::string& name) {
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(data[i], static_cast<float>((double(i) + 1000.0 * k) / 1024.0)) << name << "[" << i << "]";
  }
}

TEST(Checkpoint, ReadsWhatNumpySavezWrote) {
  const Checkpoint c = Load(kTestData + "numpy_savez.npz");
  EXPECT_EQ(c.config.vocab, 64);
  EXPECT_EQ(c.config.d_model, 4);
  EXPECT_EQ(c.config.n_layers, 2);
  EXPECT_EQ(c.config.base, 10000.0);
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.tokens, grammar::tokens());
  EXPECT_EQ(c.code_hash, "numpy");
  ExpectFixtureValues(c.model.embed.data(), c.model.embed.size(), 0, "embed");
  ExpectFixtureValues(c.model.blocks[0].attn.W_Q.data(), 16, 3, "blocks.0.attn.W_Q");
  ExpectFixtureValues(c.model.blocks[1].ffn.W_2.data(), 24, 12 + 11, "blocks.1.ffn.W_2");
  ExpectFixtureValues(c.model.lnf_beta.data(), 4, 26, "lnf_beta");
}

TEST(Checkpoint, WritesTheBytesNumpyReads) {
  const Checkpoint c = Load(kTestData + "numpy_savez.npz");
  const auto out = Temp("written_by_cpp.npz");
  Save(out, c.model, c.seed, c.tokens, c.code_hash);
  // On a change of the format: copy it from the test's outputs into testdata/
  // and run tools/lab/tests/test_mini_gpt_checkpoint.py (np.load), in the
  // instructors' repository.
  if (const char* keep = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
    std::filesystem::copy_file(out, std::filesystem::path(keep) / "written_by_cpp.npz",
                               std::filesystem::copy_options::overwrite_existing);
  }
  EXPECT_TRUE(Bytes(out) == Bytes(kTestData + "written_by_cpp.npz"))
      << "Save() no longer writes testdata/written_by_cpp.npz byte for byte";
}

TEST(Checkpoint, RoundTripKeepsEveryWeightAndFact) {
  MiniGpt model(64, 32, 8, 2, 16, 2, /*seed=*/3);
  model.blocks[1].ffn.b_1(5) = 0.25f;  // not a fresh draw: a trained value
  const auto path = Temp("round_trip.npz");
  Save(path, model, 3, grammar::tokens(), "abc");
  const Checkpoint c = Load(path);
  EXPECT_EQ(c.seed, 3u);
  EXPECT_EQ(c.code_hash, "abc");
  EXPECT_EQ(c.tokens, grammar::tokens());
  EXPECT_EQ(c.model.embed, model.embed);
  for (std::size_t l = 0; l < 2; ++l) {
    EXPECT_EQ(c.model.blocks[l].attn.W_V, model.blocks[l].attn.W_V);
    EXPECT_EQ(c.model.blocks[l].ffn.W_1, model.blocks[l].ffn.W_1);
    EXPECT_EQ(c.model.blocks[l].ffn.b_1, model.blocks[l].ffn.b_1);
    EXPECT_EQ(c.model.blocks[l].ln2_gamma, model.blocks[l].ln2_gamma);
  }
  EXPECT_EQ(c.model.logits({0, 4, 24}), model.logits({0, 4, 24}));
}

// A saved checkpoint with one array replaced.
std::filesystem::path Altered(const std::string& name, const npz::Array& replacement) {
  npz::Archive a = npz::Archive::Read(kTestData + "numpy_savez.npz");
  a.Add(name, replacement);
  const auto path = Temp("altered.npz");
  a.Write(path);
  return path;
}

TEST(Checkpoint, RefusesAWrongShapeNamingTheArray) {
  const std::vector<float> values(4 * 7, 0.5f);
  const auto path = Altered("blocks.1.ffn.W_1", npz::Array::Floats({4, 7}, values.data()));
  const std::string why = Refusal([&] { Load(path); });
  EXPECT_NE(why.find("blocks.1.ffn.W_1"), std::string::npos) << why;
  EXPECT_NE(why.find("(4, 7)"), std::string::npos) << why;
  EXPECT_NE(why.find("(4, 6)"), std::string::npos) << why;
}

TEST(Checkpoint, RefusesAMissingArrayNamingIt) {
  npz::Archive a = npz::Archive::Read(kTestData + "numpy_savez.npz");
  npz::Archive b;
  for (const std::string& n : a.Names()) {
    if (n != "lnf_gamma") b.Add(n, a.Get(n));
  }
  const auto path = Temp("missing.npz");
  b.Write(path);
  EXPECT_NE(Refusal([&] { Load(path); }).find("\"lnf_gamma\""), std::string::npos);
}

TEST(Checkpoint, RefusesAnotherSizeByName) {
  const Checkpoint c = Load(kTestData + "numpy_savez.npz");
  const Config program{64, 32, 64, 2, 6, 2, 10000.0};
  const std::string why = Refusal([&] { Expect(c, program, grammar::tokens(), "x.npz"); });
  EXPECT_NE(why.find("d_model=4"), std::string::npos) << why;
  EXPECT_NE(why.find("d_model=64"), std::string::npos) << why;
}

TEST(Checkpoint, RefusesAnotherVocabularyByToken) {
  const Checkpoint c = Load(kTestData + "numpy_savez.npz");
  std::vector<std::string> tokens = grammar::tokens();
  tokens[9] = "tu";
  const std::string why =
      Refusal([&] { Expect(c, c.config, tokens, "x.npz"); });
  EXPECT_NE(why.find("token 9"), std::string::npos) << why;
  EXPECT_NE(why.find("tú"), std::string::npos) << why;
}

TEST(Checkpoint, RefusesACompressedArchive) {
  EXPECT_NE(Refusal([] { Load(kTestData + "numpy_compressed.npz"); }).find("compressed"),
            std::string::npos);
}

TEST(Checkpoint, RefusesATruncatedFileAndANonArchive) {
  const std::string whole = Bytes(kTestData + "numpy_savez.npz");
  const auto path = Temp("truncated.npz");
  std::ofstream(path, std::ios::binary) << whole.substr(0, whole.size() / 2);
  EXPECT_FALSE(Refusal([&] { Load(path); }).empty());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "not a zip archive at all, sorry";
  EXPECT_NE(Refusal([&] { Load(path); }).find("not a zip archive"), std::string::npos);
}

TEST(Checkpoint, CodeHashIsASha256InHex) {
  const std::string h = CodeHash();
  ASSERT_EQ(h.size(), 64u) << h;
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos) << h;
}

}  // namespace
}  // namespace mha::checkpoint
