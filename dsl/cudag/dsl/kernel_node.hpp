#pragma once
// Kernel nodes: an nvcc kernel as a template argument, or a run-time
// kernel_ref<void(P...)> (NVRTC) whose signature is known at compile time.
// Every argument is checked against the kernel's parameter type when the
// node is declared; the error names the node and the position.
//
//   kernel<"scale", scale>(blocks_for(n, 256), 256, x, 2.0f, n)
//   kernel<"rtc_scale">(rtc_kernel, dim3(4), dim3(256), x, 2.0f, n)
#include <cuda_runtime_api.h>

#include <array>
#include <string_view>
#include <type_traits>
#include <utility>

#include "cudag/arguments.hpp"
#include "cudag/dsl/arguments.hpp"
#include "cudag/dsl/node_tuple.hpp"
#include "cudag/dsl/node.hpp"

namespace cudag::dsl {

/// The name of the function `Kernel` ("app::scale"), for messages and
/// pictures: read from the signature the compiler writes for this function
/// ("... [with auto Kernel = app::scale; ...]" from g++, also under nvcc).
/// Empty where the compiler writes it otherwise.
template <auto Kernel>
[[nodiscard]] std::string_view function_name_of() noexcept {
  constexpr std::string_view marker = "Kernel = ";
  const std::string_view signature = __PRETTY_FUNCTION__;
  const std::size_t at = signature.find(marker);
  if (at == std::string_view::npos) return {};
  std::string_view name = signature.substr(at + marker.size());
  name = name.substr(0, name.find_first_of(";]"));
  if (name.starts_with('&')) name.remove_prefix(1);
  return name;
}

/// An nvcc kernel fixed at compile time (its host stub address).
template <auto Kernel>
struct static_kernel {
  [[nodiscard]] const void* pointer() const noexcept {
    return reinterpret_cast<const void*>(Kernel);
  }
  [[nodiscard]] std::shared_ptr<const void> keep_alive() const noexcept { return nullptr; }
  [[nodiscard]] std::string_view name() const noexcept { return function_name_of<Kernel>(); }
};
/// A run-time kernel (cudaKernel_t from NVRTC, or a stub address).
template <class Signature>
struct dynamic_kernel {
  kernel_ref<Signature> ref;
  [[nodiscard]] const void* pointer() const noexcept { return ref.function; }
  [[nodiscard]] std::shared_ptr<const void> keep_alive() const noexcept { return ref.keep_alive; }
  [[nodiscard]] std::string_view name() const noexcept { return ref.name; }
};

template <class Grid>
[[nodiscard]] constexpr dim3 fixed_grid(const Grid& grid) noexcept {
  if constexpr (requires { grid.per_block; }) {
    return dim3(native::blocks_for(grid.count, grid.per_block));
  } else {
    return dim3(grid);
  }
}

template <class Function, class Grid, class Params, class Args>
struct kernel_body;

template <class Function, class Grid, class... P, class... S>
struct kernel_body<Function, Grid, type_list<P...>, node_tuple<S...>> : leaf_body {
  static constexpr node_kind kind = node_kind::kernel;
  static constexpr auto refs = refs_of<Grid, S...>();  // reading order
  static constexpr bool grid_from_param = !arg_traits<Grid>::is_literal;

  Function function;
  Grid grid;  ///< dim3, or blocks_for_t of a literal or a parameter
  dim3 block;
  unsigned shared_bytes;
  node_tuple<S...> args;

  struct storage {
    node_tuple<P...> values;
    void* pointers[sizeof...(P) == 0 ? 1 : sizeof...(P)];
    cudaKernelNodeParams params;
  };

  /// Argument I's reference is slots[arg_ref[I + 1]]; the grid's (if any) is slots[0].
  static constexpr auto arg_ref = ref_positions<Grid, S...>();

