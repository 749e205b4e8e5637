#pragma once
// Named things a graph's nodes refer to: typed parameters (bound at
// instantiation, rebindable after), buffers (device memory a mem-alloc node
// produces) and conditions (the handles conditional nodes test).
//
//   constexpr auto x = param<"x", float*>;
//   constexpr auto tmp = buffer<"tmp", float>;
//   constexpr auto more = condition<"more", 1>;   // default value 1
//   instantiate(g, x = d_x);                      // a typed binding
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "cudag/dsl/fixed_string.hpp"

// A node's own mistakes (kernel arguments, ...) under g++: the factory
// returns the mistake's type as a refusal (detail::refused_graph), whose
// copy into the user's variable is the one error, on the user's line and the
// output's first (a mistake reported inside the factory comes after g++'s
// "In instantiation of" context, lines 3 to 9). Its copy constructor is
// non-constexpr and never defined (g++ reports a deleted one twice in a
// constexpr variable's initialisation); outside a constant expression its
// error attribute refuses the copy where code is generated (`const auto n =
// <refused>` in a function). clang and nvcc print an error before
// its context, and name a node so refused in no text or cascade where a
// variable of it is used (nvcc): there the type stays incomplete and the
// factory names it (kernel_node.hpp), as g++ does for a run-time kernel.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define CUDAG_DSL_REFUSES_BY_COPY 1
#define CUDAG_DSL_REFUSAL(type)                                                        \
  : ::cudag::dsl::detail::refused_graph {                                              \
    constexpr type() noexcept = default;                                               \
    [[gnu::error("cudag: a DSL node or graph refused where it was declared is kept "   \
                 "here; the type names the mistake (declare it constexpr to see it "   \
                 "there)")]] type(const type&) noexcept;                               \
  }
#else
#define CUDAG_DSL_REFUSES_BY_COPY 0
#define CUDAG_DSL_REFUSAL(type)
#endif

// The destructor of the error types that checked calls return in place of
// their result (instantiate(), rebind(), ...: see or_error in graph.hpp): the
// statement that uses such a result fails on the user's own line. Deleted,
// and private under nvcc: for `auto e = call()` nvcc's front end reports a
// deleted destructor twice (once more "required for copy that was
// eliminated") and a private one once; g++ a private one twice (the
// temporary's and the variable's) and a deleted one once.
#if defined(__CUDACC__)
#define CUDAG_DSL_ERROR_DESTRUCTOR(type) \
 private:                                 \
  ~type() = default
#else
#define CUDAG_DSL_ERROR_DESTRUCTOR(type) ~type() = delete
#endif

namespace cudag::detail {
/// The builder's refusal of the same mistake (declared in cudag/arguments.hpp
/// too): this header pulls in no <string>.
[[noreturn]] void refuse_buffer_offset(std::string_view buffer, std::size_t offset,
                                       std::size_t added, std::size_t element_bytes);
}  // namespace cudag::detail

