#pragma once
// Layer 4: an instantiated graph built from a spec. Owns everything the CUDA
// graph points at; move-only; parameters rebound in place by name.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "cudag/arguments.hpp"
#include "cudag/bindings.hpp"
#include "cudag/device_graph.hpp"
#include "cudag/exec_core.hpp"
#include "cudag/resolved_graph.hpp"
#include "cudag/spec.hpp"

namespace cudag {



class exec {
 public:
  exec(exec&&) noexcept;
  exec& operator=(exec&&) noexcept;
  ~exec();

  void launch(cudaStream_t stream);
  void upload(cudaStream_t stream);
  /// Waits for `stream`, then rethrows a host node's exception (naming the node).
  void synchronize(cudaStream_t stream);
  [[nodiscard]] std::uint64_t replay_count() const noexcept;
  [[nodiscard]] std::string driver_dot(unsigned flags = cudaGraphDebugDotFlagsVerbose) const;

  /// Rebinds parameter `name` to `v` in every node that reads it. The type
  /// is checked against the declaration (run-time check). Safe while earlier
  /// launches run: they keep the values they were launched with.
  template <class T>
  rebind_path rebind(std::string_view name, const T& v) {
    return rebind_bytes(name, type_of<T>(), &v, sizeof(T));
  }
  rebind_path rebind(const binding& b) { return rebind_bytes(b.name, b.type, b.bytes.data(), b.bytes.size()); }
  /// Several parameters at once: one pass over the affected nodes.
  rebind_path rebind(std::span<const binding> bindings);
  rebind_path rebind_bytes(std::string_view name, const type_tag& type, const void* bytes,
                           std::size_t size);
  void set_rebind_policy(rebind_policy policy);

  /// Moves the exec to another shape of its family: rebinds the parameters
  /// its shape rules (and any other reader) follow, in one pass, choosing
  /// the cheaper path for launch changes (one whole-graph update once more
  /// than a few nodes change, exec setters below that; an explicit
  /// rebind policy wins). Refuses, naming the node, a shape CUDA cannot
  /// launch (a rule giving more blocks or threads than allowed).
  rebind_path reshape(std::span<const binding> shape);
  template <class... B>
    requires(sizeof...(B) > 0 && (std::is_convertible_v<const B&, const binding&> && ...))
  rebind_path reshape(const B&... shape) {
    const binding all[] = {shape...};
    return reshape(std::span<const binding>(all));
  }

  /// Moves the executable graph to `changed`, a spec of the same topology
  /// (the same node names, kinds and edges, whatever order they were
  /// declared in: nodes pair by name) with other values, launch dimensions,
  /// kernels or callables. Only the nodes whose resolved values changed are
  /// sent to CUDA, by exec setters or one whole-graph update as a rebind
  /// would be. A topology change, or a change CUDA cannot make in place, is
  /// refused before anything changes: cudag::error naming the node.
  void update(const graph_spec& changed, std::span<const binding> bindings);
  /// update(), or, where CUDA refuses, a fresh instantiation. Returns true
  /// when it had to re-instantiate.
  bool update_or_reinstantiate(const graph_spec& changed, std::span<const binding> bindings);

  /// Another executable graph of the same graph with its own parameter
  /// values: `bindings` override this exec's current values. The template
  /// is instantiated again, not lowered again (each node's values are set
  /// on it first); both execs then rebind and update independently. A
  /// graph holding mem_alloc, mem_free or conditional nodes (CUDA allows
  /// one executable graph of such a template at a time) or a captured node
  /// inside a child graph is lowered anew instead.
  [[nodiscard]] exec instance(std::span<const binding> bindings);

  /// Enables or disables a kernel, memset or memcpy node by name.
  void set_enabled(std::string_view node, bool enabled);
  [[nodiscard]] bool enabled(std::string_view node) const;

  /// The device address of graph-owned buffer `name`: the buffer of a
  /// mem_alloc node, "stage/buffer" inside child graph 'stage'. Fixed for
  /// the life of this exec; its contents are there between the allocating
  /// node and the freeing one (or, without a free node in the graph, after
  /// the launch until the program frees it). Throws, naming the graph, for
  /// a name no mem_alloc node produces.
  [[nodiscard]] void* buffer_address(std::string_view name) const;
  /// buffer_address() typed as the builder's handle, its offset applied. A
  /// view past the end of the allocation (one past its last element is the
  /// farthest) is refused, naming the buffer, rather than handed out.
  template <class T>
  [[nodiscard]] T* buffer(const buffer_handle<T>& b) const {
    return static_cast<T*>(buffer_view(b.name, b.offset, sizeof(T)));
  }