  void fill(storage& s, const value_tables& values, const ref_slot* slots) const noexcept {
    fill_at(s, values, slots, std::index_sequence_for<P...>{});
    dim3 g;
    if constexpr (grid_from_param) {
      const auto count = resolve<std::size_t>(grid.count, values, slots, 0);
      g = dim3(native::blocks_for(count, grid.per_block));
    } else {
      g = fixed_grid(grid);
    }
    s.params = cudaKernelNodeParams{const_cast<void*>(function.pointer()), g, block, shared_bytes,
                                    s.pointers, nullptr};
  }
  template <std::size_t... I>
  void fill_at(storage& s, const value_tables& values, const ref_slot* slots,
               std::index_sequence<I...>) const noexcept {
    (void)s, (void)values, (void)slots;  // no arguments: g++ warns them set but unused
    ((at_c<I>(s.values) = resolve<P>(at_c<I>(args), values, slots, arg_ref[I + 1]),
      s.pointers[I] = &at_c<I>(s.values)),
     ...);
  }

  cudaGraphNode_t lower(storage& s, lowering_state& st, const ref_slot* slots, cudaGraph_t g,
                        native::deps_span deps, std::string_view name) const {
    fill(s, st.values, slots);
    return native::add_kernel(g, deps, s.params, name);
  }
  void update(storage& s, lowering_state& st, const ref_slot* slots, cudaGraphNode_t node,
              native::param_target to, std::string_view name, param_hashes) const {
    fill(s, st.values, slots);
    native::set_kernel(to, node, s.params, name);
  }

  void write_spec(spec_writer& w, std::string_view name) const {
    write_spec_at(w, name, std::index_sequence_for<P...>{});
  }
  template <std::size_t... I>
  void write_spec_at(spec_writer& w, std::string_view name, std::index_sequence<I...>) const {
    const std::array<value_view, sizeof...(P)> views{spec_view<P>(at_c<I>(args))...};
    kernel_view k;
    k.function = function.pointer();
    k.function_name = function.name();
    k.keep_alive = function.keep_alive();
    k.block = block;
    k.shared_bytes = shared_bytes;
    if constexpr (grid_from_param) {
      k.grid_param = decltype(Grid::count)::name.view();
      k.items_per_block = grid.per_block;
    } else {
      k.grid = fixed_grid(grid);
    }
    k.args = views;
    w.kernel(name, k);
  }
};

template <class Grid>
[[nodiscard]] constexpr auto normalize_grid(const Grid& grid) {
  if constexpr (requires { grid.per_block; })
    return grid;
  else
    return dim3(grid);
}

/// Whether arguments A... fit parameters P... (count and each conversion).
/// Independent of the node's name, so shared by nodes of the same types.
template <class... P, class... A>
consteval bool kernel_arguments_fit(type_list<P...>, type_list<A...>) {
  if constexpr (sizeof...(P) != sizeof...(A))
    return false;
  else
    return (dsl_passes_as<P, A> && ...);
}

// Only instantiated for a call that does not fit: the incomplete type each
// report names is the error. The compiler drops the return statement naming
// it and the report returns true, so the static_assert adds no second error.

/// Names node, position and the kernel's parameter type as declared (so that
/// nvcc's front end prints `float`, not an alias computed from it).
template <fixed_string Node, std::size_t I, class P, class A>
consteval bool report_kernel_argument() {
  if constexpr (!dsl_passes_as<P, A>)
    return sizeof(kernel_argument_does_not_convert<Node, I, P, A>) > 0;
  return true;
}
template <fixed_string Node, std::size_t Expected, std::size_t Given>
consteval bool report_kernel_argument_count() {
  if constexpr (Expected != Given)
    return sizeof(kernel_argument_count_mismatch<Node, Expected, Given>) > 0;
  return true;
}

/// Names the node and the counts, or each argument that does not convert.
template <fixed_string Node, class... P, class... A>
consteval bool report_kernel_arguments(type_list<P...>, type_list<A...>) {
  if constexpr (sizeof...(P) != sizeof...(A)) {
    return report_kernel_argument_count<Node, sizeof...(P), sizeof...(A)>();
  } else {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return (report_kernel_argument<Node, I, P, A>() && ...);
    }(std::index_sequence_for<A...>{});
  }
}