namespace cudag::dsl {

/// The compile error of a binding whose value does not convert to the
/// parameter's declared type without narrowing: what instantiate(), lower()
/// and rebind() return for it (see or_error in graph.hpp).
template <fixed_string Parameter, class Declared, class Given>
struct parameter_bound_with_wrong_type {
  CUDAG_DSL_ERROR_DESTRUCTOR(parameter_bound_with_wrong_type);
};

namespace detail {

/// The base of the types of declarations refused where they are written: a
/// graph's shape problems (cycle_through<...>, race<...>: graph.hpp) and a
/// node's own mistakes (kernel_argument_does_not_convert<...>, ...). A
/// factory or graph() returns the refusal as an rvalue (refusal_of), whose
/// copy into the user's variable is the one error, on the user's line; a
/// variable so refused is then accepted quietly by every use.
struct refused_graph {};
template <class G>
concept refused_graph_type = std::is_base_of_v<refused_graph, G>;
/// The index of the first refused item of Items (sizeof...(Items) where none
/// is). Not a fold: clang limits a fold to 256 items, and a graph() call
/// passes one an item (a 512-node graph passes over 1,000).
template <class... Items>
consteval std::size_t first_refused_item() {
  constexpr bool refused[] = {refused_graph_type<std::remove_cvref_t<Items>>..., true};
  std::size_t i = 0;
  while (!refused[i]) ++i;
  return i;
}
template <class... Items>
inline constexpr bool has_refused_item = first_refused_item<Items...>() < sizeof...(Items);

template <class Refusal>
inline constexpr Refusal refusal_object{};
/// The refusal as an rvalue: copied where the user keeps it, and so refused.
template <class Refusal>
[[nodiscard]] constexpr const Refusal&& refusal_of() noexcept {
  return static_cast<const Refusal&&>(refusal_object<Refusal>);
}

/// What graph() gives for an item that is a variable whose declaration was
/// refused: that error is reported, and this one copies without another.
struct refused_by_an_item : refused_graph {};

/// What a function taking a node (with_access(), with_priority(), ...)
/// gives for a refused one: the refusal itself, written in the call (an
/// rvalue: reported where the result is copied), or, for a variable
/// already reported, refused_by_an_item.
template <class Refused>
[[nodiscard]] constexpr decltype(auto) passed_refusal() {
  if constexpr (std::is_reference_v<Refused>)
    return refused_by_an_item{};
  else
    return refusal_of<std::remove_cvref_t<Refused>>();
}

/// What `x = value` gives for a value that does not bind to x: checked calls
/// that take it return parameter_bound_with_wrong_type<Name, T, Given>. (Not
/// an error at the binding: nvcc gives a failed call an error type, and the
/// call that takes the binding a second error, "no instance of function
/// template matches".)
template <fixed_string Name, class T, class Given>
struct mismatched_value {
  static constexpr auto name = Name;
  using value_type = T;
  using given_type = Given;
  T value{};
};

/// Whether a value of type V may be bound to a parameter declared as T:
/// brace-initialisation without narrowing (T* binds const T* and void*).
template <class T, class V>
concept binds_as = std::is_trivially_copyable_v<T> && requires(const V& v) { T{v}; };

template <fixed_string Name, class T>
struct bound_value;

// What a named thing is, as a member tag: partial specialisations and
// overloads match on these instead of deducing a fixed_string template
// argument (which nvcc's front end does not always do).
struct param_tag {};
struct buffer_tag {};
struct condition_tag {};
template <class A>
concept named_param = std::is_same_v<typename A::dsl_tag, param_tag>;
template <class A>
concept named_buffer = std::is_same_v<typename A::dsl_tag, buffer_tag>;
template <class A>
concept named_condition = std::is_same_v<typename A::dsl_tag, condition_tag>;

}  // namespace detail

template <fixed_string Name, class T>
struct param_t {
  static_assert(std::is_trivially_copyable_v<T>,
                "cudag: a graph parameter's type must be trivially copyable");
  using dsl_tag = detail::param_tag;
  using value_type = T;
  static constexpr auto name = Name;

  /// `x = value`: a binding for instantiate() or rebind(); a mismatched_value
  /// when the value does not bind.
  template <class V>
  constexpr auto operator=(const V& v) const {
    if constexpr (!detail::binds_as<T, V>) {
      (void)v;
      return detail::mismatched_value<Name, T, V>{};
    } else {
      return detail::bound_value<Name, T>{T{v}};
    }
  }
};
template <fixed_string Name, class T>
inline constexpr param_t<Name, T> param{};

namespace detail {
/// The value of parameter Name, converted to its declared type T.
template <fixed_string Name, class T>
struct bound_value {
  static constexpr auto name = Name;
  using value_type = T;
  T value;
};
}  // namespace detail

/// A view of buffer Name moved `added` elements past `offset` would be a
/// byte offset past what std::size_t holds. Not constexpr: in a constant
/// declaration (`tmp + k` in a graph), calling it is the compile error, its
/// template arguments naming the buffer; at run time it throws cudag::error
/// naming it.
template <fixed_string Name, class T>
[[noreturn]] void buffer_view_offset_overflows(std::size_t offset, std::size_t added) {
  cudag::detail::refuse_buffer_offset(Name.view(), offset, added, sizeof(T));
}

/// A view of buffer Name's elements from `offset` on: `tmp + 16`. A view
/// whose byte offset would wrap is refused rather than made to point at a
/// valid-looking address.
template <fixed_string Name, class T>
struct buffer_t {
  using dsl_tag = detail::buffer_tag;
  using element_type = T;
  static constexpr auto name = Name;
  std::size_t offset = 0;

  constexpr buffer_t() = default;
  /// The view `elements` in (also what `decltype(tmp){k}` makes).
  constexpr buffer_t(std::size_t elements) : offset(elements) {
    if (elements > most) buffer_view_offset_overflows<Name, T>(0, elements);
  }

  [[nodiscard]] constexpr buffer_t operator+(std::size_t elements) const {
    if (elements > most || offset > most - elements)
      buffer_view_offset_overflows<Name, T>(offset, elements);
    return buffer_t(offset + elements);
  }

