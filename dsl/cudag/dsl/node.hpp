#pragma once
// A named node: a fixed-string name and a body of one kind. Everything the
// graph algorithms need is in the node's constexpr `info`; the body's type
// (not the name) carries the lowering code, so nodes of the same kind and
// argument types share one instantiation whatever their names.
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

#include "cudag/dsl/fixed_string.hpp"
#include "cudag/dsl/items.hpp"
#include "cudag/dsl/lowering.hpp"

namespace cudag::dsl::detail {

/// Defaults a body may override: no nested graph, nothing allocated or freed.
struct leaf_body {
  static constexpr bool nests_graphs = false;
  static constexpr std::string_view allocates{};
  static constexpr std::string_view frees{};
  static constexpr std::string_view nested_forbidden_path{};
  static constexpr node_kind nested_forbidden_kind = node_kind::empty;
  static constexpr std::string_view owned_condition{};
  /// Conditional nodes inside (bodies, child graphs), by path from the body.
  static constexpr std::array<condition_test, 0> nested_condition_tests{};
  /// Whether a launch inside follows parameters (shape rules): a rebind
  /// checks it before it changes anything.
  static constexpr bool launch_follows_parameters = false;
  /// Whether an operand may view a buffer: graph() then checks that it
  /// stays inside a buffer the graph allocates (buffer_views.hpp).
  static constexpr bool views_buffers = false;
  /// A kernel node marked with synchronizes_grid_dependencies(): typed
  /// (programmatic, launch-completion) edges may lead into it.
  static constexpr bool synchronizes_grid_dependencies = false;
};

/// The conditions a node tests, itself or inside it, by path from the graph
/// holding it.
template <fixed_string Name, class Body>
struct node_condition_tests {
  static constexpr auto tests = [] {
    constexpr std::size_t own = Body::owned_condition.empty() ? 0 : 1;
    std::array<condition_test, own + Body::nested_condition_tests.size()> out{};
    if constexpr (own != 0) {
      out[0].hash = name_hash(Body::owned_condition);
      out[0].condition = Body::owned_condition;
      out[0].node_path << Name.view();
    }
    std::size_t k = own;  // a range-for: no `k < 0` comparison for bodies without tests
    for (const condition_test& inner : Body::nested_condition_tests) {
      condition_test& t = out[k++];
      t.hash = inner.hash;
      t.condition = inner.condition;
      // "[1]/x" (a body of a switch or if-else) attaches to the name: "pick[1]/x".
      t.node_path << Name.view() << (inner.node_path.view().starts_with("[") ? "" : "/")
                  << inner.node_path.view();
    }
    return out;
  }();
  static constexpr std::span<const condition_test> span{tests};
};

/// Nodes that test no condition (most) share one empty answer without
/// instantiating anything named by their own name.
struct no_condition_tests {
  static constexpr std::span<const condition_test> span{};
};
template <fixed_string Name, class Body>
using condition_tests_of =
    std::conditional_t<Body::owned_condition.empty() && Body::nested_condition_tests.size() == 0,
                       no_condition_tests, node_condition_tests<Name, Body>>;

/// A node's description: its body's, with its name and condition tests.
template <class Body>
[[nodiscard]] constexpr item_info node_item_info(std::string_view name,
                                                 std::span<const condition_test> tests) noexcept {
  constexpr bool forbidden_itself = !allowed_in_conditional_body(Body::kind);
  return item_info{true,
                   name,
                   Body::kind,
                   {},
                   std::span<const ref_info>(Body::refs),
                   Body::allocates,
                   Body::frees,
                   Body::nested_forbidden_path,
                   forbidden_itself ? Body::kind : Body::nested_forbidden_kind,
                   !forbidden_itself && Body::nested_forbidden_path.empty(),
                   Body::owned_condition,
                   tests,
                   Body::synchronizes_grid_dependencies,
                   edge_kind::full};
}

template <fixed_string Name, class Body>
struct node_t {
  using body_type = Body;
  static constexpr auto name = Name;
  static constexpr item_info info =
      node_item_info<Body>(Name.view(), condition_tests_of<Name, Body>::span);

