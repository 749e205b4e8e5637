#pragma once
// Internal: what lowering produces and exec keeps. Every lowered node has a
// node_state with the native parameters last given to CUDA (CUDA 13 has no
// getters), so that a rebind patches bytes and calls one setter.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "../check/checked_plan.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_nodes.hpp"
#include "cudag/rebind.hpp"

namespace cudag::detail {

/// Heterogeneous lookup: find by string_view without building a std::string.
struct string_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};
template <class V>
using name_map = std::unordered_map<std::string, V, string_hash, std::equal_to<>>;

/// Where a parameter's bytes land in a node: argument `slot` of node `node`.
struct param_use {
  std::uint32_t node;
  std::uint32_t slot;  ///< index into node_state::values; grid_slot for a grid rule
  std::size_t offset_bytes = 0;  ///< an external buffer read at an offset
};
inline constexpr std::uint32_t grid_slot = 0xFFFFFFFFu;
/// The pointer a mem_free node frees (an external buffer): CUDA cannot change it.
inline constexpr std::uint32_t freed_slot = 0xFFFFFFFEu;

/// The bytes of every resolved value of a lowered graph, in one block sized
/// before lowering starts, so that pointers into it (kernelParams) stay
/// valid and lowering makes no allocation per value.
class value_storage {
 public:
  /// Sizes the storage for `slots` values in `bytes` (checked_plans' counts).
  void reserve(std::uint32_t slots, std::size_t bytes);
  /// Room for `count` values; returns the first of `count` consecutive slots.
  std::uint32_t take_slots(std::uint32_t count) {
    if (slots_used_ + count > slots_.size()) [[unlikely]]
      refuse_overflow();
    const std::uint32_t first = slots_used_;
    slots_used_ += count;
    return first;
  }
  /// Places `size` bytes for slot `slot` and returns where they go. Inline:
  /// lowering calls it for every value of every node.
  void* place(std::uint32_t slot, std::size_t size) {
    const std::size_t offset = bytes_used_;
    if (offset + size > bytes_.size()) [[unlikely]]
      refuse_overflow();
    bytes_used_ = offset + check_detail::value_room(size, 0);
    slots_[slot] = bytes_.data() + offset;
    sizes_[slot] = static_cast<std::uint32_t>(size);
    return slots_[slot];
  }
  [[nodiscard]] void** slots(std::uint32_t first) noexcept { return slots_.data() + first; }
  [[nodiscard]] const std::uint32_t* sizes(std::uint32_t first) const noexcept {
    return sizes_.data() + first;
  }
  /// The index of the slot `slots` points at (a node's first slot).
  [[nodiscard]] std::uint32_t index_of(void* const* slots) const noexcept {
    return static_cast<std::uint32_t>(slots - slots_.data());
  }
  /// A copy whose slots point into its own bytes.
  [[nodiscard]] value_storage copy() const;

 private:
  /// The storage was sized from a count that missed a value: a bug of
  /// cudag's, reported rather than written past.
  [[noreturn]] static void refuse_overflow();
  std::vector<std::byte> bytes_;
  std::vector<void*> slots_;
  std::vector<std::uint32_t> sizes_;
  std::size_t bytes_used_ = 0;
  std::uint32_t slots_used_ = 0;
};

struct param_state {
  std::string name;
  type_tag type;
  std::vector<std::byte> bytes;  ///< current value
  bool bound = false;
  std::vector<param_use> uses;
  bool external_buffer = false;  ///< declared as a buffer the graph did not allocate
};

/// Parameter `name`, or null. A graph has few parameters, each read by many
/// nodes: comparing names beats hashing them, up to a handful of parameters.
/// Shared by lowering and rebinding.
[[nodiscard]] inline param_state* find_param(std::vector<param_state>& params,
                                             const name_map<std::uint32_t>& index,
                                             std::string_view name) {
  if (params.size() <= 8) {
    for (param_state& p : params)
      if (p.name == name) return &p;
    return nullptr;
  }
  const auto it = index.find(name);
  return it == index.end() ? nullptr : &params[it->second];
}

/// A lowered node and the native parameters CUDA last received for it.
struct node_state {
  std::string path;  ///< "name" at top level, "parent/name" when nested
  node_kind kind = node_kind::empty;
  const node* spec_node = nullptr;  ///< points into exec's own spec copy
  cudaGraphNode_t handle = nullptr;
  bool nested = false;  ///< inside a child graph or conditional body
  bool dirty = false;
  /// Where this kernel's launch-rule parameters start in
  /// exec::impl::launch_rule_params (a kernel whose launch follows one).
  std::uint32_t first_launch_rule_param = 0;
  /// Kernels whose launches follow the same rules from the same base launch
  /// share a group (numbered from 1): a reshape computes one launch a group.
  std::uint32_t launch_group = 0;

