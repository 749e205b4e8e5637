#pragma once
// Nodes about the graph's structure: child graphs (themselves DSL graphs),
// empty nodes, event record/wait, and conditional nodes (if, if-else, while,
// switch) whose bodies are DSL graphs.
//
//   child<"step">(inner_graph)
//   empty<"join">()
//   record<"done">(event)            // event: cudaEvent_t or param<"e", cudaEvent_t>
//   while_loop<"iterate">(more, body_graph)
//   switch_case<"pick">(which, case0, case1, case2)
#include <cuda_runtime_api.h>

#include <array>
#include <string_view>

#include "cudag/dsl/arguments.hpp"
#include "cudag/dsl/node_tuple.hpp"
#include "cudag/dsl/node.hpp"
#include "cudag/lean_std.hpp"

namespace cudag::dsl {

/// Never defined: a node of a kind CUDA forbids inside conditional bodies
/// (host, event record/wait, mem alloc/free), named by path from the
/// conditional node.
template <fixed_string PathAndKind>
struct node_kind_forbidden_in_conditional_body;

namespace detail {

// Provided by graph.hpp.
template <class G>
struct graph_storage;
/// Lowers G into `target`, resolving names against Root's tables (Root: the
/// top-level graph).
template <class G, class Root = G>
void lower_graph(const G& graph, graph_storage<G>& storage, lowering_state& st, cudaGraph_t target);
/// Nested graphs: every node reading the parameter, updated in the template.
template <class G, class Root>
void update_readers(const G& graph, graph_storage<G>& storage, lowering_state& st,
                    param_hashes hashes);
/// Nested graphs: the launch of every node reading one of the parameters, checked.
template <class G, class Root>
void check_reader_launches(graph_storage<G>& storage, lowering_state& st, param_hashes hashes);
/// Writes G's nodes, dependencies, parameters and conditions.
template <class G>
void write_graph(const G& graph, spec_writer w);

// ------------------------------------------------------------------- child --
template <class G>
struct child_body : leaf_body {
  static constexpr node_kind kind = node_kind::child;
  static constexpr auto refs = G::shape.all_refs;
  static constexpr std::string_view nested_forbidden_path = G::shape.forbidden_path.view();
  static constexpr node_kind nested_forbidden_kind = G::shape.forbidden_kind;
  static constexpr auto nested_condition_tests = G::shape.condition_tests;
  static constexpr bool nests_graphs = true;
  static constexpr bool launch_follows_parameters = G::launch_follows_parameters;
  /// A buffer freed inside but allocated outside: this node frees it, as the
  /// enclosing graph sees it (ordering and pairing are checked there).
  static constexpr std::string_view frees = G::shape.orphan_free_buffer;
  static constexpr bool views_buffers = G::views_any_buffer;

  G graph;

  /// f(graph, what joins this node's name to a nested path: "/").
  template <class F>
  constexpr void for_each_nested_graph(F&& f) const {
    f(graph, std::string_view("/"));
  }

