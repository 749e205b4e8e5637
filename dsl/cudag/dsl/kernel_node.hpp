#pragma once
// Kernel nodes: an nvcc kernel as a template argument, or a run-time
// kernel_ref<void(P...)> (NVRTC) whose signature is known at compile time.
// Every argument is checked against the kernel's parameter type when the
// node is declared; the error names the node and the position.
//
//   kernel<"scale", scale>(blocks_for(n, 256), 256, x, 2.0f, n)
//   kernel<"attn", attn>(dims(blocks_for(seq, 128), batch), 128, shared_bytes(scaled(seq, 4)), q, seq)
//   kernel<"rtc_scale">(rtc_kernel, dim3(4), dim3(256), x, 2.0f, n)
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "cudag/arguments.hpp"
#include "cudag/launch_attributes.hpp"
#include "cudag/dsl/arguments.hpp"
#include "cudag/dsl/node_tuple.hpp"
#include "cudag/dsl/node.hpp"

namespace cudag::dsl {
namespace detail {

/// The name of the function `Kernel` ("app::scale"), for messages and
/// pictures: read from the signature the compiler writes for this function
/// ("... [with auto Kernel = app::scale; ...]" from g++, also under nvcc;
/// "[Kernel = &app::scale]" from clang).
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
  static constexpr bool synchronizes_grid_dependencies = false;
  [[nodiscard]] bool synchronizes() const noexcept { return false; }
  static constexpr bool has_attributes = false;
};
/// A run-time kernel (cudaKernel_t from NVRTC, or a stub address).
template <class Signature>
struct dynamic_kernel {
  kernel_ref<Signature> ref;
  [[nodiscard]] const void* pointer() const noexcept { return ref.function; }
  [[nodiscard]] std::shared_ptr<const void> keep_alive() const noexcept { return ref.keep_alive; }
  [[nodiscard]] std::string_view name() const noexcept { return ref.name; }
  /// The declaration's marker is what the shape judges by (the compiler
  /// cannot read the ref's); the spec also keeps the ref's own.
  static constexpr bool synchronizes_grid_dependencies = false;
  [[nodiscard]] bool synchronizes() const noexcept { return ref.synchronizes_grid_dependencies; }
  static constexpr bool has_attributes = false;
};
/// A kernel marked with synchronizes_grid_dependencies(): it calls
/// cudaGridDependencySynchronize() before it reads what its predecessors
/// wrote, so typed edges may lead into its node.
template <class Function>
struct grid_synchronizing : Function {
  static constexpr bool synchronizes_grid_dependencies = true;
  [[nodiscard]] bool synchronizes() const noexcept { return true; }
};

/// A kernel launched with launch attributes (with_attributes()) or a
/// priority (with_priority()).
template <class Function>
struct attributed : Function {
  static constexpr bool has_attributes = true;
  cudag::launch_attributes attributes;
  int priority = 0;  ///< honoured where instantiated with node priorities
};

template <class Grid>
[[nodiscard]] constexpr dim3 fixed_grid(const Grid& grid) noexcept {
  if constexpr (requires { grid.per_block; }) {
    return dim3(native::blocks_for(grid.count, grid.per_block));
  } else {
    return dim3(grid);
  }
}

// ---------------------------------------------------------------- launch --
// A kernel node's launch: literal dimensions, and shape rules that make some
// follow parameters. Computed with the spec engine's arithmetic, limits and
// refusals (native::shape_rule_extent, cudag::detail::refuse_launch_rule), so that
// a DSL graph and its to_spec() launch alike.

/// A launch dimension following a parameter: ceil(value * multiplier / divisor).
struct launch_rule {
  launch_dim dim = launch_dim::grid_x;
  std::uint64_t multiplier = 1;
  std::uint64_t divisor = 1;
};

[[noreturn, gnu::cold]] inline void refuse_launch_rule(std::string_view node, const launch_rule& r,
                                                       std::string_view param, std::int64_t value) {
  cudag::detail::refuse_launch_rule(std::string(node),
                             shape_rule{r.dim, std::string(param), r.multiplier, r.divisor}, value,
                             native::launch_limit(r.dim));
}

/// Applies `rules` (inputs[i]: rule i's parameter value, as shape_rule_input
/// reads it) to `k`, then checks the block: throws cudag::error naming the
/// node where CUDA could not launch the result. One function for every node.
inline void apply_launch_rules(cudaKernelNodeParams& k, std::span<const launch_rule> rules,
                               const std::int64_t* inputs, const std::string_view* params,
                               std::string_view node) {
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const launch_rule& r = rules[i];
    const native::launch_extent e =
        native::shape_rule_extent(r.dim, inputs[i], r.multiplier, r.divisor);
    if (!e.fits) refuse_launch_rule(node, r, params[i], inputs[i]);
    native::launch_dimension(k, r.dim) = e.value;
  }
  if (!native::block_fits(k.blockDim.x, k.blockDim.y, k.blockDim.z))
    cudag::detail::refuse_launch_block(std::string(node), k.blockDim);
}