  // Resolved values (kernel/host/captured args, memcpy dst+src, memset
  // dst+fill, event): slots[k] points at value k's bytes in value_storage,
  // slot_sizes[k] is its size. A kernel's kernelParams is `slots`.
  void** slots = nullptr;
  const std::uint32_t* slot_sizes = nullptr;
  std::uint32_t slot_count = 0;

  cudaKernelNodeParams kernel{};  ///< memcpy and memset parameters are made from the slots when sent
  void* allocation = nullptr;  ///< a mem_alloc node's device address
  std::shared_ptr<native::host_call> host;  ///< current host callable state
  unique_graph captured;  ///< a captured node's latest recording (the exec runs a clone)
};


// Helpers shared by lowering and rebinding.
[[nodiscard]] void* pointer_at(const node_state& st, std::size_t slot);
[[nodiscard]] cudaEvent_t event_at(const node_state& st);
[[nodiscard]] cudaMemsetParams memset_params_of(const node_state& st, const memset_node& p);
[[nodiscard]] cudaMemcpy3DParms memcpy_params_of(const node_state& st, const memcpy_node& p);
/// An integral parameter's current bytes and whether its type is signed:
/// what a launch rule reads.
struct integral_param {
  std::span<const std::byte> bytes;
  bool is_signed = true;
};
[[nodiscard]] inline integral_param integral_param_of(const param_state& p) noexcept {
  return {p.bytes, p.type.is_signed};
}
template <class Signed, class Unsigned>
[[nodiscard]] std::int64_t read_integral(const std::byte* bytes, bool is_signed) noexcept {
  if (is_signed) {
    Signed v;
    std::memcpy(&v, bytes, sizeof v);
    return v;
  }
  Unsigned v;
  std::memcpy(&v, bytes, sizeof v);
  return native::shape_rule_input(v);
}
/// The value of an integral parameter's bytes (1, 2, 4 or 8 of them), read
/// with its type's signedness. An unsigned value above 2^63 - 1 reads as
/// 2^63 - 1, as native::shape_rule_input reads it. Inline: a reshape reads
/// one for every node that follows a parameter (out of line, the 24-byte
/// argument goes through the stack).
[[nodiscard]] inline std::int64_t integral_value(integral_param value) noexcept {
  const std::byte* b = value.bytes.data();
  switch (value.bytes.size()) {
    case 1: return read_integral<std::int8_t, std::uint8_t>(b, value.is_signed);
    case 2: return read_integral<std::int16_t, std::uint16_t>(b, value.is_signed);
    case 4: return read_integral<std::int32_t, std::uint32_t>(b, value.is_signed);
    default: return read_integral<std::int64_t, std::uint64_t>(b, value.is_signed);
  }
}
/// What shape rules set: a kernel node's grid, block and shared bytes.
struct launch_shape {
  dim3 gridDim;
  dim3 blockDim;
  unsigned sharedMemBytes = 0;
};

/// Sets `launch`'s grid, block and shared bytes from kernel node `p`: its
/// literal dimensions, then its grid rule and shape rules with each
/// parameter's bytes from `value_of(k, name)`, k counting the node's rules
/// (its grid rule first) so that a caller may keep them resolved by index.
/// Throws, naming the node, where a rule gives more than CUDA allows. Inline: a reshape computes it for every
/// node that follows a parameter.
template <class Launch, class ValueOf>
void apply_launch_rules(Launch& launch, const kernel_node& p, const std::string& path,
                        ValueOf&& value_of) {
  launch.gridDim = p.grid;
  launch.blockDim = p.block;
  launch.sharedMemBytes = p.shared_bytes;
  std::size_t k = 0;
  if (p.grid_from) {
    const std::int64_t n = integral_value(value_of(k++, p.grid_from->param));
    launch.gridDim = dim3(native::blocks_for(static_cast<std::uint64_t>(n < 0 ? 0 : n),
                                             p.grid_from->items_per_block),
                          1, 1);
  }
  for (const shape_rule& r : p.shape_rules) {
    const std::int64_t value = integral_value(value_of(k++, r.param));
    const native::launch_extent e = native::shape_rule_extent(r.dim, value, r.multiplier, r.divisor);
    if (!e.fits) refuse_launch_rule(path, r, value, native::launch_limit(r.dim));
    native::launch_dimension(launch, r.dim) = e.value;
  }
  if (!p.shape_rules.empty() &&
      !native::block_fits(launch.blockDim.x, launch.blockDim.y, launch.blockDim.z))
    refuse_launch_block(path, launch.blockDim);
  // A cooperative grid that follows a parameter is judged at every shape.
  if (p.cooperative && (p.grid_from || !p.shape_rules.empty()))
    native::check_cooperative_grid(p.function, launch.gridDim, launch.blockDim, launch.sharedMemBytes,
                                   path);
}
[[nodiscard]] std::shared_ptr<native::host_call> make_host_call(
    const node_state& st, const host_node& p, const std::shared_ptr<host_failure_sink>& failures);
