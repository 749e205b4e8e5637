#pragma once
// Nodes that run host code: a host callable (runs on a driver thread when its
// dependencies are done; its exceptions reach the caller at the next launch or
// synchronize), and a captured region (a callable that issues library calls
// on a stream, recorded by stream capture into a child graph; recorded again
// when one of its arguments is rebound).
//
//   host<"report">([](const float* p, int n) { ... }, out, n)
//   captured<"gemm", "cublasSgemm 64x64">(
//       [h](cudaStream_t s, const float* a, float* c) { ... }, a, c)
#include <cuda_runtime_api.h>

#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "cudag/dsl/arguments.hpp"
#include "cudag/dsl/node_tuple.hpp"
#include "cudag/dsl/node.hpp"
#include "cudag/lean_std.hpp"

namespace cudag::dsl {

/// The callable of node `Node` cannot be called with its arguments (a
/// refusal under g++, CUDAG_DSL_REFUSAL; elsewhere never defined).
template <fixed_string Node, class Callable, class... ArgumentTypes>
struct callable_does_not_accept_arguments CUDAG_DSL_REFUSAL(callable_does_not_accept_arguments);

namespace detail {

/// What a host or captured node whose callable does not accept its arguments
/// holds after its error: a callable that accepts anything and does nothing,
/// so that the graph compiles on and one mistake gives one error.
struct callable_after_error {
  template <class... T>
  constexpr void operator()(const T&...) const noexcept {}
};

template <class... T, class F, std::size_t... I>
void call_with_values(F& f, std::span<const void* const> values, std::index_sequence<I...>) {
  (void)values;  // no arguments: g++ warns it set but unused
  f(*static_cast<const T*>(values[I])...);
}

// -------------------------------------------------------------------- host --
template <class F, class... S>
struct host_body : leaf_body {
  static constexpr node_kind kind = node_kind::host;
  /// It may do anything with a pointer: read and written unless declared.
  static constexpr auto refs = refs_touching<S...>({(void(sizeof(S)), access_mode::read_write)...});

  F function;
  node_tuple<S...> args;

  static constexpr bool views_buffers = any_buffer_view<S...>;
  template <class V>
  constexpr void for_each_buffer_view(V&& f) const {
    for_each_argument_view(args, f, std::index_sequence_for<S...>{});
  }

  using values_type = node_tuple<arg_type<S>...>;
  struct storage {
    values_type values;                       ///< the arguments' current values
    std::shared_ptr<native::host_call> call;  ///< what the graph's node runs
  };
  static constexpr auto arg_ref = ref_positions<S...>();
  void fill(storage& s, const value_tables& values, const ref_slot* slots) const noexcept {
    fill_at(s, values, slots, std::index_sequence_for<S...>{});
  }
  template <std::size_t... I>
  void fill_at(storage& s, const value_tables& values, const ref_slot* slots,
               std::index_sequence<I...>) const noexcept {
    (void)s, (void)values, (void)slots;  // no arguments: g++ warns them set but unused
    ((at_c<I>(s.values) = resolve<arg_type<S>>(at_c<I>(args), values, slots, arg_ref[I])), ...);
  }
  template <std::size_t... I>
  void run(const values_type& values, std::index_sequence<I...>) const {
    if constexpr (std::is_invocable_v<const F&, const arg_type<S>&...>) {
      function(at_c<I>(values)...);
    } else {
      F f = function;  // a mutable callable: call a copy
      f(at_c<I>(values)...);
    }
  }
  /// A call on a snapshot of the current values: a launch still pending
  /// keeps the values it was launched with when a rebind replaces the call.
  std::shared_ptr<native::host_call> make_call(const storage& s, const lowering_state& st,
                                               std::string_view name) const {
    auto call = std::make_shared<native::host_call>();
    call->node.assign(name);
    call->failures = st.host_failures;
    call->body = [body = this, snapshot = std::make_shared<const values_type>(s.values)] {
      body->run(*snapshot, std::index_sequence_for<S...>{});
    };
    return call;
  }

