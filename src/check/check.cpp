// check(): the passes in order, structure first, so that later passes may
// rely on resolved names and an acyclic graph in every frame.
#include "cudag/check.hpp"

#include "check_passes.hpp"
#include "spec_tree.hpp"

namespace cudag {
namespace {

void run_spec_passes(const check_detail::spec_tree& tree) {
  check_detail::check_parameter_declarations(tree);
  check_detail::check_node_rules(tree);
  check_detail::check_conditions_used(tree);
  check_detail::check_buffer_lifetimes(tree);
}

}  // namespace

void check(const graph_spec& spec) {
  const check_detail::spec_tree tree(spec);  // structure of every graph
  run_spec_passes(tree);
}

void check(const graph_spec& spec, std::span<const binding> bindings) {
  const check_detail::spec_tree tree(spec);
  run_spec_passes(tree);
  check_detail::check_bindings(tree, bindings);
}

}  // namespace cudag