/// Records a captured node's work (with its current values) into a new graph.
[[nodiscard]] unique_graph record_captured(const node_state& st, const captured_node& p,
                                           cudaStream_t stream);

/// What lowering reads and writes besides the spec: the bound parameters
/// (their uses are recorded), the node states and value storage it fills,
/// what the graph points at (`owned`), where host nodes report, and the
/// stream that records captured nodes (made on first use). Whoever lowers
/// (instantiate, update, lower(), add_to_capture(), an eager run) owns them.
struct lowering_target {
  std::vector<param_state>& params;
  const name_map<std::uint32_t>& param_index;
  std::vector<node_state>& nodes;
  value_storage& storage;
  std::vector<std::shared_ptr<const void>>& owned;
  const std::shared_ptr<host_failure_sink>& failures;
  unique_stream& capture_stream;
};

/// Lowers `spec` (checked: `plans` are check_and_plan's) into `graph`. The
/// top-level graph's roots depend on `root_dependencies` (nodes of `graph`:
/// a capture's current dependencies).
void lower_into(const graph_spec& spec, const check_detail::checked_plans& plans, cudaGraph_t graph,
                const lowering_target& into, std::span<const cudaGraphNode_t> root_dependencies = {});

/// Runs `spec` (checked) without a graph: each node, in the order lowering
/// would create it, as stream work on `stream` (run_kernel, run_memcpy...).
/// Returns the stream-ordered allocations no free node freed. A
/// conditional node, or a value reading a condition, throws naming the node.
std::vector<void*> run_into_stream(const graph_spec& spec, const check_detail::checked_plans& plans,
                                   cudaStream_t stream, const lowering_target& into);

/// Sets the node's native parameters from its resolved values. `on_exec`:
/// the executable graph's node (exec setters), else the template graph's.
void push_node_params(node_state& n, cudaGraphExec_t on_exec, unique_stream& capture_stream,
                      retired_objects& retired,
                      const std::shared_ptr<host_failure_sink>& failures);

/// Builds the parameter table from the spec's declarations (all levels) and
/// the bindings (already checked).
void bind_params(const graph_spec& spec, std::span<const binding> bindings,
                 std::vector<param_state>& params, name_map<std::uint32_t>& index);

/// The values an exec::update replaced on the exec's nodes, kept until CUDA
/// took the update: a refused one puts them back (through the rebind's
/// restore_values, which then sends them again where they may have gone).
struct update_undo {
  std::vector<const node*> spec_nodes;  ///< every node's, by index
  struct changed_node {
    std::uint32_t index;
    std::vector<std::byte> slots;  ///< the node's slot bytes, one after another
    cudaKernelNodeParams kernel;
  };
  std::vector<changed_node> changed;

  void save(const node_state& n, std::uint32_t index);
  void restore(std::vector<node_state>& nodes) const noexcept;
};

}  // namespace cudag::detail

namespace cudag {
struct exec::impl {
  graph_spec spec;
  instantiate_options options;
  exec_core core;
  std::vector<detail::param_state> params;
  detail::name_map<std::uint32_t> param_index;
  std::vector<detail::node_state> nodes;          ///< every lowered node, nested ones too
  detail::value_storage values;                   ///< what node_state::slots point at
  detail::name_map<std::uint32_t> top_level_index;  ///< top-level name -> nodes index
  unique_stream capture_stream;           ///< for re-recording captured nodes
  std::vector<std::uint32_t> dirty_scratch;  ///< reused by rebind: no allocation after warm-up
  std::vector<detail::launch_shape> launch_scratch;  ///< launches a rebind computes before applying
  /// The rebind in progress, to be put back whole if it is refused: each
  /// parameter it changed (index into `params`) and where its bytes before
  /// the rebind lie in `undo_bytes`.
  struct staged_param {
    std::uint32_t param;
    std::uint32_t offset;
  };
  std::vector<staged_param> staged;
  std::vector<std::byte> undo_bytes;
  bool staged_launches = false;  ///< a staged parameter sets launch dimensions
  /// The update being sent, if any (what a refusal puts back).
  const detail::update_undo* update_in_flight = nullptr;
  /// Each launch rule's parameter as an index into `params`, by node
  /// (node_state::first_launch_rule_param), in apply_launch_rules' order:
  /// a reshape reads them without comparing names. Built on first use and
  /// again after the spec changes.
  std::vector<std::uint32_t> launch_rule_params;
  /// Whether any node is nested (changed only by a whole-graph update) or
  /// a top-level captured node: a rebind asks node by node only then.
  bool any_nested = false;
  bool any_top_level_captured = false;
  /// launch_rule_params, the launch groups and the two flags above are
  /// current (cleared by update(), which makes the nodes anew).
  bool rebind_index_built = false;
  rebind_state rebind;
};
}  // namespace cudag