  using storage = graph_storage<G>;
  template <class Root>
  cudaGraphNode_t lower(storage& s, lowering_state& st, const ref_slot*, cudaGraph_t g,
                        native::deps_span deps, std::string_view name) const {
    unique_graph inner = make_graph();
    lower_graph<G, Root>(graph, s, st, inner.get());
    // Moved, not cloned: the inner nodes keep their handles (for rebinding),
    // and alloc/conditional nodes are allowed inside.
    const cudaGraphNode_t n =
        native::add_child(g, deps, inner.get(), native::child_ownership::move, name);
    (void)inner.release();
    return n;
  }
  template <class Root>
  void update(storage& s, lowering_state& st, param_hashes hashes) const {
    update_readers<G, Root>(graph, s, st, hashes);
  }
  template <class Root>
  void check_launch(storage& s, lowering_state& st, param_hashes hashes) const {
    check_reader_launches<G, Root>(s, st, hashes);
  }
  void write_spec(spec_writer& w, std::string_view name) const { write_graph(graph, w.child(name)); }
};

}  // namespace detail

template <fixed_string Name, class G>
[[nodiscard]] constexpr auto child(const G& graph) {
  using body = detail::child_body<G>;
  return detail::node_t<Name, body>{body{{}, graph}};
}

namespace detail {

// ------------------------------------------------------------------- empty --
struct empty_body : leaf_body {
  static constexpr node_kind kind = node_kind::empty;
  static constexpr std::array<ref_info, 0> refs{};
  struct storage {};
  cudaGraphNode_t lower(storage&, lowering_state&, const ref_slot*, cudaGraph_t g,
                        native::deps_span deps, std::string_view name) const {
    return native::add_empty(g, deps, name);
  }
  void update(storage&, lowering_state&, const ref_slot*, cudaGraphNode_t, native::param_target,
              std::string_view, param_hashes) const {}
  void write_spec(spec_writer& w, std::string_view name) const { w.empty(name); }
};

}  // namespace detail

template <fixed_string Name>
[[nodiscard]] constexpr detail::node_t<Name, detail::empty_body> empty() {
  return {};
}

/// A child graph whose declaration was refused (refused_graph in graph.hpp)
/// stands as an empty node: its error is already reported. graph()'s result
/// used directly is refused here, naming the problem's type.
template <fixed_string Name, detail::refused_graph_type G>
[[nodiscard]] constexpr detail::node_t<Name, detail::empty_body> child(const G&) {
  return {};
}
template <fixed_string Name, detail::refused_graph_type G>
void child(const G&&) = delete;

namespace detail {

// ------------------------------------------------------------------ events --
template <bool Record, class E>
struct event_body : leaf_body {
  static constexpr node_kind kind = Record ? node_kind::event_record : node_kind::event_wait;
  static constexpr auto refs = refs_of<E>();

  E event;

  struct storage {};
  cudaGraphNode_t lower(storage&, lowering_state& st, const ref_slot* slots, cudaGraph_t g,
                        native::deps_span deps, std::string_view name) const {
    const cudaEvent_t e = resolve<cudaEvent_t>(event, st.values, slots, 0);
    if constexpr (Record)
      return native::add_event_record(g, deps, e, name);
    else
      return native::add_event_wait(g, deps, e, name);
  }
  void update(storage&, lowering_state& st, const ref_slot* slots, cudaGraphNode_t node,
              native::param_target to, std::string_view name, param_hashes) const {
    const cudaEvent_t e = resolve<cudaEvent_t>(event, st.values, slots, 0);
    if constexpr (Record)
      native::set_event_record(to, node, e, name);
    else
      native::set_event_wait(to, node, e, name);
  }
  void write_spec(spec_writer& w, std::string_view name) const {
    if constexpr (Record)
      w.event_record(name, spec_view<cudaEvent_t>(event));
    else
      w.event_wait(name, spec_view<cudaEvent_t>(event));
  }
};

/// What an event node whose operand is not an event holds after its error:
/// a body of its kind with a null event that keeps the operand's reference
/// (the graph's parameters stay as declared), so that the graph compiles on
/// and one mistake gives one error.
template <class Body, class E>
struct event_after_error : Body {
  static constexpr auto refs = refs_of<E>();
};

}  // namespace detail

template <fixed_string Name, class E>
[[nodiscard]] constexpr decltype(auto) record(const E& event) {
  if constexpr (!detail::dsl_passes_as<cudaEvent_t, E> && CUDAG_DSL_REFUSES_BY_COPY) {
    return detail::refusal_of<node_operand_has_wrong_type<Name, "event", cudaEvent_t, E>>();
  } else if constexpr (!detail::dsl_passes_as<cudaEvent_t, E>) {
    static_assert(detail::check_operand<Name, "event", cudaEvent_t, E>());
    using body = detail::event_after_error<detail::event_body<true, cudaEvent_t>, E>;
    return detail::node_t<Name, body>{body{{{}, nullptr}}};
  } else {
    using body = detail::event_body<true, detail::stored_arg<cudaEvent_t, E>>;
    return detail::node_t<Name, body>{body{{}, detail::store_arg<cudaEvent_t>(event)}};
  }
}
template <fixed_string Name, class E>
[[nodiscard]] constexpr decltype(auto) wait(const E& event) {
  if constexpr (!detail::dsl_passes_as<cudaEvent_t, E> && CUDAG_DSL_REFUSES_BY_COPY) {
    return detail::refusal_of<node_operand_has_wrong_type<Name, "event", cudaEvent_t, E>>();
  } else if constexpr (!detail::dsl_passes_as<cudaEvent_t, E>) {
    static_assert(detail::check_operand<Name, "event", cudaEvent_t, E>());
    using body = detail::event_after_error<detail::event_body<false, cudaEvent_t>, E>;
    return detail::node_t<Name, body>{body{{{}, nullptr}}};
  } else {
    using body = detail::event_body<false, detail::stored_arg<cudaEvent_t, E>>;
    return detail::node_t<Name, body>{body{{}, detail::store_arg<cudaEvent_t>(event)}};
  }
}

namespace detail {

// ------------------------------------------------------------- conditional --
template <class... G>
[[nodiscard]] consteval std::size_t total_ref_count() {
  return (G::shape.all_refs.size() + ... + 0);
}

template <class Condition, class... G>
[[nodiscard]] consteval auto conditional_refs() {
  std::array<ref_info, 1 + total_ref_count<G...>()> out{};
  out[0] = arg_traits<Condition>::ref;
  std::size_t k = 1;
  ((void)[&] {
    for (const ref_info& r : G::shape.all_refs) out[k++] = r;
  }(), ...);
  return out;
}

/// Whether the nodes of a conditional's bodies are named with the body's
/// index ("pick[1]/grab"), as nested_prefix() names them at run time.
[[nodiscard]] constexpr bool bodies_indexed(conditional_kind kind) noexcept {
  return kind == conditional_kind::if_else || kind == conditional_kind::switch_case;
}

/// The conditions tested inside bodies G..., by path from the conditional
/// node: "[1]/inner" for body 1 of a switch, "inner" for a loop's one body.
template <conditional_kind Kind, class... G>
[[nodiscard]] consteval auto body_condition_tests() {
  std::array<condition_test, (G::shape.condition_tests.size() + ... + 0)> out{};
  std::size_t k = 0, body = 0;
  ((void)[&] {
    for (const condition_test& t : G::shape.condition_tests) {
      out[k] = t;
      if (bodies_indexed(Kind)) {
        out[k].node_path = {};
        out[k].node_path << "[" << body << "]/" << t.node_path.view();
      }
      ++k;
    }
    ++body;
  }(), ...);
  return out;
}

template <conditional_kind Kind, class Condition, class... G>
struct conditional_body : leaf_body {
  static constexpr node_kind kind = node_kind::conditional;
  static constexpr auto refs = conditional_refs<Condition, G...>();
  static constexpr std::string_view owned_condition = Condition::name.view();
  static constexpr auto nested_condition_tests = body_condition_tests<Kind, G...>();
  static constexpr bool nests_graphs = true;
  static constexpr bool launch_follows_parameters = (G::launch_follows_parameters || ...);
  static constexpr bool views_buffers = (G::views_any_buffer || ...);

