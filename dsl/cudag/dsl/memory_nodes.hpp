#pragma once
// Nodes that touch memory without a kernel: memcpy, memset (1-D and 2-D,
// 1/2/4-byte elements), and the graph-owned allocations (mem alloc / free)
// that produce named buffers.
//
//   memcpy<"stage">(dst, src, bytes)
//   memset<"clear">(y, 0.0f, 1024)           // element size: the fill's size
//   memset_2d<"clear_tile">(y, pitch_bytes, 7u, width, height)
//   mem_alloc<"alloc_tmp">(tmp, 1024)        // tmp = buffer<"tmp", float>
//   mem_free<"free_tmp">(tmp)
#include <cuda_runtime_api.h>

#include <cstring>
#include <string_view>
#include <type_traits>

#include "cudag/buffer_bounds.hpp"
#include "cudag/dsl/arguments.hpp"
#include "cudag/dsl/node.hpp"

namespace cudag::dsl {
namespace detail {

/// What a memcpy or memset node with an operand of the wrong type holds after
/// its error: a body of its kind with null operands that keeps the
/// references of the operands given (the graph's parameters stay as
/// declared), so that the graph compiles on and one mistake gives one error.
template <class Body, class... A>
struct operands_after_error : Body {
  static constexpr auto refs = refs_of<A...>();
};

// ------------------------------------------------------------------ memcpy --
template <class Dst, class Src>
struct memcpy_body : leaf_body {
  static constexpr node_kind kind = node_kind::memcpy;
  static constexpr auto refs =
      refs_touching<Dst, Src>({access_mode::read_write, access_mode::read});
  static constexpr bool views_buffers = named_buffer<Dst> || named_buffer<Src>;

  Dst dst;
  Src src;
  std::size_t bytes;
  cudaMemcpyKind direction;

  /// f(buffer name, byte offset, bytes spanned, access) per buffer operand.
  template <class F>
  constexpr void for_each_buffer_view(F&& f) const {
    if constexpr (named_buffer<Dst>)
      f(Dst::name.view(), dst.offset * sizeof(typename Dst::element_type), bytes,
        view_access::writes);
    if constexpr (named_buffer<Src>)
      f(Src::name.view(), src.offset * sizeof(typename Src::element_type), bytes,
        view_access::reads);
  }

  struct storage {
    cudaMemcpy3DParms params;
  };
  static constexpr auto arg_ref = ref_positions<Dst, Src>();
  void fill(storage& s, const value_tables& values, const ref_slot* slots) const noexcept {
    s.params = native::memcpy_1d_params(resolve<void*>(dst, values, slots, arg_ref[0]),
                                        resolve<const void*>(src, values, slots, arg_ref[1]), bytes,
                                        direction);
  }
  cudaGraphNode_t lower(storage& s, lowering_state& st, const ref_slot* slots, cudaGraph_t g,
                        native::deps_span deps, std::string_view name) const {
    fill(s, st.values, slots);
    return native::add_memcpy(g, deps, s.params, name);
  }
  void update(storage& s, lowering_state& st, const ref_slot* slots, cudaGraphNode_t node,
              native::param_target to, std::string_view name, param_hashes) const {
    fill(s, st.values, slots);
    native::set_memcpy(to, node, s.params, name);
  }
  void write_spec(spec_writer& w, std::string_view name) const {
    w.memcpy(name, spec_view<void*>(dst), spec_view<const void*>(src), bytes, direction);
  }
};

}  // namespace detail

template <fixed_string Name, class Dst, class Src>
[[nodiscard]] constexpr decltype(auto) memcpy(const Dst& dst, const Src& src, std::size_t bytes,
                                              cudaMemcpyKind direction = cudaMemcpyDefault) {
  if constexpr (!detail::dsl_passes_as<void*, Dst> && CUDAG_DSL_REFUSES_BY_COPY) {
    return detail::refusal_of<node_operand_has_wrong_type<Name, "destination", void*, Dst>>();
  } else if constexpr (!detail::dsl_passes_as<const void*, Src> && CUDAG_DSL_REFUSES_BY_COPY) {
    return detail::refusal_of<node_operand_has_wrong_type<Name, "source", const void*, Src>>();
  } else if constexpr (!detail::dsl_passes_as<void*, Dst> || !detail::dsl_passes_as<const void*, Src>) {
    static_assert(detail::check_operand<Name, "destination", void*, Dst>() &&
                  detail::check_operand<Name, "source", const void*, Src>());
    using body = detail::operands_after_error<detail::memcpy_body<void*, const void*>, Dst, Src>;
    return detail::node_t<Name, body>{body{{{}, nullptr, nullptr, bytes, direction}}};
  } else {
    using body =
        detail::memcpy_body<detail::stored_arg<void*, Dst>, detail::stored_arg<const void*, Src>>;
    return detail::node_t<Name, body>{body{{}, detail::store_arg<void*>(dst),
                                           detail::store_arg<const void*>(src), bytes, direction}};
  }
}

namespace detail {

// ------------------------------------------------------------------ memset --
template <class Dst, class Fill>
struct memset_body : leaf_body {
  static constexpr node_kind kind = node_kind::memset;
  static constexpr auto refs =
      refs_touching<Dst, Fill>({access_mode::read_write, access_mode::read});
  using fill_type = arg_type<Fill>;
  static constexpr bool views_buffers = named_buffer<Dst>;

