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

// Above 4 GiB, as device addresses are: a pointer copied in part shows in
// the recorded arguments.
inline float* const dev_x = reinterpret_cast<float*>(0x7f5a07000000);
inline float* const dev_y = reinterpret_cast<float*>(0x7f5a07100000);
inline float* const dev_z = reinterpret_cast<float*>(0x7f5a07200000);

}  // namespace engine_test
