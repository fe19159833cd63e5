#include "common/testing/sentences.h"

namespace mha {
namespace testing {

std::string Fill(const std::string& sentence, const SentenceValues& values) {
  std::string out;
  for (std::size_t i = 0; i < sentence.size();) {
    if (sentence[i] != '%') {
      out += sentence[i++];
      continue;
    }
    if (sentence.compare(i, 2, "%%") == 0) {
      out += '%';
      i += 2;
      continue;
    }
    const std::size_t close = sentence.find(")s", i);
    bool filled = false;
    if (sentence.compare(i, 2, "%(") == 0 && close != std::string::npos) {
      const std::string name = sentence.substr(i + 2, close - i - 2);
      for (const auto& [key, value] : values) {
        if (key == name) {
          out += value;
          i = close + 2;
          filled = true;
          break;
        }
      }
    }
    if (!filled) out += sentence[i++];
  }
  return out;
}

}  // namespace testing
}  // namespace mha