  Dst dst;
  Fill fill_value;
  std::size_t width;
  std::size_t height;
  std::size_t pitch_bytes;

  template <class F>
  constexpr void for_each_buffer_view(F&& f) const {
    if constexpr (named_buffer<Dst>)
      f(Dst::name.view(), dst.offset * sizeof(typename Dst::element_type),
        cudag::detail::memset_extent(sizeof(fill_type), width, height, pitch_bytes),
        view_access::sets);
  }

  struct storage {
    cudaMemsetParams params;
  };
  static constexpr auto arg_ref = ref_positions<Dst, Fill>();
  void fill(storage& s, const value_tables& values, const ref_slot* slots) const noexcept {
    const fill_type v = resolve<fill_type>(fill_value, values, slots, arg_ref[1]);
    unsigned bits = 0;
    std::memcpy(&bits, &v, sizeof(fill_type));
    s.params = native::memset_params(resolve<void*>(dst, values, slots, arg_ref[0]), bits,
                                     sizeof(fill_type), width, height, pitch_bytes);
  }
  cudaGraphNode_t lower(storage& s, lowering_state& st, const ref_slot* slots, cudaGraph_t g,
                        native::deps_span deps, std::string_view name) const {
    fill(s, st.values, slots);
    return native::add_memset(g, deps, s.params, name);
  }
  void update(storage& s, lowering_state& st, const ref_slot* slots, cudaGraphNode_t node,
              native::param_target to, std::string_view name, param_hashes) const {
    fill(s, st.values, slots);
    native::set_memset(to, node, s.params, name);
  }
  void write_spec(spec_writer& w, std::string_view name) const {
    w.memset(name, spec_view<void*>(dst), spec_view<fill_type>(fill_value),
             unsigned(sizeof(fill_type)), width, height, pitch_bytes);
  }
};

template <class F>
inline constexpr bool is_memset_fill =
    (std::is_integral_v<F> || std::is_floating_point_v<F>) &&
    (sizeof(F) == 1 || sizeof(F) == 2 || sizeof(F) == 4);

}  // namespace detail

/// `height` rows of `width` elements, rows `pitch_bytes` apart.
template <fixed_string Name, class Dst, class Fill>
[[nodiscard]] constexpr decltype(auto) memset_2d(const Dst& dst, std::size_t pitch_bytes,
                                                 const Fill& fill, std::size_t width,
                                                 std::size_t height) {
  if constexpr (!detail::dsl_passes_as<void*, Dst> && CUDAG_DSL_REFUSES_BY_COPY) {
    return detail::refusal_of<node_operand_has_wrong_type<Name, "destination", void*, Dst>>();
  } else if constexpr (!detail::is_memset_fill<detail::arg_type<Fill>> && CUDAG_DSL_REFUSES_BY_COPY) {
    return detail::refusal_of<node_operand_has_wrong_type<Name, "fill (1, 2 or 4 bytes)", unsigned, Fill>>();
  } else if constexpr (!detail::dsl_passes_as<void*, Dst> ||
                !detail::is_memset_fill<detail::arg_type<Fill>>) {
    static_assert(detail::check_operand<Name, "destination", void*, Dst>());
    if constexpr (!detail::is_memset_fill<detail::arg_type<Fill>>)
      static_assert(sizeof(node_operand_has_wrong_type<Name, "fill (1, 2 or 4 bytes)", unsigned,
                                                       Fill>) > 0);
    using body = detail::operands_after_error<detail::memset_body<void*, unsigned>, Dst, Fill>;
    return detail::node_t<Name, body>{body{{{}, nullptr, 0u, width, height, pitch_bytes}}};
  } else {
    using body = detail::memset_body<detail::stored_arg<void*, Dst>, Fill>;
    return detail::node_t<Name, body>{
        body{{}, detail::store_arg<void*>(dst), fill, width, height, pitch_bytes}};
  }
}

/// `count` elements set to `fill`; the element size is the fill's size.
template <fixed_string Name, class Dst, class Fill>
[[nodiscard]] constexpr decltype(auto) memset(const Dst& dst, const Fill& fill, std::size_t count) {
  return memset_2d<Name>(dst, 0, fill, count, 1);
}

namespace detail {

// ---------------------------------------------------------------- mem alloc --
template <fixed_string Buffer, class T>
struct alloc_body : leaf_body {
  static constexpr node_kind kind = node_kind::mem_alloc;
  static constexpr std::string_view allocates = Buffer.view();
  static constexpr std::array<ref_info, 1> refs{
      ref_info{ref_kind::buffer, name_hash(Buffer.view()), Buffer.view(), type_id_of<T>}};

