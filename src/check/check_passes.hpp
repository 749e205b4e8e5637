#pragma once
// The passes of check(), each over a whole spec_tree, each throwing
// check_error on the first problem it finds. check() runs them in this order.
#include <memory>
#include <span>

#include "cudag/bindings.hpp"
#include "cudag/check.hpp"
#include "spec_tree.hpp"

namespace cudag::check_detail {

class race_collector;

/// A parameter name declared with different types in nested graphs.
void check_parameter_declarations(const spec_tree& tree);
/// Per node: kind-specific rules and every value it reads. With
/// `tally_values`, each frame's value_count and value_bytes are set too
/// (what lowering reserves; check() alone skips them).
void check_node_rules(const spec_tree& tree, bool tally_values = false,
                      race_collector* races = nullptr);
/// Declared conditions that no conditional node uses.
void check_conditions_used(const spec_tree& tree);
/// Buffers: alloc/free pairing, visibility, users inside the alloc..free window.
void check_buffer_lifetimes(const spec_tree& tree);
/// The race pass's collection (races.cpp), fed node by node by a pass that
/// walks every node anyway (check_node_rules): in a large graph the nodes
/// are far past the caches, and one walk over them costs half of two.
class race_collector {
 public:
  /// With `all`, judge() lists every race; otherwise it throws on the first.
  race_collector(const spec_tree& tree, std::span<const binding> bindings, bool all = false);
  ~race_collector();
  race_collector(const race_collector&) = delete;
  race_collector& operator=(const race_collector&) = delete;
  /// Node `index` of frame `frame`, frames in pre-order, nodes in order;
  /// `resolved`, the declaration each of its values (for_each_value's
  /// order) resolves to, a null decl for a value that is no parameter.
  void visit(std::size_t frame, std::size_t index, const node& n,
             std::span<const spec_tree::param_found> resolved);
  std::vector<race_report> judge();

 private:
  struct finder;
  std::unique_ptr<finder> finder_;
};

/// Races (races.cpp): two nodes of one graph touching the same bytes, one
/// of them writing, with no path between them. With `bindings`, pointer
/// parameters bound to one address are one memory.
void check_races(const spec_tree& tree, std::span<const binding> bindings = {});
/// Every race, not only the first.
[[nodiscard]] std::vector<race_report> find_races(const spec_tree& tree,
                                           std::span<const binding> bindings = {});
/// Every declared parameter bound once with a fitting type; no stray binding.
void check_bindings(const spec_tree& tree, std::span<const binding> bindings);

}  // namespace cudag::check_detail