/// Literal grid, block and shared bytes (named as cudaKernelNodeParams's
/// fields, for native::launch_dimension), and one rule for each parameter of
/// P... (in launch_dim order, a parameter once per rule it drives).
template <class... P>
struct rule_launch {
  static constexpr auto refs = refs_of<P...>();
  /// Whether a rebind may make this launch one CUDA cannot launch.
  static constexpr bool follows_parameters = sizeof...(P) > 0;
  static constexpr std::size_t rule_count = sizeof...(P);

  dim3 gridDim{1, 1, 1};
  dim3 blockDim{1, 1, 1};
  unsigned sharedMemBytes = 0;
  std::array<launch_rule, sizeof...(P)> rules{};

  /// Sets k's launch from the literals and each rule's parameter (slots[i]).
  void apply(cudaKernelNodeParams& k, const value_tables& values, const ref_slot* slots,
             std::string_view node) const {
    k.gridDim = gridDim;
    k.blockDim = blockDim;
    k.sharedMemBytes = sharedMemBytes;
    if constexpr (sizeof...(P) > 0) {
      static constexpr std::array<std::string_view, sizeof...(P)> names{P::name.view()...};
      const auto inputs = [&]<std::size_t... I>(std::index_sequence<I...>) {
        return std::array<std::int64_t, sizeof...(P)>{
            native::shape_rule_input(read_param<typename P::value_type>(values, slots[I]))...};
      }(std::index_sequence_for<P...>{});
      apply_launch_rules(k, rules, inputs.data(), names.data(), node);
    } else {
      (void)values, (void)slots, (void)node;
    }
  }

  void write(kernel_view& k, std::array<shape_rule_view, sizeof...(P)>& views) const {
    k.grid = gridDim;
    k.block = blockDim;
    k.shared_bytes = sharedMemBytes;
    if constexpr (sizeof...(P) > 0) {
      const std::array<std::string_view, sizeof...(P)> names{P::name.view()...};
      for (std::size_t i = 0; i < sizeof...(P); ++i)
        views[i] = shape_rule_view{rules[i].dim, names[i], rules[i].multiplier, rules[i].divisor};
      k.shape_rules = views;
    } else {
      (void)views;
    }
  }
};

/// blocks_for(count, per_block) of a parameter as the whole grid, with a
/// literal block and shared bytes: the spec's grid rule (launch_over).
template <class Count>
struct counted_launch {
  static constexpr auto refs = refs_of<Count>();
  static constexpr bool follows_parameters = false;  // blocks_for never refuses
  static constexpr std::size_t rule_count = 0;

  unsigned per_block = 256;
  dim3 blockDim{1, 1, 1};
  unsigned sharedMemBytes = 0;

  void apply(cudaKernelNodeParams& k, const value_tables& values, const ref_slot* slots,
             std::string_view) const noexcept {
    const auto count = resolve<std::size_t>(Count{}, values, slots, 0);
    k.gridDim = dim3(native::blocks_for(count, per_block));
    k.blockDim = blockDim;
    k.sharedMemBytes = sharedMemBytes;
  }
  void write(kernel_view& k, std::array<shape_rule_view, 0>&) const {
    k.grid_param = Count::name.view();
    k.items_per_block = per_block;
    k.block = blockDim;
    k.shared_bytes = sharedMemBytes;
  }
};

/// A dimension of a dim3 grid or block, or template shared bytes: taken as given.
struct fixed_extent {
  unsigned value;
};

template <class E>
inline constexpr bool is_dims = false;
template <class X, class Y, class Z>
inline constexpr bool is_dims<dims_t<X, Y, Z>> = true;
template <class E>
inline constexpr bool is_shared_bytes = false;
template <class B>
inline constexpr bool is_shared_bytes<shared_bytes_t<B>> = true;

/// The parameter a launch entry follows: type_list<P>, or type_list<> for a literal.
template <class E>
struct followed_param {
  using type = type_list<>;
};
template <named_param P>
struct followed_param<P> {
  using type = type_list<P>;
};
template <named_param P>
struct followed_param<scaled_t<P>> {
  using type = type_list<P>;
};
template <named_param P>
struct followed_param<blocks_for_t<P>> {
  using type = type_list<P>;
};
template <class E>
inline constexpr bool follows_param = !std::is_same_v<typename followed_param<E>::type, type_list<>>;

template <class... Lists>
struct rule_launch_of;
template <class... P>
struct rule_launch_of<type_list<P...>> {
  using type = rule_launch<P...>;
};
template <class... P, class... Q, class... Rest>
struct rule_launch_of<type_list<P...>, type_list<Q...>, Rest...>
    : rule_launch_of<type_list<P..., Q...>, Rest...> {};

/// A rule entry's scale.
template <class E>
[[nodiscard]] constexpr launch_rule rule_of(const E& e, launch_dim dim) noexcept {
  if constexpr (requires { e.multiplier; })
    return {dim, e.multiplier, e.divisor};
  else if constexpr (requires { e.per_block; })
    return {dim, 1, e.per_block};
  else
    return {dim, 1, 1};
}

