// A conditional handle that no conditional node uses makes instantiation fail
// in CUDA, so an unused condition declaration is refused up front.
#include <variant>

#include "check_passes.hpp"
#include "cudag/check.hpp"

namespace cudag::check_detail {

void check_conditions_used(const spec_tree& tree) {
  std::vector<std::vector<bool>> used(tree.size());
  for (std::size_t f = 0; f < tree.size(); ++f) used[f].resize(tree.at(f).spec().conditions.size());

  for (std::size_t f = 0; f < tree.size(); ++f) {
    for (const node& n : tree.at(f).spec().nodes) {
      const auto* cond = std::get_if<conditional_node>(&n.params);
      if (!cond) continue;
      if (auto found = tree.find_condition(f, cond->condition)) {
        const auto& declared = tree.at(found->frame).spec().conditions;
        used[found->frame][static_cast<std::size_t>(found->decl - declared.data())] = true;
      }
    }
  }

  for (std::size_t f = 0; f < tree.size(); ++f) {
    const auto& declared = tree.at(f).spec().conditions;
    for (std::size_t c = 0; c < declared.size(); ++c) {
      if (!used[f][c]) {
        throw check_error("condition '" + declared[c].name + "' is declared in " +
                              tree.at(f).view.description() +
                              " but no conditional node uses it; CUDA refuses to instantiate a "
                              "graph with an unused conditional handle",
                          {});
      }
    }
  }
}

}  // namespace cudag::check_detail
