// The toy model of labs/07_head_analysis/train_toy_model.py, read from the
// files it saves (labs/07_head_analysis/trained/): show_heads --trained draws
// its heads, lab 10's ablate_heads silences them one at a time.
//
//   const mha::TrainedModel m = mha::load_trained_model(dir);
//   // x = m.embed[ids] + m.pos[0:T]; y = x + MultiHeadAttention(x, causal)
//   // with m.W_Q..m.W_O; logits = y @ m.unembed
//
// Every problem with the files (missing, unreadable, the wrong shape, cut
// short, NaN) is a TrainedModelError whose message names the file and says
// how to regenerate it.
#ifndef MHA_LABS_07_HEAD_ANALYSIS_TRAINED_MODEL_H_
#define MHA_LABS_07_HEAD_ANALYSIS_TRAINED_MODEL_H_

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/tensor.h"

namespace mha {

// The toy model's width and heads (train_toy_model.py's D_MODEL and N_HEADS).
inline constexpr int kTrainedDModel = 32;
inline constexpr int kTrainedHeads = 4;

// A problem with the trained files, or with what they are asked to embed.
struct TrainedModelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TrainedModel {
  std::vector<std::string> vocab;   // row i of embed is vocab[i]
  Tensor2 embed;                    // (V, d_model)
  Tensor2 pos;                      // (T_max, d_model), learned positions
  Tensor2 W_Q, W_K, W_V, W_O;       // (d_model, d_model), (in, out) like lab 3
  Tensor2 unembed;                  // (d_model, V); empty unless with_unembed
};

// Reads vocab.txt, embed.npy, pos.npy and W_Q..W_O.npy from dir, and
// unembed.npy too when with_unembed (show_heads needs only the layer).
TrainedModel load_trained_model(const std::filesystem::path& dir, bool with_unembed = false);

}  // namespace mha

#endif  // MHA_LABS_07_HEAD_ANALYSIS_TRAINED_MODEL_H_