  Body body;
};

/// What the run-time walks (lowering, rebinding) call for one node, with the
/// node's body, storage and the walk's state erased to pointers: one set of
/// functions per body type, and walks that are plain loops over
/// compile-time arrays instead of per-node template instantiations.
struct node_ops {
  cudaGraphNode_t (*lower)(const void* body, void* storage, void* state, cudaGraph_t target,
                           native::deps_span deps, std::string_view name);
  void (*update)(const void* body, void* storage, void* state, cudaGraphNode_t node,
                 native::param_target to, std::string_view name, param_hashes hashes);
  void (*reapply)(const void* body, void* storage, void* state, cudaGraphNode_t node,
                  std::string_view name);
  /// Throws, naming the node, where the launch its shape rules (its nested
  /// nodes' for a body holding graphs) give for the current values is one
  /// CUDA cannot launch. Null where no launch inside follows a parameter.
  void (*check_launch)(const void* body, void* storage, void* state, std::string_view name,
                       param_hashes hashes);
};
using launch_check = decltype(node_ops::check_launch);

struct node_entry {
  const node_ops* ops = nullptr;
  const void* body = nullptr;
  void* storage = nullptr;
};

/// A node's run-time storage and where its references live in the tables.
/// No member initialisers: kept trivial where Storage is. The arena
/// default-initialises it; lowering writes every field before any is read.
template <class Storage>
struct slotted_storage {
  Storage storage;
  const ref_slot* slots;
};

/// Operations of a body that holds no graph: independent of the graph type,
/// so one short-named set per body type serves every graph.
template <class Body>
struct leaf_ops {
  using stored = slotted_storage<typename Body::storage>;
  static cudaGraphNode_t lower(const void* body, void* s, void* state, cudaGraph_t target,
                               native::deps_span deps, std::string_view name) {
    stored& st = *static_cast<stored*>(s);
    return static_cast<const Body*>(body)->lower(st.storage, *static_cast<lowering_state*>(state),
                                                 st.slots, target, deps, name);
  }
  static void update(const void* body, void* s, void* state, cudaGraphNode_t node,
                     native::param_target to, std::string_view name, param_hashes hashes) {
    stored& st = *static_cast<stored*>(s);
    static_cast<const Body*>(body)->update(st.storage, *static_cast<lowering_state*>(state), st.slots,
                                           node, to, name, hashes);
  }
  static void reapply(const void* body, void* s, void* state, cudaGraphNode_t node,
                      std::string_view name) {
    if constexpr (requires { &Body::reapply; })
      static_cast<const Body*>(body)->reapply(static_cast<stored*>(s)->storage,
                                              *static_cast<lowering_state*>(state), node, name);
  }
  static void check_launch(const void* body, void* s, void* state, std::string_view name,
                           param_hashes) {
    const stored& st = *static_cast<const stored*>(s);
    static_cast<const Body*>(body)->check_launch(*static_cast<const lowering_state*>(state), st.slots,
                                                 name);
  }
  static constexpr launch_check check_launch_op() noexcept {
    if constexpr (Body::launch_follows_parameters)
      return &check_launch;
    else
      return nullptr;
  }
  static constexpr node_ops table{&lower, &update, &reapply, check_launch_op()};
};

/// Operations of a body holding graphs (child, conditional): its graphs are
/// lowered against the top-level graph Root's tables.
template <class Body, class Root>
struct nesting_ops {
  using stored = slotted_storage<typename Body::storage>;
  static cudaGraphNode_t lower(const void* body, void* s, void* state, cudaGraph_t target,
                               native::deps_span deps, std::string_view name) {
    stored& st = *static_cast<stored*>(s);
    return static_cast<const Body*>(body)->template lower<Root>(
        st.storage, *static_cast<lowering_state*>(state), st.slots, target, deps, name);
  }
  static void update(const void* body, void* s, void* state, cudaGraphNode_t, native::param_target,
                     std::string_view, param_hashes hashes) {
    static_cast<const Body*>(body)->template update<Root>(static_cast<stored*>(s)->storage,
                                                          *static_cast<lowering_state*>(state),
                                                          hashes);
  }
  static void reapply(const void*, void*, void*, cudaGraphNode_t, std::string_view) {}
  static void check_launch(const void* body, void* s, void* state, std::string_view,
                           param_hashes hashes) {
    static_cast<const Body*>(body)->template check_launch<Root>(
        static_cast<stored*>(s)->storage, *static_cast<lowering_state*>(state), hashes);
  }
  static constexpr launch_check check_launch_op() noexcept {
    if constexpr (Body::launch_follows_parameters)
      return &check_launch;
    else
      return nullptr;
  }
  static constexpr node_ops table{&lower, &update, &reapply, check_launch_op()};
};

template <class Body, class Root, bool Nests = Body::nests_graphs>
struct ops_for {
  static constexpr const node_ops* table = &leaf_ops<Body>::table;
};
template <class Body, class Root>
struct ops_for<Body, Root, true> {
  static constexpr const node_ops* table = &nesting_ops<Body, Root>::table;
};

/// The operations of a body type; edges have none.
template <class Body, class Root>
inline constexpr const node_ops* ops_table = ops_for<Body, Root>::table;
template <class Root>
inline constexpr const node_ops* ops_table<edge_body, Root> = nullptr;

/// Storage of a body that lowers to nothing (edges): nothing.
struct no_storage {};

template <class Body>
struct storage_of_body {
  using type = no_storage;
};
template <class Body>
  requires requires { typename Body::storage; }
struct storage_of_body<Body> {
  using type = slotted_storage<typename Body::storage>;
};

}  // namespace cudag::dsl::detail
