// A trained MiniGpt in one file: what train_mini_gpt saves
// (out/train_mini_gpt/checkpoint.npz) and what `--checkpoint FILE` and the
// reader's playground load.
//
// The file is an uncompressed NumPy .npz (npz.h), so that a few lines of
// Python read it without this code (np.load, no pickle):
//
//   z = np.load("out/train_mini_gpt/checkpoint.npz")
//   vocab, max_len, d_model, n_heads, d_ff, n_layers = z["config"]
//   logits = h @ z["embed"].T                    # the tied output layer
//
// One array per tensor, named as the model's members, float32, weights (in, out):
//
//   embed                  (vocab, d_model)
//   blocks.<l>.ln1_gamma   (d_model)          blocks.<l>.ln1_beta    (d_model)
//   blocks.<l>.attn.W_Q    (d_model, d_model) blocks.<l>.attn.W_K, .W_V, .W_O: the same
//   blocks.<l>.ln2_gamma   (d_model)          blocks.<l>.ln2_beta    (d_model)
//   blocks.<l>.ffn.W_1     (d_model, d_ff)    blocks.<l>.ffn.b_1     (d_ff)
//   blocks.<l>.ffn.W_2     (d_ff, d_model)    blocks.<l>.ffn.b_2     (d_model)
//   lnf_gamma, lnf_beta    (d_model)
//
// for l = 0 .. n_layers - 1, and beside them
//
//   config     int64 (6): vocab, max_len, d_model, n_heads, d_ff, n_layers
//   base       float64 scalar: RoPE's base
//   seed       uint64 scalar: the seed the model was trained from
//   tokens     unicode (vocab): the corpus's tokens by id (grammar::tokens())
//   code_hash  unicode scalar: the sha256 (hex) of the lab 15 file the
//              training ran (labs/15_mini_gpt/mini_gpt.cc; in the
//              instructors' repository, with --config=solutions, the
//              reference solution's)
//
// Loading checks everything before it builds the model: each array's
// presence, element type and shape against `config` (naming the first that
// is wrong), then, with Expect, the sizes and tokens a program needs (a
// checkpoint of another vocabulary or size is refused, naming the
// difference). Every refusal is a std::runtime_error.
#ifndef MHA_LABS_15_MINI_GPT_CHECKPOINT_H_
#define MHA_LABS_15_MINI_GPT_CHECKPOINT_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "labs/15_mini_gpt/mini_gpt.h"

namespace mha::checkpoint {

struct Config {
  int vocab, max_len, d_model, n_heads, d_ff, n_layers;
  double base;
};

struct Checkpoint {
  Config config;
  std::uint64_t seed;
  std::vector<std::string> tokens;
  std::string code_hash;
  MiniGpt model;  // built with MiniGpt's constructor (your lab 15), then every weight loaded
};

// Writes `model` and the rest to `path` (replacing it whole: a reader never
// sees half a file).
void Save(const std::filesystem::path& path, const MiniGpt& model, std::uint64_t seed,
          const std::vector<std::string>& tokens, const std::string& code_hash);

// Reads `path`, checking every array against the file's own config.
Checkpoint Load(const std::filesystem::path& path);

// Refuses a checkpoint whose sizes or tokens differ from what the program
// expects, naming the first difference ("the checkpoint has d_model=32, this
// program's model d_model=64"; "token 9 is 'tu', the corpus's 'tú'").
void Expect(const Checkpoint& c, const Config& expected, const std::vector<std::string>& tokens,
            const std::filesystem::path& path);

// The code_hash of this build (see above).
std::string CodeHash();

}  // namespace mha::checkpoint

#endif  // MHA_LABS_15_MINI_GPT_CHECKPOINT_H_
