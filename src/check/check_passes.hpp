#pragma once
// The passes of check(), each over a whole spec_tree, each throwing
// check_error on the first problem it finds. check() runs them in this order.
#include <span>

#include "cudag/bindings.hpp"
#include "spec_tree.hpp"

namespace cudag::check_detail {

/// A parameter name declared with different types in nested graphs.
void check_parameter_declarations(const spec_tree& tree);
/// Per node: kind-specific rules and every value it reads. With
/// `tally_values`, each frame's value_count and value_bytes are set too
/// (what lowering reserves; check() alone skips them).
void check_node_rules(const spec_tree& tree, bool tally_values = false);
/// Declared conditions that no conditional node uses.
void check_conditions_used(const spec_tree& tree);
/// Buffers: alloc/free pairing, visibility, users inside the alloc..free window.
void check_buffer_lifetimes(const spec_tree& tree);
/// Every declared parameter bound once with a fitting type; no stray binding.
void check_bindings(const spec_tree& tree, std::span<const binding> bindings);

}  // namespace cudag::check_detail
