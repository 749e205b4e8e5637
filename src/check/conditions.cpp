// CUDA binds a conditional handle to exactly one conditional node: a handle
// that no conditional node uses makes instantiation fail, and a second node
// using it fails to be added. Both are refused up front.
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "check_passes.hpp"
#include "cudag/check.hpp"

namespace cudag::check_detail {

void check_conditions_used(const spec_tree& tree) {
  // The path of the conditional node that tests each declared condition.
  std::vector<std::vector<std::string>> tested_by(tree.size());
  for (std::size_t f = 0; f < tree.size(); ++f)
    tested_by[f].resize(tree.at(f).spec().conditions.size());

  for (std::size_t f = 0; f < tree.size(); ++f) {
    const auto& nodes = tree.at(f).spec().nodes;
    for (const std::uint32_t i : tree.at(f).conditional_nodes) {  // in declaration order
      const auto* cond = std::get_if<conditional_node>(&nodes[i].params);
      auto found = tree.find_condition(f, cond->condition);
      if (!found) continue;
      const auto& declared = tree.at(found->frame).spec().conditions;
      std::string& user = tested_by[found->frame][static_cast<std::size_t>(found->decl - declared.data())];
      const std::string path = tree.at(f).view.path(i);
      if (!user.empty()) {
        throw check_error("condition '" + cond->condition + "' is tested by two conditional nodes, '" +
                              user + "' and '" + path +
                              "'; CUDA binds a conditional handle to one conditional node: "
                              "declare one condition for each",
                          {user, path});
      }
      user = path;
    }
  }

  for (std::size_t f = 0; f < tree.size(); ++f) {
    const auto& declared = tree.at(f).spec().conditions;
    for (std::size_t c = 0; c < declared.size(); ++c) {
      if (tested_by[f][c].empty()) {
        // Name the nodes that read the handle (the kernel meant to set it):
        // where the user will look first. Cold path: a walk of every node.
        std::vector<std::string> readers;
        for (std::size_t g = 0; g < tree.size(); ++g) {
          const auto& nodes = tree.at(g).spec().nodes;
          for (std::size_t i = 0; i < nodes.size(); ++i) {
            bool reads = false;
            for_each_value(nodes[i], [&](const value& v) {
              const auto* ref = std::get_if<condition_ref>(&v.source);
              if (!ref || ref->name != declared[c].name) return;
              const auto found = tree.find_condition(g, ref->name);
              reads |= found && found->frame == f && found->decl == &declared[c];
            });
            if (reads) readers.push_back(tree.at(g).view.path(i));
          }
        }
        std::string read_by;
        for (std::size_t k = 0; k < readers.size(); ++k)
          read_by += (k ? ", '" : " (read by node '") + readers[k] + "'";
        if (!readers.empty()) read_by += ")";
        throw check_error("condition '" + declared[c].name + "' is declared in " +
                              tree.at(f).view.description() +
                              " but no conditional node uses it" + read_by +
                              "; CUDA refuses to instantiate a graph with an unused conditional "
                              "handle",
                          std::move(readers));
      }
    }
  }
}

}  // namespace cudag::check_detail