/// A literal entry's value, and whether CUDA can launch it: an integer as
/// written (a grid or block dimension from 1, shared bytes from 0, to
/// launch_limit); scaled(...) or blocks_for(...) of a literal folded as a
/// rule is (0 launches 1).
template <class E>
[[nodiscard]] constexpr native::launch_extent literal_extent(const E& e, launch_dim dim) noexcept {
  if constexpr (std::is_same_v<E, unit_extent>) {
    return {1, true};
  } else if constexpr (std::is_same_v<E, fixed_extent>) {
    return {e.value, true};
  } else if constexpr (std::is_integral_v<E>) {
    const bool fits = std::cmp_greater_equal(e, dim == launch_dim::shared_bytes ? 0 : 1) &&
                      std::cmp_less_equal(e, native::launch_limit(dim));
    return {fits ? static_cast<unsigned>(e) : 0u, fits};
  } else {
    const launch_rule r = rule_of(e, dim);
    if (r.multiplier == 0 || r.divisor == 0) return {0, false};
    return native::shape_rule_extent(dim, native::shape_rule_input(e.count), r.multiplier,
                                     r.divisor);
  }
}

template <class Launch, class E>
constexpr void set_launch_entry(Launch& out, std::size_t& rule, launch_dim dim, const E& e) noexcept {
  if constexpr (follows_param<E>) {
    out.rules[rule++] = rule_of(e, dim);
    // What the spec's literal holds under a rule (the builder's default).
    native::launch_dimension(out, dim) = dim == launch_dim::shared_bytes ? 0u : 1u;
  } else {
    native::launch_dimension(out, dim) = literal_extent(e, dim).value;
  }
}

/// The launch of entries E... in launch_dim order (grid x, y, z, block x, y,
/// z, shared bytes).
template <class... E>
[[nodiscard]] constexpr auto launch_of_entries(const E&... e) noexcept {
  using launch = typename rule_launch_of<typename followed_param<E>::type...>::type;
  launch out{};
  std::size_t rule = 0, dim = 0;
  (set_launch_entry(out, rule, static_cast<launch_dim>(dim++), e), ...);
  return out;
}

template <class Grid>
[[nodiscard]] constexpr auto grid_entries(const Grid& grid) noexcept {
  if constexpr (is_dims<Grid>) {
    return grid;
  } else if constexpr (named_param<Grid> ||
                       (is_count_rule<Grid> && (follows_param<Grid> || requires { grid.multiplier; }))) {
    return dims_t<Grid, unit_extent, unit_extent>{grid, {}, {}};
  } else {
    const dim3 g = fixed_grid(grid);
    return dims_t<fixed_extent, fixed_extent, fixed_extent>{{g.x}, {g.y}, {g.z}};
  }
}
template <class Block>
[[nodiscard]] constexpr auto block_entries(const Block& block) noexcept {
  if constexpr (is_dims<Block>) {
    return block;
  } else if constexpr (named_param<Block> || is_count_rule<Block>) {
    return dims_t<Block, unit_extent, unit_extent>{block, {}, {}};
  } else {
    const dim3 b(block);
    return dims_t<fixed_extent, fixed_extent, fixed_extent>{{b.x}, {b.y}, {b.z}};
  }
}
template <class Shared>
[[nodiscard]] constexpr auto shared_entry(const Shared& shared) noexcept {
  if constexpr (is_shared_bytes<Shared>)
    return shared.bytes;
  else
    return fixed_extent{shared};
}

/// Whether a launch is written with dims(), shared_bytes() or scaled(): its
/// literals are checked where the node is declared.
template <class Grid, class Block, class Shared>
inline constexpr bool launch_has_entries =
    is_dims<Grid> || is_dims<Block> || is_shared_bytes<Shared> || named_param<Grid> ||
    named_param<Block> || is_count_rule<Block> || requires(const Grid& g) { g.multiplier; };

/// A kernel node's launch from its grid, block and shared-bytes arguments:
/// blocks_for of a parameter with a plain block and shared bytes keeps the
/// spec's grid rule; any other launch is literals and shape rules.
template <class Grid, class Block, class Shared>
[[nodiscard]] constexpr auto make_launch(const Grid& grid, const Block& block, const Shared& shared) {
  if constexpr (is_count_rule<Grid> && follows_param<Grid> &&
                !launch_has_entries<Grid, Block, Shared> && !is_dims<Block>) {
    return counted_launch<decltype(grid.count)>{grid.per_block, dim3(block), shared};
  } else {
    const auto g = grid_entries(grid);
    const auto b = block_entries(block);
    return launch_of_entries(g.x, g.y, g.z, b.x, b.y, b.z, shared_entry(shared));
  }
}

}  // namespace detail

/// Launch dimension `Dim` of kernel node `Node` is one CUDA cannot launch: a
/// literal 0 (a grid or block dimension) or past CUDA's limit, or a rule
/// with a multiplier or divisor of 0. Not constexpr: in a constant
/// declaration, calling it is the compile error (its template arguments
/// name the node and the dimension); at run time it throws cudag::error
/// naming them.
template <fixed_string Node, launch_dim Dim>
[[noreturn]] void launch_dimension_out_of_range(std::uint64_t value, bool zero_scale) {
  const std::string node(Node.view());
  const std::string dim(launch_dim_name(Dim));
  if (zero_scale)
    throw cudag::error("kernel node '" + node + "': shape rule " + dim +
                           " has a multiplier or divisor of 0",
                       cudaErrorInvalidConfiguration, {}, node);
  throw cudag::error("kernel node '" + node + "': " + dim + " = " + std::to_string(value) +
                         " is outside CUDA's range (" +
                         (Dim == launch_dim::shared_bytes ? "0" : "1") + " to " +
                         std::to_string(native::launch_limit(Dim)) + ")",
                     cudaErrorInvalidConfiguration, {}, node);
}

