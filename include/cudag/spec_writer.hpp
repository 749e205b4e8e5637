#pragma once
// Writes a graph_spec node by node through functions compiled into the
// library. Generated front ends (the compile-time DSL's to_spec) call these
// instead of building the spec's containers themselves, so that a translation
// unit asking for a spec instantiates none of std::vector<node>, the node
// variant, their copies and destructors: that code is compiled once, here.
//
//   graph_spec spec;
//   spec_writer w(spec);
//   const value_view args[] = {value_view::param(type_of<float*>(), "x")};
//   w.kernel("scale", {.function = fn, .block = dim3(256), .args = args});
//   w.depend(1, "scale");
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "cudag/lean_std.hpp"
#include "cudag/spec.hpp"

namespace cudag {

/// One argument or operand, viewed: a literal's bytes or a reference by name.
/// Literal bytes are either borrowed (`bytes`) or held inline (small values
/// converted to their consumer's type).
struct value_view {
  enum class source_kind : unsigned char { literal, param, buffer, condition };

  type_tag type;
  source_kind source = source_kind::literal;
  std::string_view name;          ///< param, buffer or condition
  std::size_t offset_bytes = 0;   ///< buffer
  const void* bytes = nullptr;    ///< literal: type.size bytes, or null for `inline_bytes`
  alignas(8) std::byte inline_bytes[16] = {};

  [[nodiscard]] static value_view literal_at(type_tag type, const void* bytes) noexcept {
    value_view v;
    v.type = type;
    v.bytes = bytes;
    return v;
  }
  /// A literal small enough to be held inline (at most 16 bytes).
  template <class T>
  [[nodiscard]] static value_view literal_copy(const T& value) noexcept {
    static_assert(sizeof(T) <= sizeof(inline_bytes), "cudag: literal too large to hold inline");
    value_view v;
    v.type = type_of<T>();
    std::memcpy(v.inline_bytes, &value, sizeof(T));
    return v;
  }
  [[nodiscard]] static value_view named(type_tag type, source_kind source, std::string_view name,
                                        std::size_t offset_bytes = 0) noexcept {
    value_view v;
    v.type = type;
    v.source = source;
    v.name = name;
    v.offset_bytes = offset_bytes;
    return v;
  }
};

/// A shape rule, viewed: launch dimension `dim` = ceil(param * multiplier / divisor).
struct shape_rule_view {
  launch_dim dim = launch_dim::grid_x;
  std::string_view param;
  std::uint64_t multiplier = 1;
  std::uint64_t divisor = 1;
};

/// A kernel node's parameters, viewed.
struct kernel_view {
  const void* function = nullptr;
  std::string_view function_name;
  std::shared_ptr<const void> keep_alive;
  dim3 grid{1, 1, 1};
  std::string_view grid_param;      ///< non-empty: grid = ceil(param / items_per_block)
  unsigned items_per_block = 256;
  dim3 block{1, 1, 1};
  unsigned shared_bytes = 0;
  std::span<const shape_rule_view> shape_rules;  ///< applied after grid_param, in order
  std::span<const value_view> args;
  /// What the kernel declares about its pointer arguments beyond their
  /// types (kernel_node::accesses, cudag/memory_access.hpp).
  std::span<const access_declaration> accesses;
  /// kernel_node::synchronizes_grid_dependencies: the kernel calls
  /// cudaGridDependencySynchronize() before it reads its predecessors' writes.
  bool synchronizes_grid_dependencies = false;
  int priority = 0;
  launch_attributes attributes;  ///< beyond priority (cudag/launch_attributes.hpp)
};

class spec_writer {
 public:
  explicit spec_writer(graph_spec& target) noexcept : spec_(&target) {}

  void set_name(std::string_view graph_name);
  void reserve(std::size_t nodes);

  // Nodes, appended in order (node i is the i-th call).
  void kernel(std::string_view name, const kernel_view& k);
  void memcpy(std::string_view name, const value_view& dst, const value_view& src,
              std::size_t bytes, cudaMemcpyKind kind);
  void memset(std::string_view name, const value_view& dst, const value_view& fill,
              unsigned element_size, std::size_t width, std::size_t height, std::size_t pitch_bytes);
  /// `accesses`: what the node declares about its pointer arguments (none:
  /// it reads and writes every one, host_node::accesses).
  void host(std::string_view name, std::shared_ptr<const host_function> function,
            std::span<const value_view> args, std::span<const access_declaration> accesses = {});
  void captured(std::string_view name, std::shared_ptr<const capture_function> record,
                std::span<const value_view> args, std::string_view what,
                std::span<const access_declaration> accesses = {});
  void empty(std::string_view name);
  void event_record(std::string_view name, const value_view& event);
  void event_wait(std::string_view name, const value_view& event);
  void mem_alloc(std::string_view name, std::string_view buffer, std::size_t bytes, int device);
  void mem_free(std::string_view name, std::string_view buffer);
  /// A child graph node; returns a writer for the child graph (named "child").
  [[nodiscard]] spec_writer child(std::string_view name);
  /// A conditional node with `bodies` empty bodies (named "body").
  void conditional(std::string_view name, conditional_kind kind, std::string_view condition,
                   std::size_t bodies);
  /// A writer for body `index` of the last node, a conditional.
  [[nodiscard]] spec_writer body(std::size_t index);

  /// Node `node` (by position) depends on node `on` (by name).
  void depend(std::size_t node, std::string_view on);
  /// The same, an edge of kind `kind`. Kinds are kept as the builder keeps
  /// them: only once the node has an edge other than full (its earlier
  /// dependencies then listed as full).
  void depend(std::size_t node, std::string_view on, edge_kind kind);
  void param(std::string_view name, type_tag type);
  /// Declares a condition once (later declarations of the same name are ignored).
  void condition(std::string_view name, unsigned default_value, bool assign_default);

 private:
  node& append(std::string_view name);
  graph_spec* spec_;
};

/// A parameter's current value, viewed: its bytes as bound.
struct bound_value_view {
  std::string_view name;
  type_tag type;
  std::span<const std::byte> bytes;
};

/// check()'s race rule over `spec` with its parameters holding `values`
/// (pointer parameters bound to one address are one memory): throws
/// check_error with check()'s message for the first race. Compiled in the
/// library, so that a generated front end asking for it (the DSL exec's
/// rebind) reads none of check()'s headers.
void refuse_races_of_bound_values(const graph_spec& spec, std::span<const bound_value_view> values);

}  // namespace cudag