  node_tuple<G...> bodies;

  /// f(body, what joins this node's name to a nested path: "/" for an if or
  /// while node's one body, "[b]/" for body b of an if-else or switch node).
  template <class F>
  constexpr void for_each_nested_graph(F&& f) const {
    for_each_body(f, std::index_sequence_for<G...>{});
  }
  template <class F, std::size_t... I>
  constexpr void for_each_body(F& f, std::index_sequence<I...>) const {
    constexpr bool numbered = Kind == conditional_kind::if_else || Kind == conditional_kind::switch_case;
    (
        [&] {
          if constexpr (numbered) {
            text_buffer<24> suffix;
            suffix << "[" << I << "]/";
            f(at_c<I>(bodies), suffix.view());
          } else {
            f(at_c<I>(bodies), std::string_view("/"));
          }
        }(),
        ...);
  }

  using storage = node_tuple<graph_storage<G>...>;

  /// slots[0]: the condition's slot (its first reference).
  template <class Root>
  cudaGraphNode_t lower(storage& s, lowering_state& st, const ref_slot* slots, cudaGraph_t g,
                        native::deps_span deps, std::string_view name) const {
    std::array<cudaGraph_t, sizeof...(G)> targets{};
    const cudaGraphNode_t n = native::add_conditional(g, deps, st.values.conditions[slots[0]], Kind,
                                                      unsigned(sizeof...(G)), targets, name);
    lower_bodies<Root>(s, st, targets, std::index_sequence_for<G...>{});
    return n;
  }
  template <class Root, std::size_t... I>
  void lower_bodies(storage& s, lowering_state& st, const std::array<cudaGraph_t, sizeof...(G)>& targets,
                    std::index_sequence<I...>) const {
    (lower_graph<G, Root>(at_c<I>(bodies), at_c<I>(s), st, targets[I]), ...);
  }
  template <class Root>
  void update(storage& s, lowering_state& st, param_hashes hashes) const {
    update_bodies<Root>(s, st, hashes, std::index_sequence_for<G...>{});
  }
  template <class Root, std::size_t... I>
  void update_bodies(storage& s, lowering_state& st, param_hashes hashes,
                     std::index_sequence<I...>) const {
    (update_readers<G, Root>(at_c<I>(bodies), at_c<I>(s), st, hashes), ...);
  }
  template <class Root>
  void check_launch(storage& s, lowering_state& st, param_hashes hashes) const {
    check_bodies<Root>(s, st, hashes, std::index_sequence_for<G...>{});
  }
  template <class Root, std::size_t... I>
  void check_bodies(storage& s, lowering_state& st, param_hashes hashes,
                    std::index_sequence<I...>) const {
    (check_reader_launches<G, Root>(at_c<I>(s), st, hashes), ...);
  }
  void write_spec(spec_writer& w, std::string_view name) const {
    w.conditional(name, Kind, Condition::name.view(), sizeof...(G));
    write_bodies(w, std::index_sequence_for<G...>{});
  }
  template <std::size_t... I>
  void write_bodies(spec_writer& w, std::index_sequence<I...>) const {
    (write_graph(at_c<I>(bodies), w.body(I)), ...);
  }
};

/// The first node of a body that CUDA forbids there, as "node/path (kind)"
/// or "node[body]/path (kind)"; empty when every body is allowed.
template <fixed_string Name, conditional_kind Kind, class... G>
consteval message_buffer first_forbidden_body() {
  message_buffer m;
  std::size_t body = 0;
  const auto visit = [&](std::string_view path, node_kind kind) {
    if (m.size == 0 && !path.empty()) {
      m << Name.view();
      if (bodies_indexed(Kind)) m << "[" << body << "]";
      m << "/" << path << " (" << kind_name(kind) << " node)";
    }
    ++body;
  };
  (visit(G::shape.forbidden_path.view(), G::shape.forbidden_kind), ...);
  return m;
}

template <fixed_string Name, conditional_kind Kind, class Condition, class... G>
[[nodiscard]] constexpr auto make_conditional(const G&... bodies) {
  // Checked here, not in a helper: each template between the user's call
  // and the error adds a line of context before it.
  constexpr message_buffer forbidden = first_forbidden_body<Name, Kind, G...>();
  if constexpr (forbidden.size != 0) {
    static_assert(sizeof(node_kind_forbidden_in_conditional_body<to_fixed<forbidden.size>(
                      forbidden.view())>) == 0);
    // After the error, an empty node: the refused bodies (an allocation's
    // buffer, an event) would otherwise be judged again where the graph is used.
    return node_t<Name, empty_body>{};
  } else {
    using body = conditional_body<Kind, Condition, G...>;
    return node_t<Name, body>{body{{}, make_node_tuple(bodies...)}};
  }
}

}  // namespace detail

template <fixed_string Name, class Condition, class G>
[[nodiscard]] constexpr auto if_then(Condition, const G& then_body) {
  return detail::make_conditional<Name, conditional_kind::if_then, Condition>(then_body);
}
template <fixed_string Name, class Condition, class G, class H>
[[nodiscard]] constexpr auto if_else(Condition, const G& then_body, const H& else_body) {
  return detail::make_conditional<Name, conditional_kind::if_else, Condition>(then_body, else_body);
}
template <fixed_string Name, class Condition, class G>
[[nodiscard]] constexpr auto while_loop(Condition, const G& body) {
  return detail::make_conditional<Name, conditional_kind::while_loop, Condition>(body);
}
/// Never defined: a switch node declared without a case body.
template <fixed_string Node>
struct switch_without_cases;

template <fixed_string Name, class Condition, class... G>
[[nodiscard]] constexpr auto switch_case(Condition, const G&... cases) {
  if constexpr (sizeof...(G) == 0)  // after the error, a switch of no body: no second error
    static_assert(sizeof(switch_without_cases<Name>) == 0);
  return detail::make_conditional<Name, conditional_kind::switch_case, Condition>(cases...);
}

}  // namespace cudag::dsl
