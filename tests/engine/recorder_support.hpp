#pragma once
// What the recorder-based cpu tests share: calls as one text block, and
// fake device addresses that read well in the recorded lines.
#include <string>
#include <vector>

namespace engine_test {

inline std::string lines(const std::vector<std::string>& calls) {
  std::string out;
  for (const auto& c : calls) out += c + "\n";
  return out;
}

inline float* const dev_x = reinterpret_cast<float*>(0x7000000);
inline float* const dev_y = reinterpret_cast<float*>(0x7100000);
inline float* const dev_z = reinterpret_cast<float*>(0x7200000);

}  // namespace engine_test