 private:
  static constexpr std::size_t most = ~std::size_t{0} / sizeof(T);  // elements a byte offset can reach
};
template <fixed_string Name, class T>
inline constexpr buffer_t<Name, T> buffer{};

/// A conditional handle; reset to DefaultValue at every launch when
/// AssignDefault (cudaGraphCondAssignDefault).
template <fixed_string Name, unsigned DefaultValue = 0, bool AssignDefault = true>
struct condition_t {
  using dsl_tag = detail::condition_tag;
  static constexpr auto name = Name;
  static constexpr unsigned default_value = DefaultValue;
  static constexpr bool assign_default = AssignDefault;
};
template <fixed_string Name, unsigned DefaultValue = 0, bool AssignDefault = true>
inline constexpr condition_t<Name, DefaultValue, AssignDefault> condition{};

namespace detail {
/// ceil(count / per_block) blocks in x (blocks_for).
template <class Count>
struct blocks_for_t {
  Count count;
  unsigned per_block;
};
/// ceil(count * multiplier / divisor) (scaled).
template <class Count>
struct scaled_t {
  Count count;
  std::uint64_t multiplier;
  std::uint64_t divisor;
};
}  // namespace detail

/// ceil(count / per_block) blocks in x; with a parameter `count`, rebinding
/// it resizes the launch.
template <class Count>
  requires std::is_integral_v<Count>
[[nodiscard]] constexpr detail::blocks_for_t<Count> blocks_for(Count count, unsigned per_block) {
  return {count, per_block};
}
template <detail::named_param P>
  requires std::is_integral_v<typename P::value_type>
[[nodiscard]] constexpr detail::blocks_for_t<P> blocks_for(P count, unsigned per_block) {
  return {count, per_block};
}

/// ceil(count * multiplier / divisor), as a launch dimension: with a
/// parameter `count`, a shape rule (recomputed whenever `count` is rebound);
/// with a literal, folded where the node is declared. blocks_for(n, b) is
/// scaled(n, 1, b).
template <class Count>
  requires std::is_integral_v<Count>
[[nodiscard]] constexpr detail::scaled_t<Count> scaled(Count count, std::uint64_t multiplier,
                                                       std::uint64_t divisor = 1) {
  return {count, multiplier, divisor};
}
template <detail::named_param P>
  requires std::is_integral_v<typename P::value_type>
[[nodiscard]] constexpr detail::scaled_t<P> scaled(P count, std::uint64_t multiplier,
                                                   std::uint64_t divisor = 1) {
  return {count, multiplier, divisor};
}

namespace detail {
/// What a launch dimension of dims() or shared_bytes() may be: an integral
/// literal, an integral parameter (the dimension follows it), scaled(...) or
/// blocks_for(...) of either.
template <class E>
inline constexpr bool is_count_rule = false;
template <class Count>
inline constexpr bool is_count_rule<scaled_t<Count>> = true;
template <class Count>
inline constexpr bool is_count_rule<blocks_for_t<Count>> = true;
template <class E>
concept launch_entry = (std::is_integral_v<E> && !std::is_same_v<E, bool>) ||
                       (named_param<E> && std::is_integral_v<typename E::value_type>) ||
                       is_count_rule<E>;

/// A dimension dims() leaves out: 1.
struct unit_extent {};

/// A grid or block whose dimensions may follow parameters:
/// `dims(blocks_for(seq, 128), batch)` is grid.x = ceil(seq / 128), grid.y =
/// batch, grid.z = 1.
template <class X, class Y, class Z>
struct dims_t {
  X x;
  Y y;
  Z z;
};

/// A kernel's dynamic shared memory in bytes (shared_bytes).
template <class Bytes>
struct shared_bytes_t {
  Bytes bytes;
};
}  // namespace detail

template <detail::launch_entry X>
[[nodiscard]] constexpr detail::dims_t<X, detail::unit_extent, detail::unit_extent> dims(X x) {
  return {x, {}, {}};
}
template <detail::launch_entry X, detail::launch_entry Y>
[[nodiscard]] constexpr detail::dims_t<X, Y, detail::unit_extent> dims(X x, Y y) {
  return {x, y, {}};
}
template <detail::launch_entry X, detail::launch_entry Y, detail::launch_entry Z>
[[nodiscard]] constexpr detail::dims_t<X, Y, Z> dims(X x, Y y, Z z) {
  return {x, y, z};
}

/// A kernel's dynamic shared memory in bytes, passed after the block:
/// `kernel<"k", k>(grid, block, shared_bytes(scaled(seq, 4)), args...)`.
template <detail::launch_entry Bytes>
[[nodiscard]] constexpr detail::shared_bytes_t<Bytes> shared_bytes(Bytes bytes) {
  return {bytes};
}

}  // namespace cudag::dsl