namespace detail {

template <fixed_string Node, launch_dim Dim, class E>
constexpr void check_launch_entry(const E& e) {
  if constexpr (follows_param<E>) {
    const launch_rule r = rule_of(e, Dim);
    if (r.multiplier == 0 || r.divisor == 0) launch_dimension_out_of_range<Node, Dim>(0, true);
  } else if constexpr (!std::is_same_v<E, unit_extent> && !std::is_same_v<E, fixed_extent>) {
    if (literal_extent(e, Dim).fits) return;
    const launch_rule r = rule_of(e, Dim);
    if constexpr (std::is_integral_v<E>) {
      launch_dimension_out_of_range<Node, Dim>(std::cmp_less(e, 0) ? 0 : static_cast<std::uint64_t>(e),
                                               false);
    } else {
      if (r.multiplier == 0 || r.divisor == 0) launch_dimension_out_of_range<Node, Dim>(0, true);
      launch_dimension_out_of_range<Node, Dim>(
          native::scaled_extent(native::shape_rule_input(e.count), r.multiplier, r.divisor), false);
    }
  }
}

/// Checks each literal and rule written with dims(), shared_bytes() or
/// scaled() where the node is declared.
template <fixed_string Node, class Grid, class Block, class Shared>
constexpr void check_launch_entries(const Grid& grid, const Block& block, const Shared& shared) {
  const auto g = grid_entries(grid);
  check_launch_entry<Node, launch_dim::grid_x>(g.x);
  check_launch_entry<Node, launch_dim::grid_y>(g.y);
  check_launch_entry<Node, launch_dim::grid_z>(g.z);
  if constexpr (is_dims<Block> || named_param<Block> || is_count_rule<Block>) {
    const auto b = block_entries(block);
    check_launch_entry<Node, launch_dim::block_x>(b.x);
    check_launch_entry<Node, launch_dim::block_y>(b.y);
    check_launch_entry<Node, launch_dim::block_z>(b.z);
  }
  if constexpr (is_shared_bytes<Shared>) check_launch_entry<Node, launch_dim::shared_bytes>(shared.bytes);
}

template <class... A>
inline constexpr bool leads_with_shared_bytes = false;
template <class First, class... A>
inline constexpr bool leads_with_shared_bytes<First, A...> = is_shared_bytes<First>;

template <std::size_t N, std::size_t M>
[[nodiscard]] consteval std::array<ref_info, N + M> join_refs(const std::array<ref_info, N>& a,
                                                              const std::array<ref_info, M>& b) {
  std::array<ref_info, N + M> out{};
  std::size_t k = 0;  // range-for: nvcc warns of `i < N` with N = 0
  for (const ref_info& r : a) out[k++] = r;
  for (const ref_info& r : b) out[k++] = r;
  return out;
}

template <class Function, class Launch, class Params, class Args>
struct kernel_body;

template <class Function, class Launch, class... P, class... S>
struct kernel_body<Function, Launch, type_list<P...>, node_tuple<S...>> : leaf_body {
  static constexpr node_kind kind = node_kind::kernel;
  static constexpr auto refs =  // reading order
      join_refs(Launch::refs, kernel_argument_refs(type_list<P...>{}, type_list<S...>{}));
  /// A cooperative launch reading a parameter is judged again at a rebind
  /// (the attributes are values: any attributed launch that reads one is).
  static constexpr bool launch_follows_parameters =
      Launch::follows_parameters || (Function::has_attributes && Launch::refs.size() != 0);
  static constexpr bool synchronizes_grid_dependencies = Function::synchronizes_grid_dependencies;

  Function function;
  Launch launch;  ///< rule_launch or counted_launch
  node_tuple<S...> args;

  static constexpr bool views_buffers = any_buffer_view<S...>;
  template <class V>
  constexpr void for_each_buffer_view(V&& f) const {
    for_each_argument_view(args, f, std::index_sequence_for<S...>{});
  }

  struct storage {
    node_tuple<P...> values;
    void* pointers[sizeof...(P) == 0 ? 1 : sizeof...(P)];
    cudaKernelNodeParams params;
  };

  /// The launch's references come first; argument I's is slots[arg_ref[I]].
  static constexpr auto arg_ref = [] {
    auto out = ref_positions<S...>();
    for (auto& k : out) k += Launch::refs.size();
    return out;
  }();

