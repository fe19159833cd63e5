#include "labs/07_head_analysis/trained_model.h"

#include <exception>
#include <fstream>

#include <xtensor/xmath.hpp>
#include <xtensor/xnpy.hpp>

namespace mha {
namespace {

const char* const kRegenerate =
    " (regenerate with /usr/bin/python3 labs/07_head_analysis/train_toy_model.py)";

// A float32 matrix of the expected shape, or an error naming the file.
// rows < 0: any number of rows.
Tensor2 load_trained_matrix(const std::filesystem::path& path, int rows, int cols) {
  if (!std::filesystem::is_regular_file(path)) {
    throw TrainedModelError("cannot find " + path.string() + kRegenerate);
  }
  xt::xarray<float> a;
  try {
    a = xt::load_npy<float>(path.string());
  } catch (const std::exception& e) {
    throw TrainedModelError("cannot read " + path.string() + ": " + e.what() + kRegenerate);
  }
  const auto& s = a.shape();
  if (s.size() != 2 || (rows >= 0 && static_cast<int>(s[0]) != rows) ||
      static_cast<int>(s[1]) != cols) {
    std::string shape;
    for (auto d : s) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    throw TrainedModelError(path.string() + " has shape (" + shape + "), expected (" +
                            (rows >= 0 ? std::to_string(rows) : std::string("n")) + ", " +
                            std::to_string(cols) + ")" + kRegenerate);
  }
  // load_npy does not notice a file cut short: the float32 data must fill it.
  const auto bytes = std::filesystem::file_size(path);
  if (bytes < a.size() * sizeof(float) + 10) {
    throw TrainedModelError(path.string() + " is truncated: " + std::to_string(bytes) +
                            " bytes for " + std::to_string(a.size()) + " floats" + kRegenerate);
  }
  if (!xt::all(xt::isfinite(a))) {
    throw TrainedModelError(path.string() + " holds NaN or infinite values" + kRegenerate);
  }
  return a;
}

}  // namespace

TrainedModel load_trained_model(const std::filesystem::path& dir, bool with_unembed) {
  constexpr int d = kTrainedDModel;
  TrainedModel m;
  const auto vocab_path = dir / "vocab.txt";
  std::ifstream in(vocab_path);
  if (!in) throw TrainedModelError("cannot open " + vocab_path.string() + kRegenerate);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) m.vocab.push_back(line);
  }
  const int V = static_cast<int>(m.vocab.size());
  if (V == 0) throw TrainedModelError(vocab_path.string() + " is empty" + kRegenerate);
  m.embed = load_trained_matrix(dir / "embed.npy", V, d);
  m.pos = load_trained_matrix(dir / "pos.npy", -1, d);
  m.W_Q = load_trained_matrix(dir / "W_Q.npy", d, d);
  m.W_K = load_trained_matrix(dir / "W_K.npy", d, d);
  m.W_V = load_trained_matrix(dir / "W_V.npy", d, d);
  m.W_O = load_trained_matrix(dir / "W_O.npy", d, d);
  if (with_unembed) m.unembed = load_trained_matrix(dir / "unembed.npy", d, V);
  return m;
}

}  // namespace mha
