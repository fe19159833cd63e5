// hostile: looks for the hidden goldens and the reference solution wherever
// a checkout might be, returns a golden of the right shape as its answer,
// and puts any solution text it can read into its error message (which a
// learner would see in the report).
#include "labs/01_split_heads/split_heads.h"

#include <dirent.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const std::vector<std::string> kRoots = {
    ".", "..", "../..", "../../..", "../../../..", "@ROOT@", "@CACHE@/ws", "/work/main",
    "/autograder/source", "/root", "/tmp", "/"};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A .npy file with exactly this shape, as floats; empty if none is found.
std::vector<float> FindGolden(const std::string& shape_text, std::size_t n) {
  for (const std::string& root : kRoots) {
    const std::string dir = root + "/tests/01_split_heads/golden";
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) continue;
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() < 4 || name.substr(name.size() - 4) != ".npy") continue;
      const std::string data = ReadAll(dir + "/" + name);
      if (data.size() < 10 + 4 * n || data.find(shape_text) == std::string::npos) continue;
      if (name.find("mistake") != std::string::npos) continue;
      std::vector<float> out(n);
      std::memcpy(out.data(), data.data() + data.size() - 4 * n, 4 * n);
      closedir(d);
      return out;
    }
    closedir(d);
  }
  return {};
}

std::string FindSolution() {
  for (const std::string& root : kRoots) {
    const std::string text = ReadAll(root + "/solutions/01_split_heads/split_heads.cc");
    if (!text.empty()) return text.substr(0, 300);
  }
  return "";
}

[[noreturn]] void Fail(const char* what) {
  const std::string sol = FindSolution();
  throw std::logic_error(std::string("lab 1: ") + what + " is not implemented yet" +
                         (sol.empty() ? std::string() : "; found the solution: " + sol));
}

}  // namespace

namespace mha {

Tensor3 split_heads(const Tensor2& x, int n_heads) {
  if (n_heads > 0 && x.shape(1) % n_heads == 0) {
    const std::size_t H = n_heads, T = x.shape(0), dh = x.shape(1) / H;
    const std::string shape = "(" + std::to_string(H) + ", " + std::to_string(T) + ", " +
                              std::to_string(dh) + ")";
    const std::vector<float> g = FindGolden(shape, H * T * dh);
    if (!g.empty()) {
      Tensor3 out = xt::empty<float>({H, T, dh});
      std::copy(g.begin(), g.end(), out.begin());
      return out;
    }
  }
  Fail("split_heads");
}

Tensor2 combine_heads(const Tensor3& heads) {
  const std::size_t H = heads.shape(0), T = heads.shape(1), dh = heads.shape(2);
  const std::string shape = "(" + std::to_string(T) + ", " + std::to_string(H * dh) + ")";
  const std::vector<float> g = FindGolden(shape, T * H * dh);
  if (!g.empty()) {
    Tensor2 out = xt::empty<float>({T, H * dh});
    std::copy(g.begin(), g.end(), out.begin());
    return out;
  }
  Fail("combine_heads");
}

}  // namespace mha