  /// The address `offset` elements of `element_bytes` into buffer `name`;
  /// throws, naming the buffer, past the end of its allocation.
  [[nodiscard]] void* buffer_view(std::string_view name, std::size_t offset,
                                  std::size_t element_bytes) const;

  /// The CUDA node created for a top-level node of the spec.
  [[nodiscard]] cudaGraphNode_t node_handle(std::string_view node) const;
  [[nodiscard]] const graph_spec& spec() const;
  /// Null for a moved-from exec; every other member throws cudag::error on one.
  [[nodiscard]] cudaGraphExec_t native_exec() const noexcept;
  /// The exec as device code launches it (cudag/device_graph.hpp): pass it
  /// to a kernel of another graph, or of this one. Throws unless
  /// instantiated with instantiate_options::device_launch. A
  /// re-instantiation (update_or_reinstantiate) makes another handle: rebind
  /// it where it was passed.
  [[nodiscard]] device_graph device_handle() const;
  [[nodiscard]] cudaGraph_t native_graph() const noexcept;
  [[nodiscard]] exec_core& core();

  /// Nodes (by path) that read parameter `name`.
  [[nodiscard]] std::vector<std::string> readers_of(std::string_view name) const;

  struct impl;

 private:
  explicit exec(std::unique_ptr<impl> state);
  [[nodiscard]] impl& live() const;
  void adopt(std::unique_ptr<impl> fresh, std::vector<std::shared_ptr<const void>> owned);
  void stage(std::string_view name, const type_tag& type, const void* bytes, std::size_t size,
             std::string_view caller = "rebind");
  rebind_path flush_dirty();
  /// flush_dirty() where `launch_changes` top-level kernel nodes changed
  /// their launch: under the automatic policy, reshape's choice of path.
  rebind_path flush_dirty_after_launch_changes(std::size_t launch_changes);
  friend exec instantiate(graph_spec, std::span<const binding>, const instantiate_options&);
  friend exec instantiate(resolved_graph, std::span<const binding>, const instantiate_options&);
  std::unique_ptr<impl> impl_;
};

/// Checks `spec` with its bindings, lowers it and instantiates it.
[[nodiscard]] exec instantiate(graph_spec spec, std::span<const binding> bindings,
                               const instantiate_options& options = {});
/// The same for a resolved graph (builder::resolve(), resolve()): its
/// top-level names are not looked up again.
[[nodiscard]] exec instantiate(resolved_graph graph, std::span<const binding> bindings,
                               const instantiate_options& options = {});

/// A graph lowered without instantiation (for capture/import, children and
/// tests): the CUDA graph, the name of every created node, and the objects
/// the graph points at. The CUDA graph also keeps those objects alive by
/// itself (cudag/retained.hpp): it, and any exec instantiated from it, stays
/// valid after `owned` is dropped (take the graph with graph.release()).
struct lowered_graph {
  unique_graph graph;
  std::vector<std::pair<std::string, cudaGraphNode_t>> nodes;  ///< top level, creation order
  std::vector<std::shared_ptr<const void>> owned;
};
[[nodiscard]] lowered_graph lower(const graph_spec& spec, std::span<const binding> bindings);
[[nodiscard]] lowered_graph lower(const resolved_graph& graph, std::span<const binding> bindings);

/// A spec's nodes added to a stream capture in progress, and what they
/// point at. The captured graph keeps those objects alive by itself too
/// (cudag/retained.hpp), and so does every exec instantiated from it.
struct graph_in_capture {
  std::vector<std::pair<std::string, cudaGraphNode_t>> nodes;  ///< top level, creation order
  std::vector<std::shared_ptr<const void>> owned;
  std::shared_ptr<host_failure_sink> host_failures;  ///< where the spec's host nodes report
};
/// Adds `spec` (checked with `bindings`) to the graph being captured on
/// `stream`, in place: its roots depend on the work captured so far and the
/// stream's later work depends on its leaves. Unlike a child-graph node it
/// keeps conditional nodes, which CUDA cannot clone into a child. Throws,
/// naming the graph, if the stream is not capturing.
[[nodiscard]] graph_in_capture add_to_capture(cudaStream_t stream, const graph_spec& spec,
                                              std::span<const binding> bindings);

}  // namespace cudag
