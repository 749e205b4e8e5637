#pragma once
// check() with what lowering needs as its by-product: each graph's
// dependency plan (creation order and dependencies as indices), taken from
// the views the checks built, so that lowering resolves no name again.
#include <span>
#include <unordered_map>

#include "cudag/bindings.hpp"
#include "cudag/spec.hpp"
#include "dependency_plan.hpp"

namespace cudag::check_detail {

/// The plan of every graph of a checked spec (nested ones included), by
/// the graph's address: valid while the spec is neither changed nor moved.
using checked_plans = std::unordered_map<const graph_spec*, dependency_plan>;

/// check(spec, bindings), returning the plans.
[[nodiscard]] checked_plans check_and_plan(const graph_spec& spec, std::span<const binding> bindings);

}  // namespace cudag::check_detail
