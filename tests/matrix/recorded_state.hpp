#pragma once
// What the matrix tests read off the recorder: readable names for the
// stand-ins, the state an exec holds (and what its host nodes see when it
// is launched), and the way a path's native calls took.
#include <string>
#include <vector>

#include "cudag/native_recorder.hpp"
#include "field_rows.hpp"

namespace matrix {

inline void name_everything(cudag::native::recorder& rec) {
  rec.name_kernel(&scale, "scale");
  rec.name_kernel(&scale_other, "scale_other");
  rec.name_kernel(&set_flag, "set_flag");
  rec.name_pointer(dev_x, "x");
  rec.name_pointer(dev_y, "y");
  rec.name_pointer(dev_z, "z");
  rec.name_pointer(dev_w, "w");
  rec.name_pointer(event_a, "event_a");
  rec.name_pointer(event_b, "event_b");
}

inline std::string lines(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

/// What exec `e` (of either front end) holds, and what its host nodes see
/// when it is launched (the recorder runs the top-level graph's host
/// callables at a launch).
template <class Exec>
std::string state_of(cudag::native::recorder& rec, Exec& e) {
  host_log().clear();
  e.launch(nullptr);
  std::string out = rec.exec_state(e.native_exec());
  for (const std::string& call : host_log()) out += "host call " + call + "\n";
  return out;
}

/// The way a path's native calls took: "S" one exec setter ("S2": two...),
/// "C" a child graph set (and exec setters), "U" one whole-graph update,
/// "-" no call.
inline std::string way_of(const std::vector<std::string>& calls) {
  std::size_t setters = 0, child_sets = 0, updates = 0;
  for (const std::string& c : calls) {
    if (c.starts_with("exec_update"))
      ++updates;
    else if (c.starts_with("exec_child_graph_node_set_params"))
      ++child_sets;
    else if (c.starts_with("exec_"))
      ++setters;
  }
  if (updates == 1 && setters == 0 && child_sets == 0) return "U";
  if (updates > 1 || (updates && (setters || child_sets))) return "mixed";
  if (child_sets) return "C";
  if (setters == 1) return "S";
  if (setters > 1) return "S" + std::to_string(setters);
  return "-";
}

}  // namespace matrix