  cudaGraphNode_t lower(storage& s, lowering_state& st, const ref_slot* slots, cudaGraph_t g,
                        native::deps_span deps, std::string_view name) const {
    fill(s, st.values, slots);
    s.call = make_call(s, st, name);
    return native::add_host(g, deps, s.call->params(), name);
  }
  void update(storage& s, lowering_state& st, const ref_slot* slots, cudaGraphNode_t node,
              native::param_target to, std::string_view name, param_hashes) const {
    fill(s, st.values, slots);
    std::shared_ptr<native::host_call> fresh = make_call(s, st, name);
    native::set_host(to, node, fresh->params(), name);
    if (st.retired) st.retired->add(std::move(s.call));
    s.call = std::move(fresh);
  }
  /// `accesses`: what with_access() declared (cudag/dsl/accesses.hpp).
  void write_spec(spec_writer& w, std::string_view name,
                  std::span<const access_declaration> accesses = {}) const {
    write_spec_at(w, name, accesses, std::index_sequence_for<S...>{});
  }
  template <std::size_t... I>
  void write_spec_at(spec_writer& w, std::string_view name,
                     std::span<const access_declaration> accesses, std::index_sequence<I...>) const {
    const std::array<value_view, sizeof...(S)> views{spec_view<arg_type<S>>(at_c<I>(args))...};
    w.host(name,
           std::make_shared<const host_function>(
               [f = function](std::span<const void* const> values) mutable {
                 call_with_values<arg_type<S>...>(f, values, std::index_sequence_for<S...>{});
               }),
           views, accesses);
  }
};

}  // namespace detail

template <fixed_string Name, class F, class... A>
[[nodiscard]] constexpr decltype(auto) host(F function, const A&... args) {
  if constexpr (!std::is_invocable_v<F&, const detail::arg_type<A>&...> && CUDAG_DSL_REFUSES_BY_COPY) {
    return detail::refusal_of<callable_does_not_accept_arguments<Name, F, detail::arg_type<A>...>>();
  } else if constexpr (!std::is_invocable_v<F&, const detail::arg_type<A>&...>) {
    static_assert(sizeof(callable_does_not_accept_arguments<Name, F, detail::arg_type<A>...>) > 0);
    using body = detail::host_body<detail::callable_after_error, A...>;
    return detail::node_t<Name, body>{body{{}, {}, detail::make_node_tuple(args...)}};
  } else {
    using body = detail::host_body<F, A...>;
    return detail::node_t<Name, body>{
        body{{}, std::move(function), detail::make_node_tuple(args...)}};
  }
}

namespace detail {

// ---------------------------------------------------------------- captured --
template <fixed_string What, class F, class... S>
struct captured_body : leaf_body {
  static constexpr node_kind kind = node_kind::captured;
  /// It may do anything with a pointer: read and written unless declared.
  static constexpr auto refs = refs_touching<S...>({(void(sizeof(S)), access_mode::read_write)...});

  F record;
  node_tuple<S...> args;

  static constexpr bool views_buffers = any_buffer_view<S...>;
  template <class V>
  constexpr void for_each_buffer_view(V&& f) const {
    for_each_argument_view(args, f, std::index_sequence_for<S...>{});
  }