  std::size_t count;
  int device;

  [[nodiscard]] constexpr std::size_t bytes() const noexcept { return count * sizeof(T); }

  struct storage {};
  /// slots[0]: the buffer's slot (its one reference).
  cudaGraphNode_t lower(storage&, lowering_state& st, const ref_slot* slots, cudaGraph_t g,
                        native::deps_span deps, std::string_view name) const {
    const native::allocation a = native::add_mem_alloc(g, deps, count * sizeof(T), device, name);
    const_cast<void**>(st.values.buffers)[slots[0]] = a.pointer;
    st.buffer_bytes[slots[0]] = count * sizeof(T);
    return a.node;
  }
  void update(storage&, lowering_state&, const ref_slot*, cudaGraphNode_t, native::param_target,
              std::string_view, param_hashes) const {}
  void write_spec(spec_writer& w, std::string_view name) const {
    w.mem_alloc(name, Buffer.view(), count * sizeof(T), device);
  }
};

}  // namespace detail

/// mem_alloc node Node's `count` elements of T are more bytes than
/// std::size_t holds. Not constexpr: in a constant declaration, calling it is
/// the compile error, its template arguments naming the node and the buffer;
/// at run time it throws cudag::error naming the node.
template <fixed_string Node, fixed_string Buffer, class T>
[[noreturn]] void allocation_size_overflows(std::size_t count) {
  cudag::detail::refuse_allocation_size({}, Node.view(), count, sizeof(T));
}

template <fixed_string Name, detail::named_buffer B>
[[nodiscard]] constexpr auto mem_alloc(B, std::size_t count, int device = -1) {
  using T = typename B::element_type;
  // Refused where declared: a wrapped size would allocate too little.
  if (cudag::detail::bytes_overflow(count, sizeof(T)))  // the builder's check too
    allocation_size_overflows<Name, B::name, T>(count);
  using body = detail::alloc_body<B::name, T>;
  return detail::node_t<Name, body>{body{{}, count, device}};
}

namespace detail {

template <fixed_string Buffer>
struct free_body : leaf_body {
  static constexpr node_kind kind = node_kind::mem_free;
  static constexpr std::string_view frees = Buffer.view();
  static constexpr std::array<ref_info, 1> refs{
      ref_info{ref_kind::buffer, name_hash(Buffer.view()), Buffer.view(), nullptr}};

  struct storage {};
  cudaGraphNode_t lower(storage&, lowering_state& st, const ref_slot* slots, cudaGraph_t g,
                        native::deps_span deps, std::string_view name) const {
    return native::add_mem_free(g, deps, st.values.buffers[slots[0]], name);
  }
  void update(storage&, lowering_state&, const ref_slot*, cudaGraphNode_t, native::param_target,
              std::string_view, param_hashes) const {}
  void write_spec(spec_writer& w, std::string_view name) const { w.mem_free(name, Buffer.view()); }
};

}  // namespace detail

template <fixed_string Name, detail::named_buffer B>
[[nodiscard]] constexpr auto mem_free(B) {
  return detail::node_t<Name, detail::free_body<B::name>>{};
}

}  // namespace cudag::dsl
