#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph_view.hpp"

namespace cudag::check_detail {

/// Edges (dependency, dependent) of `view` that another path already implies,
/// listed by dependent in declaration order, then in dependency order.
/// Throws cudag::error, before the costly part, when the graph needs more
/// than `work_limit` word operations (see redundant_edges.cpp).
[[nodiscard]] std::vector<std::pair<std::string, std::string>> find_redundant_edges(
    const graph_view& view, std::uint64_t work_limit);

}  // namespace cudag::check_detail