  void fill(storage& s, const value_tables& values, const ref_slot* slots,
            std::string_view name) const {
    fill_at(s, values, slots, std::index_sequence_for<P...>{});
    s.params = cudaKernelNodeParams{const_cast<void*>(function.pointer()), {}, {}, 0,
                                    s.pointers, nullptr};
    launch.apply(s.params, values, slots, name);
  }
  template <std::size_t... I>
  void fill_at(storage& s, const value_tables& values, const ref_slot* slots,
               std::index_sequence<I...>) const noexcept {
    (void)s, (void)values, (void)slots;  // no arguments: g++ warns them set but unused
    ((at_c<I>(s.values) = resolve<P>(at_c<I>(args), values, slots, arg_ref[I]),
      s.pointers[I] = &at_c<I>(s.values)),
     ...);
  }

  cudaGraphNode_t lower(storage& s, lowering_state& st, const ref_slot* slots, cudaGraph_t g,
                        native::deps_span deps, std::string_view name) const {
    fill(s, st.values, slots, name);
    if constexpr (Function::has_attributes) {
      if (function.attributes.cooperative) check_cooperative(s.params, name);
      // A node with a typed dependency: CUDA's edge data on each (graph.hpp).
      const cudaGraphNode_t h = st.edges.empty()
                                    ? native::add_kernel(g, deps, s.params, name)
                                    : native::add_kernel(g, deps, st.edges, s.params, name);
      native::send_launch_attributes(h, function.priority, function.attributes, name);
      return h;
    } else {
      if (!st.edges.empty()) return native::add_kernel(g, deps, st.edges, s.params, name);
      return native::add_kernel(g, deps, s.params, name);
    }
  }
  static void check_cooperative(const cudaKernelNodeParams& k, std::string_view name) {
    native::check_cooperative_grid(k.func, k.gridDim, k.blockDim, k.sharedMemBytes, name);
  }
  void update(storage& s, lowering_state& st, const ref_slot* slots, cudaGraphNode_t node,
              native::param_target to, std::string_view name, param_hashes) const {
    fill(s, st.values, slots, name);
    native::set_kernel(to, node, s.params, name);
  }
  /// Throws, naming the node, where the launch its rules give for the
  /// current values is one CUDA cannot launch: a rebind checks every node it
  /// would change before it changes any.
  void check_launch(const lowering_state& st, const ref_slot* slots, std::string_view name) const {
    cudaKernelNodeParams k{};
    launch.apply(k, st.values, slots, name);
    if constexpr (Function::has_attributes) {
      if (function.attributes.cooperative) {
        k.func = const_cast<void*>(function.pointer());
        check_cooperative(k, name);
      }
    }
  }