/// What a kernel node whose arguments do not fit declares after its error: a
/// body of the same function, grid and references that passes no arguments.
/// The graph holding it then compiles on, so one mistake gives one error
/// (returning anything else cascaded, and crashed nvcc's front end).
template <class Function, class Grid, class... A>
[[nodiscard]] constexpr auto rejected_kernel_body(Function function, const Grid& grid, dim3 block,
                                                  unsigned shared_bytes, const A&... args) {
  using body = kernel_body<Function, decltype(normalize_grid(grid)), type_list<>, node_tuple<A...>>;
  return body{{}, function, normalize_grid(grid), block, shared_bytes,
              make_node_tuple(args...)};
}

template <class Function, class Grid, class Params, class... A>
struct kernel_body_for;
template <class Function, class Grid, class... P, class... A>
struct kernel_body_for<Function, Grid, type_list<P...>, A...> {
  using type = kernel_body<Function, Grid, type_list<P...>, node_tuple<stored_arg<P, A>...>>;
  static constexpr type make(Function function, const Grid& grid, dim3 block, unsigned shared_bytes,
                             const A&... args) {
    return type{{}, function, grid, block, shared_bytes, make_node_tuple(store_arg<P>(args)...)};
  }
};

/// The body of a kernel node whose arguments fit: named by types only, so
/// shared by every node of the same kernel and argument types.
template <class Params, class Function, class Grid, class... A>
[[nodiscard]] constexpr auto make_kernel_body(Function function, const Grid& grid, dim3 block,
                                              unsigned shared_bytes, const A&... args) {
  using grid_type = decltype(normalize_grid(grid));
  using factory = kernel_body_for<Function, grid_type, Params, A...>;
  return factory::make(function, normalize_grid(grid), block, shared_bytes, args...);
}

template <class F>
struct kernel_signature;
template <class... P>
struct kernel_signature<void (*)(P...)> {
  using params = type_list<P...>;
};

// Each node instantiates one function named by its name (kernel<Name, ...>);
// the argument check and the body depend on types only, and only a failing
// check names the node.

/// A node running nvcc kernel `Kernel` (a __global__ function).
template <fixed_string Name, auto Kernel, unsigned SharedBytes = 0, class Grid, class Block,
          class... A>
  requires std::is_pointer_v<decltype(Kernel)>
[[nodiscard]] constexpr auto kernel(const Grid& grid, const Block& block, const A&... args) {
  using params = typename kernel_signature<decltype(Kernel)>::params;
  if constexpr (!kernel_arguments_fit(params{}, type_list<A...>{})) {
    static_assert(report_kernel_arguments<Name>(params{}, type_list<A...>{}));
    auto body =
        rejected_kernel_body(static_kernel<Kernel>{}, grid, dim3(block), SharedBytes, args...);
    return node_t<Name, decltype(body)>{body};
  } else {
    if constexpr (any_literal_needs_range_check(params{}, type_list<A...>{}))
      check_literal_ranges<Name>(params{}, std::index_sequence_for<A...>{}, args...);
    auto body =
        make_kernel_body<params>(static_kernel<Kernel>{}, grid, dim3(block), SharedBytes, args...);
    return node_t<Name, decltype(body)>{body};
  }
}

/// A node running a run-time kernel (NVRTC) of a known signature.
template <fixed_string Name, unsigned SharedBytes = 0, class... P, class Grid, class Block,
          class... A>
[[nodiscard]] auto kernel(const kernel_ref<void(P...)>& k, const Grid& grid, const Block& block,
                          const A&... args) {
  using params = type_list<P...>;
  if constexpr (!kernel_arguments_fit(params{}, type_list<A...>{})) {
    static_assert(report_kernel_arguments<Name>(params{}, type_list<A...>{}));
    auto body = rejected_kernel_body(dynamic_kernel<void(P...)>{k}, grid, dim3(block), SharedBytes,
                                     args...);
    return node_t<Name, decltype(body)>{body};
  } else {
    if constexpr (any_literal_needs_range_check(params{}, type_list<A...>{}))
      check_literal_ranges<Name>(params{}, std::index_sequence_for<A...>{}, args...);
    auto body = make_kernel_body<params>(dynamic_kernel<void(P...)>{k}, grid, dim3(block),
                                         SharedBytes, args...);
    return node_t<Name, decltype(body)>{body};
  }
}

}  // namespace cudag::dsl