  struct storage {
    node_tuple<arg_type<S>...> values;
    unique_graph latest;  ///< the recording the exec runs, kept for updates
  };
  static constexpr auto arg_ref = ref_positions<S...>();
  template <std::size_t... I>
  void fill_at(storage& s, const value_tables& values, const ref_slot* slots,
               std::index_sequence<I...>) const noexcept {
    (void)s, (void)values, (void)slots;  // no arguments: g++ warns them set but unused
    ((at_c<I>(s.values) = resolve<arg_type<S>>(at_c<I>(args), values, slots, arg_ref[I])), ...);
  }
  unique_graph record_now(storage& s, lowering_state& st, const ref_slot* slots,
                          std::string_view name) const {
    fill_at(s, st.values, slots, std::index_sequence_for<S...>{});
    return native::record_by_capture(st.stream_for_capture(), name, [&](cudaStream_t stream) {
      invoke_record(stream, s, std::index_sequence_for<S...>{});
    });
  }
  template <std::size_t... I>
  void invoke_record(cudaStream_t stream, const storage& s, std::index_sequence<I...>) const {
    if constexpr (std::is_invocable_v<const F&, cudaStream_t, const arg_type<S>&...>) {
      record(stream, at_c<I>(s.values)...);
    } else {
      F f = record;  // a mutable callable: call a copy
      f(stream, at_c<I>(s.values)...);
    }
  }

  cudaGraphNode_t lower(storage& s, lowering_state& st, const ref_slot* slots, cudaGraph_t g,
                        native::deps_span deps, std::string_view name) const {
    s.latest = record_now(s, st, slots, name);
    return native::add_child(g, deps, s.latest.get(), native::child_ownership::clone, name);
  }
  /// Recorded again; the exec's child node takes the new recording. Applied
  /// to the executable graph in both modes (a template child cannot be set).
  void update(storage& s, lowering_state& st, const ref_slot* slots, cudaGraphNode_t node,
              native::param_target, std::string_view name, param_hashes) const {
    unique_graph recorded = record_now(s, st, slots, name);
    native::set_child(native::param_target::on_exec(st.exec), node, recorded.get(), name);
    s.latest = std::move(recorded);
  }
  void reapply(storage& s, lowering_state& st, cudaGraphNode_t node, std::string_view name) const {
    native::set_child(native::param_target::on_exec(st.exec), node, s.latest.get(), name);
  }
  /// `accesses`: what with_access() declared (cudag/dsl/accesses.hpp).
  void write_spec(spec_writer& w, std::string_view name,
                  std::span<const access_declaration> accesses = {}) const {
    write_spec_at(w, name, accesses, std::index_sequence_for<S...>{});
  }
  template <std::size_t... I>
  void write_spec_at(spec_writer& w, std::string_view name,
                     std::span<const access_declaration> accesses, std::index_sequence<I...>) const {
    const std::array<value_view, sizeof...(S)> views{spec_view<arg_type<S>>(at_c<I>(args))...};
    w.captured(name,
               std::make_shared<const capture_function>(
                   [f = record](cudaStream_t stream, std::span<const void* const> values) mutable {
                     auto call = [&](const auto&... v) { f(stream, v...); };
                     call_with_values<arg_type<S>...>(call, values, std::index_sequence_for<S...>{});
                   }),
               views, What.view(), accesses);
  }
};

}  // namespace detail

template <fixed_string Name, fixed_string What = "", class F, class... A>
[[nodiscard]] constexpr decltype(auto) captured(F record, const A&... args) {
  if constexpr (!std::is_invocable_v<F&, cudaStream_t, const detail::arg_type<A>&...> &&
                CUDAG_DSL_REFUSES_BY_COPY) {
    return detail::refusal_of<
        callable_does_not_accept_arguments<Name, F, cudaStream_t, detail::arg_type<A>...>>();
  } else if constexpr (!std::is_invocable_v<F&, cudaStream_t, const detail::arg_type<A>&...>) {
    static_assert(
        sizeof(callable_does_not_accept_arguments<Name, F, cudaStream_t,
                                                  detail::arg_type<A>...>) > 0);
    using body = detail::captured_body<What, detail::callable_after_error, A...>;
    return detail::node_t<Name, body>{body{{}, {}, detail::make_node_tuple(args...)}};
  } else {
    using body = detail::captured_body<What, F, A...>;
    return detail::node_t<Name, body>{
        body{{}, std::move(record), detail::make_node_tuple(args...)}};
  }
}

}  // namespace cudag::dsl