  /// `accesses`: what with_access() declared (cudag/dsl/accesses.hpp).
  void write_spec(spec_writer& w, std::string_view name,
                  std::span<const access_declaration> accesses = {}) const {
    write_spec_at(w, name, accesses, std::index_sequence_for<P...>{});
  }
  template <std::size_t... I>
  void write_spec_at(spec_writer& w, std::string_view name,
                     std::span<const access_declaration> accesses, std::index_sequence<I...>) const {
    const std::array<value_view, sizeof...(P)> views{spec_view<P>(at_c<I>(args))...};
    std::array<shape_rule_view, Launch::rule_count> rules;
    kernel_view k;
    k.function = function.pointer();
    k.function_name = function.name();
    k.keep_alive = function.keep_alive();
    k.synchronizes_grid_dependencies = function.synchronizes();
    if constexpr (Function::has_attributes) {
      k.attributes = function.attributes;
      k.priority = function.priority;
    }
    launch.write(k, rules);
    k.args = views;
    k.accesses = accesses;
    w.kernel(name, k);
  }
};

/// Whether arguments A... fit parameters P... (count and each conversion).
/// Independent of the node's name, so shared by nodes of the same types.
template <class... P, class... A>
consteval bool kernel_arguments_fit(type_list<P...>, type_list<A...>) {
  if constexpr (sizeof...(P) != sizeof...(A))
    return false;
  else
    return (dsl_passes_as<P, A> && ...);
}

/// The mistake of kernel node Node's arguments A... for parameters P...
/// (instantiated only where they do not fit): a count that differs, or the
/// first argument that does not convert, naming its position and the
/// kernel's parameter type as declared (so that nvcc's front end prints
/// `float`, not an alias computed from it).
template <fixed_string Node, std::size_t I>
consteval auto first_argument_mistake(type_list<>, type_list<>) {
  return std::type_identity<void>{};
}
template <fixed_string Node, std::size_t I, class P0, class... P, class A0, class... A>
consteval auto first_argument_mistake(type_list<P0, P...>, type_list<A0, A...>) {
  if constexpr (!dsl_passes_as<P0, A0>)
    return std::type_identity<kernel_argument_does_not_convert<Node, I, P0, A0>>{};
  else
    return first_argument_mistake<Node, I + 1>(type_list<P...>{}, type_list<A...>{});
}
template <fixed_string Node, class... P, class... A>
consteval auto kernel_arguments_mistake(type_list<P...>, type_list<A...>) {
  if constexpr (sizeof...(P) != sizeof...(A))
    return std::type_identity<kernel_argument_count_mismatch<Node, sizeof...(P), sizeof...(A)>>{};
  else
    return first_argument_mistake<Node, 0>(type_list<P...>{}, type_list<A...>{});
}
template <fixed_string Node, class Params, class... A>
using kernel_arguments_mistake_t =
    typename decltype(kernel_arguments_mistake<Node>(Params{}, type_list<A...>{}))::type;

// Where the mistake's type is incomplete (not g++: CUDAG_DSL_REFUSAL), only
// instantiated for a call that does not fit: the incomplete type each report
// names is the error. The compiler drops the return statement naming it and
// the report returns true, so the static_assert adds no second error.

#if CUDAG_DSL_REFUSES_BY_COPY
/// Never defined: under g++ the mistakes are complete types (refusals), and
/// a run-time kernel's node, never constant, is reported through this one.
template <class Mistake>
struct reported;
#define CUDAG_DSL_REPORTED(...) reported<__VA_ARGS__>
#else
#define CUDAG_DSL_REPORTED(...) __VA_ARGS__
#endif

/// Names node, position and the kernel's parameter type as declared.
template <fixed_string Node, std::size_t I, class P, class A>
consteval bool report_kernel_argument() {
  if constexpr (!dsl_passes_as<P, A>)
    return sizeof(CUDAG_DSL_REPORTED(kernel_argument_does_not_convert<Node, I, P, A>)) > 0;
  return true;
}
template <fixed_string Node, std::size_t Expected, std::size_t Given>
consteval bool report_kernel_argument_count() {
  if constexpr (Expected != Given)
    return sizeof(CUDAG_DSL_REPORTED(kernel_argument_count_mismatch<Node, Expected, Given>)) > 0;
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
/// body of the same function, launch and references that passes no arguments.
/// The graph holding it then compiles on, so one mistake gives one error
/// (returning anything else cascaded, and crashed nvcc's front end).
template <class Function, class Launch, class... A>
[[nodiscard]] constexpr auto rejected_kernel_body(Function function, const Launch& launch,
                                                  const A&... args) {
  using body = kernel_body<Function, Launch, type_list<>, node_tuple<A...>>;
  return body{{}, function, launch, make_node_tuple(args...)};
}

template <class Function, class Launch, class Params, class... A>
struct kernel_body_for;
template <class Function, class Launch, class... P, class... A>
struct kernel_body_for<Function, Launch, type_list<P...>, A...> {
  using type = kernel_body<Function, Launch, type_list<P...>, node_tuple<stored_arg<P, A>...>>;
  static constexpr type make(Function function, const Launch& launch, const A&... args) {
    return type{{}, function, launch, make_node_tuple(store_arg<P>(args)...)};
  }
};

template <class Function>
inline constexpr bool is_run_time_kernel = false;
template <class Signature>
inline constexpr bool is_run_time_kernel<dynamic_kernel<Signature>> = true;

template <class F>
struct kernel_signature;
template <class... P>
struct kernel_signature<void (*)(P...)> {
  using params = type_list<P...>;
};

/// A kernel node's body with its function marked grid-synchronizing
/// (synchronizes_grid_dependencies()); other bodies have none.
template <class Body>
struct grid_synchronizing_body;
template <class Function, class Launch, class Params, class Args>
struct grid_synchronizing_body<kernel_body<Function, Launch, Params, Args>> {
  using marked = std::conditional_t<Function::synchronizes_grid_dependencies, Function,
                                    grid_synchronizing<Function>>;
  using type = kernel_body<marked, Launch, Params, Args>;
  static constexpr type make(const kernel_body<Function, Launch, Params, Args>& body) {
    return type{{}, marked{body.function}, body.launch, body.args};
  }
};

// Each node instantiates kernel<Name, ...> and make_kernel_node<Name, ...>, named
// by its name; the argument check and the body depend on types only, and
// only a failing check names the node.

/// A kernel node of parameters Params: its arguments checked (the error
/// names the node and the position), its launch's literals checked where
/// written with dims(), shared_bytes() or scaled().
template <fixed_string Name, class Params, class Function, class Grid, class Block, class Shared,
          class... A>
[[nodiscard]] constexpr decltype(auto) make_kernel_node(Function function, const Grid& grid,
                                                        const Block& block, const Shared& shared,
                                                        const A&... args) {
  if constexpr (launch_has_entries<Grid, Block, Shared>)
    check_launch_entries<Name>(grid, block, shared);
  const auto launch = make_launch(grid, block, shared);
  // A run-time kernel's node is never constant: its mistake is reported
  // here, where -fsyntax-only sees it too.
  if constexpr (!kernel_arguments_fit(Params{}, type_list<A...>{}) && CUDAG_DSL_REFUSES_BY_COPY &&
                !is_run_time_kernel<Function>) {
    // The refusal, copied where the user keeps the node or its graph.
    (void)function, ((void)args, ...);
    return refusal_of<kernel_arguments_mistake_t<Name, Params, A...>>();
  } else if constexpr (!kernel_arguments_fit(Params{}, type_list<A...>{})) {
    static_assert(report_kernel_arguments<Name>(Params{}, type_list<A...>{}));
    auto body = rejected_kernel_body(function, launch, args...);
    return node_t<Name, decltype(body)>{body};
  } else {
    if constexpr (any_literal_needs_range_check(Params{}, type_list<A...>{}))
      check_literal_ranges<Name>(Params{}, std::index_sequence_for<A...>{}, args...);
    auto body = kernel_body_for<Function, decltype(launch), Params, A...>::make(function, launch,
                                                                              args...);
    return node_t<Name, decltype(body)>{body};
  }
}

}  // namespace detail

/// A node running nvcc kernel `Kernel` (a __global__ function). `grid` and
/// `block`: a dim3 (or what converts to one), an integral parameter,
/// blocks_for(count, per_block) or scaled(count, multiplier, divisor) (in x),
/// or dims(x, y, z) of those; SharedBytes: the dynamic shared memory, or
/// pass shared_bytes(...) after the block.
template <fixed_string Name, auto Kernel, unsigned SharedBytes = 0, class Grid, class Block,
          class... A>
  requires std::is_pointer_v<decltype(Kernel)> && (!detail::leads_with_shared_bytes<A...>)
[[nodiscard]] constexpr decltype(auto) kernel(const Grid& grid, const Block& block, const A&... args) {
  using params = typename detail::kernel_signature<decltype(Kernel)>::params;
  return detail::make_kernel_node<Name, params>(detail::static_kernel<Kernel>{}, grid, block,
                                                SharedBytes, args...);
}
/// The same with shared bytes that may follow a parameter:
/// `kernel<"attn", attn>(dims(blocks_for(seq, 128), batch), 128, shared_bytes(scaled(seq, 4)), ...)`.
template <fixed_string Name, auto Kernel, class Grid, class Block, class Bytes, class... A>
  requires std::is_pointer_v<decltype(Kernel)>
[[nodiscard]] constexpr decltype(auto) kernel(const Grid& grid, const Block& block,
                                              const detail::shared_bytes_t<Bytes>& shared,
                                              const A&... args) {
  using params = typename detail::kernel_signature<decltype(Kernel)>::params;
  return detail::make_kernel_node<Name, params>(detail::static_kernel<Kernel>{}, grid, block,
                                                shared, args...);
}

/// A node running a run-time kernel (NVRTC) of a known signature.
template <fixed_string Name, unsigned SharedBytes = 0, class... P, class Grid, class Block,
          class... A>
  requires(!detail::leads_with_shared_bytes<A...>)
[[nodiscard]] decltype(auto) kernel(const kernel_ref<void(P...)>& k, const Grid& grid,
                                    const Block& block, const A&... args) {
  return detail::make_kernel_node<Name, type_list<P...>>(detail::dynamic_kernel<void(P...)>{k},
                                                         grid, block, SharedBytes, args...);
}
template <fixed_string Name, class... P, class Grid, class Block, class Bytes, class... A>
[[nodiscard]] decltype(auto) kernel(const kernel_ref<void(P...)>& k, const Grid& grid,
                                    const Block& block, const detail::shared_bytes_t<Bytes>& shared,
                                    const A&... args) {
  return detail::make_kernel_node<Name, type_list<P...>>(detail::dynamic_kernel<void(P...)>{k},
                                                         grid, block, shared, args...);
}

/// Marks kernel node `node` as one whose kernel calls
/// cudaGridDependencySynchronize() before it reads what its predecessors
/// wrote, so that a programmatic or launch-completion edge may lead into it
/// (edge<"produce", "consume", edge_kind::programmatic>):
///   synchronizes_grid_dependencies(kernel<"consume", consume>(4, 128, x, y, n))
/// The spec's kernel node says so too (kernel_node::synchronizes_grid_dependencies).
template <class Node>
  requires requires { typename detail::grid_synchronizing_body<typename Node::body_type>::type; }
[[nodiscard]] constexpr auto synchronizes_grid_dependencies(const Node& node) {
  using marking = detail::grid_synchronizing_body<typename Node::body_type>;
  return detail::node_t<Node::name, typename marking::type>{marking::make(node.body)};
}
/// A refused node (its error reported where it was written) passes on.
template <class Node>
  requires detail::refused_graph_type<std::remove_cvref_t<Node>>
[[nodiscard]] constexpr decltype(auto) synchronizes_grid_dependencies(Node&&) {
  return detail::passed_refusal<Node>();
}

namespace detail {

/// A kernel node's literal grid and which of its dimensions follow a
/// parameter, as the launch attribute rules judge them.
template <class... P>
[[nodiscard]] constexpr grid_follows following_dims(const rule_launch<P...>& launch) noexcept {
  grid_follows f;
  for (const launch_rule& r : launch.rules) {
    f.x = f.x || r.dim == launch_dim::grid_x;
    f.y = f.y || r.dim == launch_dim::grid_y;
    f.z = f.z || r.dim == launch_dim::grid_z;
  }
  return f;
}
template <class Count>
[[nodiscard]] constexpr grid_follows following_dims(const counted_launch<Count>&) noexcept {
  return {true, false, false};
}
template <class... P>
[[nodiscard]] constexpr dim3 literal_grid(const rule_launch<P...>& launch) noexcept {
  return launch.gridDim;
}
template <class Count>
[[nodiscard]] constexpr dim3 literal_grid(const counted_launch<Count>&) noexcept {
  return dim3(1, 1, 1);
}

/// Refuses launch attributes of node `Node` with fault `Fault`: not
/// constexpr, so that a graph declared constexpr fails to compile here (the
/// error names the node and the fault); at run time it throws cudag::error
/// with check()'s message.
template <fixed_string Node, launch_attribute_fault Fault>
[[noreturn]] void launch_attributes_refused(dim3 grid, grid_follows follows,
                                            const cudag::launch_attributes& a) {
  throw cudag::error(describe_launch_attribute_fault(Fault, Node.view(), grid, follows, a),
                     cudaErrorInvalidConfiguration, {}, std::string(Node.view()));
}

template <fixed_string Node, launch_attribute_fault Fault>
constexpr void refuse_launch_attributes_if(unsigned faults, dim3 grid, grid_follows follows,
                                           const cudag::launch_attributes& a) {
  if (faults & static_cast<unsigned>(Fault)) launch_attributes_refused<Node, Fault>(grid, follows, a);
}

template <fixed_string Node>
constexpr void check_launch_attributes(dim3 grid, grid_follows follows, const cudag::launch_attributes& a) {
  const unsigned faults = launch_attribute_faults(grid, follows, a);
  if (faults == 0) return;
  using fault = launch_attribute_fault;
  refuse_launch_attributes_if<Node, fault::cluster_partly_zero>(faults, grid, follows, a);
  refuse_launch_attributes_if<Node, fault::cluster_over_8_blocks>(faults, grid, follows, a);
  refuse_launch_attributes_if<Node, fault::cluster_over_a_following_dimension>(faults, grid, follows, a);
  refuse_launch_attributes_if<Node, fault::cluster_does_not_divide_grid>(faults, grid, follows, a);
  refuse_launch_attributes_if<Node, fault::carveout_out_of_range>(faults, grid, follows, a);
  refuse_launch_attributes_if<Node, fault::window_at_null>(faults, grid, follows, a);
  refuse_launch_attributes_if<Node, fault::window_ratio_out_of_range>(faults, grid, follows, a);
}

template <class Body>
struct attributed_body;
template <class Function, class Launch, class Params, class Args>
struct attributed_body<kernel_body<Function, Launch, Params, Args>> {
  using function = std::conditional_t<Function::has_attributes, Function, attributed<Function>>;
  using type = kernel_body<function, Launch, Params, Args>;
  static constexpr type make(const kernel_body<Function, Launch, Params, Args>& body,
                             const cudag::launch_attributes& a) {
    function f{body.function};
    f.attributes = a;
    return type{{}, f, body.launch, body.args};
  }
  static constexpr type prioritized(const kernel_body<Function, Launch, Params, Args>& body, int priority) {
    function f{body.function};
    f.priority = priority;
    return type{{}, f, body.launch, body.args};
  }
};

}  // namespace detail

/// Kernel node `node` launched with attributes `a` (cudag/launch_attributes.hpp),
/// each sent to CUDA after the node is added, as the builder's are:
///   with_attributes(kernel<"pairs", pairs>(dim3(8), 128, x, n),
///                   {.cluster = dim3(2, 1, 1), .shared_carveout = 50})
/// Refused where the node is declared (at compile time in a constexpr
/// graph, naming the node and the fault; with check()'s message at run
/// time): a cluster that does not divide the grid, of more than 8 blocks,
/// partly zero or over a grid dimension that follows a parameter; a
/// carveout over 100 percent; an access-policy window at a null address or
/// with a hit ratio outside 0 to 1. A cooperative grid larger than the
/// device holds at once is refused at lowering and at every rebind. A
/// second with_attributes replaces the first's attributes.
template <class Node>
  requires requires { typename detail::attributed_body<typename Node::body_type>::type; }
[[nodiscard]] constexpr auto with_attributes(const Node& node, const cudag::launch_attributes& a) {
  detail::check_launch_attributes<Node::name>(detail::literal_grid(node.body.launch),
                                              detail::following_dims(node.body.launch), a);
  using attributing = detail::attributed_body<typename Node::body_type>;
  return detail::node_t<Node::name, typename attributing::type>{attributing::make(node.body, a)};
}
/// A refused node (its error reported where it was written) passes on.
template <class Node>
  requires detail::refused_graph_type<std::remove_cvref_t<Node>>
[[nodiscard]] constexpr decltype(auto) with_attributes(Node&&, const cudag::launch_attributes&) {
  return detail::passed_refusal<Node>();
}

/// Kernel node `node` with launch priority `priority`
/// (cudaLaunchAttributePriority), honoured where the graph is instantiated
/// with instantiate_options::use_node_priority; the builder's
/// launch_config::priority. Keeps the node's other attributes.
template <class Node>
  requires requires { typename detail::attributed_body<typename Node::body_type>::type; }
[[nodiscard]] constexpr auto with_priority(const Node& node, int priority) {
  using attributing = detail::attributed_body<typename Node::body_type>;
  return detail::node_t<Node::name, typename attributing::type>{attributing::prioritized(node.body, priority)};
}
/// A refused node (its error reported where it was written) passes on.
template <class Node>
  requires detail::refused_graph_type<std::remove_cvref_t<Node>>
[[nodiscard]] constexpr decltype(auto) with_priority(Node&&, int) {
  return detail::passed_refusal<Node>();
}

}  // namespace cudag::dsl
