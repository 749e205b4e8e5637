#pragma once
#include <string>
#include <utility>
#include <vector>

#include "graph_view.hpp"

namespace cudag::check_detail {

/// Edges (dependency, dependent) of `view` that another path already implies,
/// listed by dependent in declaration order, then in dependency order.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> find_redundant_edges(
    const graph_view& view);

}  // namespace cudag::check_detail
