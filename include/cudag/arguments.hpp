#pragma once
// Typed argument placeholders and the compile-time rule that decides whether
// an argument may be passed where a kernel (or host callable) expects a given
// parameter type. Shared by the run-time builder, the DSL and rtc kernels.
//
// The rule: a literal must brace-initialise the parameter (no narrowing, so
// a double for a float is refused); a named parameter or buffer must have the
// parameter's exact type, or be a T* where const T* or void* is expected
// (the bytes are then identical, so a later rebind stays valid).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "cudag/lean_std.hpp"
#include "cudag/spec.hpp"

namespace cudag {

/// A named, typed graph parameter: bound at instantiation, rebindable after.
template <class T>
struct param_handle {
  using value_type = T;
  std::string name;
};

namespace detail {
/// Throws cudag::error naming `buffer`: a view `offset` (+ `added`) elements
/// of `element_bytes` on is past any address. Out of line: no <stdexcept> here.
[[noreturn]] void refuse_buffer_offset(std::string_view buffer, std::size_t offset,
                                       std::size_t added, std::size_t element_bytes);

/// Throws cudag::error naming `buffer`: a view `offset` elements of
/// `element_bytes` on is past the end of its `allocation_bytes`.
[[noreturn]] void refuse_view_past_end(std::string_view buffer, std::size_t offset,
                                       std::size_t element_bytes, std::size_t allocation_bytes);

/// Throws cudag::error naming mem_alloc node `node` (of graph `graph`, when
/// given): `count` elements of `element_bytes` overflow std::size_t.
[[noreturn]] void refuse_allocation_size(std::string_view graph, std::string_view node,
                                         std::size_t count, std::size_t element_bytes);

/// Whether `elements` of `element_bytes` are more bytes than std::size_t holds.
constexpr bool bytes_overflow(std::size_t elements, std::size_t element_bytes) noexcept {
  return elements > ~std::size_t{0} / element_bytes;
}
}  // namespace detail

/// Device memory that a mem-alloc node produces, seen as T elements from
/// `offset` elements on. `buffer + k` moves the view; a view whose byte
/// offset overflows is refused, rather than wrapping to a valid-looking one.
template <class T>
struct buffer_handle {
  using element_type = T;
  std::string name;
  std::size_t offset = 0;

  [[nodiscard]] buffer_handle operator+(std::size_t elements) const {
    if (elements > ~std::size_t{0} - offset || detail::bytes_overflow(offset + elements, sizeof(T)))
      detail::refuse_buffer_offset(name, offset, elements, sizeof(T));
    return {name, offset + elements};
  }
};

/// A named conditional handle (cudaGraphConditionalHandle) of the graph.
struct condition_handle {
  std::string name;
};

namespace detail {
template <class A>
struct argument_traits {  // a literal value
  using type = std::remove_cvref_t<A>;
  static constexpr bool is_literal = true;
};
template <class T>
struct argument_traits<param_handle<T>> {
  using type = T;
  static constexpr bool is_literal = false;
};
template <class T>
struct argument_traits<buffer_handle<T>> {
  using type = T*;
  static constexpr bool is_literal = false;
};
template <>
struct argument_traits<condition_handle> {
  using type = cudaGraphConditionalHandle;
  static constexpr bool is_literal = false;
};

template <class P>
void brace_init_from(P&&);
}  // namespace detail

/// The C++ type an argument carries (T for param_handle<T>, T* for a buffer).
template <class A>
using argument_type = typename detail::argument_traits<std::remove_cvref_t<A>>::type;

template <class A>
inline constexpr bool is_literal_argument = detail::argument_traits<std::remove_cvref_t<A>>::is_literal;

/// Same bytes, acceptable type: identical, or pointer qualification/void*.
template <class From, class To>
inline constexpr bool same_representation =
    std::is_same_v<std::remove_cv_t<From>, std::remove_cv_t<To>> ||
    (std::is_pointer_v<From> && std::is_pointer_v<To> && std::is_convertible_v<From, To>);

/// Whether argument A may be passed for a parameter of type P.
template <class P, class A>
concept passes_as =
    (is_literal_argument<A> && requires(A&& a) { std::remove_cvref_t<P>{std::forward<A>(a)}; }) ||
    (!is_literal_argument<A> && same_representation<argument_type<A>, std::remove_cvref_t<P>>);

template <class... T>
struct type_list {};

/// The position of the first argument of A... that cannot be passed for its
/// parameter of P... (as many as A...), or sizeof...(A) when all can. Never
/// fails itself: its verdict picks the error type the builder reports.
template <class... P, class... A>
consteval std::size_t first_mismatched_argument(type_list<P...>, type_list<A...>) {
  constexpr bool passes[] = {passes_as<P, A>..., true};  // never empty
  for (std::size_t i = 0; i < sizeof...(A); ++i)
    if (!passes[i]) return i;
  return sizeof...(A);
}

/// Where the value of argument `a`, passed where P is expected, comes from:
/// a literal of P's bytes, or the parameter, buffer or condition it names.
template <class P, class A>
[[nodiscard]] auto source_of(A&& a) {
  using Param = std::remove_cvref_t<P>;
  using Arg = std::remove_cvref_t<A>;
  if constexpr (is_literal_argument<Arg>) {
    const Param converted{std::forward<A>(a)};
    return literal{literal_bytes(&converted, sizeof(Param))};
  } else if constexpr (std::is_same_v<Arg, condition_handle>) {
    return condition_ref{a.name};
  } else if constexpr (requires { typename Arg::element_type; }) {
    constexpr std::size_t element_bytes = sizeof(typename Arg::element_type);
    // A handle made as {name, offset} has not passed operator+'s check.
    if (detail::bytes_overflow(a.offset, element_bytes))
      detail::refuse_buffer_offset(a.name, a.offset, 0, element_bytes);
    return buffer_ref{a.name, a.offset * element_bytes};
  } else {
    return param_ref{a.name};
  }
}

/// The spec value for argument `a` passed where P is expected.
template <class P, class A>
[[nodiscard]] value to_value(A&& a) {
  return value{type_of<std::remove_cvref_t<P>>(), source_of<P>(std::forward<A>(a))};
}

/// The same value appended to `values`, built in its place (a kernel
/// node's arguments, as the builder adds them).
template <class P, class Values, class A>
void append_value(Values& values, A&& a) {
  values.emplace_back(type_of<std::remove_cvref_t<P>>(), source_of<P>(std::forward<A>(a)));
}

/// A kernel usable as a node: its function handle (host stub or
/// cudaKernel_t), name, and whatever must outlive graphs that use it.
template <class Signature>
struct kernel_ref;
template <class... P>
struct kernel_ref<void(P...)> {
  using signature = void(P...);
  const void* function = nullptr;
  std::string name;
  std::shared_ptr<const void> keep_alive;
  /// The kernel calls cudaGridDependencySynchronize() before it reads what
  /// its predecessors wrote (see synchronizes_grid_dependencies()).
  bool synchronizes_grid_dependencies = false;
};

/// Marks kernel `k` as one that calls cudaGridDependencySynchronize() before
/// it reads what its predecessors wrote, so that a programmatic or
/// launch-completion edge may lead into its nodes:
///   b.kernel("consume", cudag::synchronizes_grid_dependencies(CUDAG_KERNEL(consume)), ...);
/// The kind of `k` is kept (a named kernel stays named).
template <class K>
  requires requires(K k) { k.synchronizes_grid_dependencies = true; }
[[nodiscard]] K synchronizes_grid_dependencies(K k) {
  k.synchronizes_grid_dependencies = true;
  return k;
}

}  // namespace cudag
