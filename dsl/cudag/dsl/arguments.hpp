#pragma once
// Arguments of DSL nodes: a literal (stored already converted to the type its
// consumer expects), a parameter, a buffer view or a condition. The rule of
// cudag::passes_as applies: literals must brace-initialise the parameter
// without narrowing; named values must have the same representation.
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "cudag/arguments.hpp"
#include "cudag/buffer_bounds.hpp"
#include "cudag/error.hpp"
#include "cudag/spec_writer.hpp"
#include "cudag/dsl/declarations.hpp"
#include "cudag/dsl/items.hpp"
#include "cudag/dsl/node_tuple.hpp"

namespace cudag::dsl {

/// Argument `Position` (from 0) of kernel node `Node` cannot be passed where
/// the kernel takes `Parameter` (a refusal under g++, CUDAG_DSL_REFUSAL;
/// elsewhere never defined).
template <fixed_string Node, std::size_t Position, class Parameter, class Argument>
struct kernel_argument_does_not_convert CUDAG_DSL_REFUSAL(kernel_argument_does_not_convert);
/// Kernel node `Node` takes `Expected` arguments, got `Given`.
template <fixed_string Node, std::size_t Expected, std::size_t Given>
struct kernel_argument_count_mismatch CUDAG_DSL_REFUSAL(kernel_argument_count_mismatch);
/// Operand `What` of node `Node` has the wrong type (a refusal under g++,
/// CUDAG_DSL_REFUSAL; elsewhere never defined).
template <fixed_string Node, fixed_string What, class Expected, class Argument>
struct node_operand_has_wrong_type CUDAG_DSL_REFUSAL(node_operand_has_wrong_type);

namespace detail {

template <class A>
struct arg_traits {  // a literal
  using type = A;
  static constexpr bool is_literal = true;
  static constexpr std::size_t ref_count = 0;
  static constexpr ref_info ref{};
};
template <named_param A>
struct arg_traits<A> {
  using type = typename A::value_type;
  static constexpr bool is_literal = false;
  static constexpr std::size_t ref_count = 1;
  static constexpr ref_info ref{ref_kind::param,     name_hash(A::name.view()), A::name.view(),
                                type_id_of<type>,    sizeof(type),              alignof(type),
                                0,                   true,                      &type_of<type>};
};
template <named_buffer A>
struct arg_traits<A> {
  using type = typename A::element_type*;
  static constexpr bool is_literal = false;
  static constexpr std::size_t ref_count = 1;
  static constexpr ref_info ref{ref_kind::buffer, name_hash(A::name.view()), A::name.view(),
                                type_id_of<typename A::element_type>};
};
template <named_condition A>
struct arg_traits<A> {
  using type = cudaGraphConditionalHandle;
  static constexpr bool is_literal = false;
  static constexpr std::size_t ref_count = 1;
  static constexpr ref_info ref{ref_kind::condition, name_hash(A::name.view()), A::name.view(),
                                nullptr, 0, 1, A::default_value, A::assign_default};
};
template <class Count>
struct arg_traits<blocks_for_t<Count>> : arg_traits<Count> {};

template <class A>
using arg_type = typename arg_traits<std::remove_cvref_t<A>>::type;

/// Whether an integral literal of type A is passed to an integral parameter P
/// that does not hold every value of A (an int for a std::size_t): accepted,
/// its value checked where the node is made (range_checked_literal).
template <class P, class A>
inline constexpr bool integral_literal_needs_range_check =
    std::is_integral_v<std::remove_cvref_t<P>> && std::is_integral_v<A> &&
    !std::is_same_v<std::remove_cvref_t<P>, bool> && !std::is_same_v<A, bool> &&
    arg_traits<A>::is_literal && !requires(const A& a) { std::remove_cvref_t<P>{a}; };

/// Whether argument A may be passed where P is expected: a literal that
/// brace-initialises P (no narrowing) or an integral literal for an
/// integral parameter (its value must fit, see above); a named value of P's
/// representation.
template <class P, class A>
concept dsl_passes_as =
    (arg_traits<A>::is_literal && requires(const A& a) { std::remove_cvref_t<P>{a}; }) ||
    integral_literal_needs_range_check<P, A> ||
    (!arg_traits<A>::is_literal && same_representation<arg_type<A>, std::remove_cvref_t<P>>);

/// How an argument is kept in a node: literals as the consumer's type.
template <class P, class A>
using stored_arg = std::conditional_t<arg_traits<A>::is_literal, std::remove_cvref_t<P>, A>;

template <class P, class A>
[[nodiscard]] constexpr stored_arg<P, A> store_arg(const A& a) {
  if constexpr (integral_literal_needs_range_check<P, A>)
    return static_cast<std::remove_cvref_t<P>>(a);  // range checked by the node
  else if constexpr (arg_traits<A>::is_literal)
    return std::remove_cvref_t<P>{a};
  else
    return a;
}

}  // namespace detail

/// Argument `Position` (from 0) of kernel node `Node`, an integral literal,
/// does not fit the kernel's parameter type. Not constexpr: in a constant
/// declaration, calling it is the compile error (its name and template
/// arguments name the node, the position and the types); at run time it
/// throws cudag::error naming them.
template <fixed_string Node, std::size_t Position, class Parameter, class Argument>
[[noreturn]] void kernel_argument_out_of_range(Argument value) {
  throw cudag::error("kernel node '" + std::string(Node.view()) + "': argument " +
                         std::to_string(Position) + " (" + std::to_string(value) +
                         ") does not fit the kernel's parameter type",
                     cudaSuccess, {}, std::string(Node.view()));
}

namespace detail {

/// Checks the integral literals among args... that need it (see above).
template <fixed_string Node, class... P, class... A, std::size_t... I>
constexpr void check_literal_ranges(type_list<P...>, std::index_sequence<I...>, const A&... args) {
  (
      [&] {
        if constexpr (integral_literal_needs_range_check<P, A>)
          if (!std::in_range<std::remove_cvref_t<P>>(args))
            kernel_argument_out_of_range<Node, I, std::remove_cvref_t<P>>(args);
      }(),
      ...);
}
template <class... P, class... A>
[[nodiscard]] consteval bool any_literal_needs_range_check(type_list<P...>, type_list<A...>) {
  if constexpr (sizeof...(P) != sizeof...(A))
    return false;
  else
    return (integral_literal_needs_range_check<P, A> || ...);
}

/// The references of arguments A... as one array.
template <class... A>
[[nodiscard]] consteval auto refs_of() {
  std::array<ref_info, (arg_traits<A>::ref_count + ... + 0)> out{};
  std::size_t k = 0;
  ((arg_traits<A>::ref_count ? (void)(out[k++] = arg_traits<A>::ref) : (void)0), ...);
  return out;
}

/// Whether argument A, passed where P is expected, points at memory the
/// race rule follows: a buffer view, or a parameter of pointer type
/// (literal addresses are values: check() follows those).
template <class P, class A>
inline constexpr bool points_at_named_memory =
    named_buffer<A> || (named_param<A> && std::is_pointer_v<std::remove_cvref_t<P>>);

/// The reference of argument A passed where P is expected, touching memory
/// in `mode` where it points at some.
template <class P, class A>
[[nodiscard]] consteval ref_info argument_ref(access_mode mode) {
  if constexpr (points_at_named_memory<P, A>)
    return touching(arg_traits<A>::ref, mode);
  else
    return arg_traits<A>::ref;
}

/// A `const T*` parameter is read, a `T*` parameter read and written.
template <class P>
inline constexpr access_mode access_by_type =
    std::is_pointer_v<std::remove_cvref_t<P>> &&
            std::is_const_v<std::remove_pointer_t<std::remove_cvref_t<P>>>
        ? access_mode::read
        : access_mode::read_write;

/// The references of a kernel's arguments A... passed to parameters P...,
/// each pointer touching memory as its parameter's type says.
template <class... P, class... A>
[[nodiscard]] consteval auto kernel_argument_refs(type_list<P...>, type_list<A...>) {
  if constexpr (sizeof...(P) != sizeof...(A)) {
    return refs_of<A...>();  // a refused call: its error is reported elsewhere
  } else {
    std::array<ref_info, (arg_traits<A>::ref_count + ... + 0)> out{};
    std::size_t k = 0;
    ((arg_traits<A>::ref_count ? (void)(out[k++] = argument_ref<P, A>(access_by_type<P>))
                               : (void)0),
     ...);
    return out;
  }
}

/// The references of arguments A..., each pointer touching memory in the
/// mode given beside it (a host node's: read and written; a memcpy's
/// destination written, its source read).
template <class... A>
[[nodiscard]] consteval auto refs_touching(std::array<access_mode, sizeof...(A)> modes) {
  std::array<ref_info, (arg_traits<A>::ref_count + ... + 0)> out{};
  std::size_t k = 0, i = 0;
  // Argument i: its reference, if it has one; then the next argument.
  (((arg_traits<A>::ref_count ? (void)(out[k++] = argument_ref<arg_type<A>, A>(modes[i])) : (void)0),
    ++i),
   ...);
  (void)modes, (void)i;
  return out;
}

/// Checks an operand of a non-kernel node (memcpy dst, event, ...).
template <fixed_string Node, fixed_string What, class P, class A>
consteval bool check_operand() {
  if constexpr (!dsl_passes_as<P, A>)
    return sizeof(node_operand_has_wrong_type<Node, What, P, A>) > 0;
  return true;
}

/// Whether any stored argument S... is a buffer view.
template <class... S>
inline constexpr bool any_buffer_view = (named_buffer<S> || ...);

/// f(buffer name, byte offset, 0, view_access::address) for each buffer view
/// among a node's stored arguments: only its address is known to be used.
template <class... S, class F, std::size_t... I>
constexpr void for_each_argument_view(const node_tuple<S...>& args, F& f,
                                      std::index_sequence<I...>) {
  (void)args, (void)f;  // no buffer among the arguments
  (
      [&] {
        if constexpr (named_buffer<S>)
          f(S::name.view(), at_c<I>(args).offset * sizeof(typename S::element_type),
            std::size_t{0}, view_access::address);
      }(),
      ...);
}

// ------------------------------------------------------------ resolution --
/// Where named values live while a graph is lowered or rebound: the bytes of
/// every bound parameter, the pointers of allocated buffers, the handles of
/// conditions, laid out by the top-level graph's tables.
struct value_tables {
  const std::byte* params = nullptr;
  void* const* buffers = nullptr;
  const cudaGraphConditionalHandle* conditions = nullptr;
};

/// Where each of a node's references lives in the tables: the byte offset of
/// a parameter, the slot of a buffer or condition. The graph-level walk
/// computes these at compile time and hands each node its list, so that the
/// node kinds' code does not depend on the graph's type (whose name spells
/// the whole declaration).
using ref_slot = std::uint32_t;

/// The position of each argument among A...'s references (literals have none).
template <class... A>
[[nodiscard]] consteval std::array<std::size_t, sizeof...(A) + 1> ref_positions() {
  std::array<std::size_t, sizeof...(A) + 1> out{};
  std::size_t k = 0, i = 0;
  ((out[i++] = k, k += arg_traits<A>::ref_count), ...);
  out[i] = k;
  return out;
}

template <class T>
[[nodiscard]] inline T read_param(const value_tables& tables, std::size_t offset) noexcept {
  T v;
  std::memcpy(static_cast<void*>(&v), tables.params + offset, sizeof(T));
  return v;
}

/// The value of stored argument `a` as the consumer's type P; its reference
/// (if it is not a literal) lives at slots[k].
template <class P, class A>
[[nodiscard]] inline P resolve(const A& a, const value_tables& tables, const ref_slot* slots,
                               std::size_t k) noexcept {
  if constexpr (arg_traits<A>::is_literal) {
    (void)slots, (void)k;
    return a;
  } else if constexpr (arg_traits<A>::ref.kind == ref_kind::param) {
    return static_cast<P>(read_param<typename arg_traits<A>::type>(tables, slots[k]));
  } else if constexpr (arg_traits<A>::ref.kind == ref_kind::buffer) {
    return static_cast<P>(static_cast<typename A::element_type*>(tables.buffers[slots[k]]) + a.offset);
  } else {
    return tables.conditions[slots[k]];
  }
}

/// The spec view of a stored argument passed where P is expected (a
/// literal's bytes are borrowed from the declaration, stored as P).
template <class P, class A>
[[nodiscard]] value_view spec_view(const A& a) noexcept {
  using Param = std::remove_cvref_t<P>;
  using source = value_view::source_kind;
  if constexpr (arg_traits<A>::is_literal) {
    if constexpr (std::is_same_v<A, Param>)
      return value_view::literal_at(type_of<Param>(), &a);
    else
      return value_view::literal_copy(Param{a});
  } else if constexpr (arg_traits<A>::ref.kind == ref_kind::param) {
    return value_view::named(type_of<Param>(), source::param, A::name.view());
  } else if constexpr (arg_traits<A>::ref.kind == ref_kind::buffer) {
    return value_view::named(type_of<Param>(), source::buffer, A::name.view(),
                             a.offset * sizeof(typename A::element_type));
  } else {
    return value_view::named(type_of<Param>(), source::condition, A::name.view());
  }
}

}  // namespace detail
}  // namespace cudag::dsl
