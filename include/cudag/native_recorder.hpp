#pragma once
// A stand-in for CUDA under the native seam (native_api.hpp): while a
// recorder lives, every native graph call cudag makes is written down as one
// line of text instead of reaching CUDA, with fake handles, so that lowering,
// instantiation, rebinding, updates and enabling run and can be checked on a
// machine without a GPU:
//
//   cudag::native::recorder rec;             // installed until destroyed
//   rec.name_kernel(&scale, "scale");        // argument bytes become readable
//   auto e = cudag::instantiate(spec, binds);
//   e.rebind("x", other);
//   // rec.calls(): "add_kernel_node n1 g1 deps=[] scale grid=(4,1,1) ..."
//
// Graphs can be read back as CUDA's getters read them (nodes, edges, each
// node's kind and parameters, a child node's graph, clones), so that
// capture into a graph and import run on the recorder too; a kernel's
// arguments are read back when it was named (name_kernel).
// A launch runs the exec's host callables (those of its top-level graph, in
// creation order, enabled ones only), so a test sees what each host node
// would see; kernels and copies do not run.
// It also injects faults (fail_call) and counts live handles and misuse (a
// graph destroyed twice, a handle of another table), for leak checks.
// One recorder at a time, on one thread; everything made while it is
// installed must be destroyed before it.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cudag/native_api.hpp"

namespace cudag::native {

class recorded_graphs;

class recorder {
 public:
  recorder();
  ~recorder();
  recorder(const recorder&) = delete;
  recorder& operator=(const recorder&) = delete;

  /// Shows `function` as `name` and its arguments as sized byte strings.
  void name_kernel(const void* function, std::string name, std::vector<std::size_t> param_sizes);
  template <class... P>
  void name_kernel(void (*function)(P...), std::string name) {
    name_kernel(reinterpret_cast<const void*>(function), std::move(name), {sizeof(P)...});
  }
  /// Shows a pointer (a buffer, an event, a stream) as `name` wherever it appears.
  void name_pointer(const void* pointer, std::string name);

  /// Every call since construction or clear(), one line each, in order: in
  /// a run repeated on a fresh recorder, fail_call(k) fails the call of line k.
  [[nodiscard]] const std::vector<std::string>& calls() const noexcept { return calls_; }
  /// The calls whose line starts with `function` (e.g. "add_", "exec_").
  [[nodiscard]] std::vector<std::string> calls_starting(std::string_view function) const;
  /// All calls, one per line.
  [[nodiscard]] std::string transcript() const;
  void clear() noexcept { calls_.clear(); }

  /// Makes the call `index` calls from now (0: the next one) fail with `code`.
  void fail_call(std::size_t index, cudaError_t code) noexcept;
  /// Makes the next call of `function` (a line's first word) fail with `code`.
  void fail_next(std::string_view function, cudaError_t code);
  /// The next whole-graph update is refused at `node` with `result`.
  void refuse_next_update(cudaGraphNode_t node, cudaGraphExecUpdateResult result) noexcept;
  /// Calls made through the seam since construction (failed ones included).
  [[nodiscard]] std::size_t call_count() const noexcept { return call_count_; }

  /// The host callable `exec` runs for host node `node` now: what a launch
  /// enqueued now calls (fn null where the exec runs none for that node).
  /// A test calls it after a rebind to see what a still pending launch sees.
  [[nodiscard]] cudaHostNodeParams host_call_of(cudaGraphExec_t exec, cudaGraphNode_t node) const;

  [[nodiscard]] std::size_t live_graphs() const noexcept;
  /// User objects with a reference left (their destructors not yet called).
  [[nodiscard]] std::size_t live_user_objects() const noexcept;
  [[nodiscard]] std::size_t live_execs() const noexcept;
  [[nodiscard]] std::size_t live_streams() const noexcept;
  /// Stream-ordered allocations (malloc_async) not yet freed (free_async).
  [[nodiscard]] std::size_t live_stream_allocations() const noexcept {
    return stream_allocations_.size();
  }
  /// Calls that CUDA would reject or that would crash it: destroying a
  /// handle that is not live, adding to a destroyed graph, a null output...
  [[nodiscard]] const std::vector<std::string>& misuse() const noexcept { return misuse_; }

  /// What exec `x` holds now, one line a node ("path function deps=[...]
  /// parameters attributes"), nodes named by position ("2/b0/1": the second
  /// node of the first body of the third node): instantiation, exec
  /// setters, child-graph setters and whole-graph updates change it as CUDA
  /// would. An exec setter on a node that is not a top-level node of the
  /// exec's graph, an update of another topology and an update of a memory
  /// or conditional node's parameters are refused, as CUDA refuses them.
  /// Two execs whose texts are equal would run the same work.
  [[nodiscard]] std::string exec_state(cudaGraphExec_t x) const;
  /// The same for a graph (template) as it is now.
  [[nodiscard]] std::string graph_state(cudaGraph_t g) const;

  /// Whether node `n` of exec `x` is enabled (as last set through the seam).
  [[nodiscard]] bool node_enabled(cudaGraphExec_t x, cudaGraphNode_t n) const;

  // ------------------------------------------------ device memory model --
  // What mem_get_info (cudaMemGetInfo) and device_get_graph_mem_attribute
  // answer, kept consistent as executable graphs come and go:
  //   free = total - taken_by_others - (each live exec's bytes) - reserved
  // An exec takes fixed + per_node x its nodes (nested ones included, a
  // cloned child's too; set_node_memory overrides per_node for one kind)
  // from instantiate until exec_destroy. Graph memory: the first upload or
  // launch of an exec maps the bytes of its mem_alloc nodes (their sum, the
  // nested ones included): used grows by them, reserved to at least used.
  // exec_destroy unmaps (used shrinks, reserved stays); device_graph_mem_trim
  // releases every reserved byte and unmaps every exec (nothing runs after
  // a recorder's launch returns, so nothing is in use), and the next upload
  // or launch maps again. Default: 80 GiB total, nothing taken, execs free.
  void set_device_memory(std::size_t total, std::size_t taken_by_others = 0) noexcept;
  void set_exec_memory(std::size_t fixed, std::size_t per_node) noexcept;
  /// What occupancy_max_active_blocks (any kernel, any block) and the
  /// multiprocessor count answer: a cooperative grid of more than their
  /// product blocks is refused at lowering. Default: 2 x 132.
  void set_occupancy(int blocks_per_multiprocessor, int multiprocessors) noexcept;
  /// Bytes per node of the kind added by `function` ("add_kernel_node",
  /// "add_node" for conditional and moved child nodes...).
  void set_node_memory(std::string_view function, std::size_t per_node);
  [[nodiscard]] std::size_t device_memory_free() const noexcept;
  /// Bytes the live executable graphs take (graph memory not included).
  [[nodiscard]] std::size_t exec_memory_in_use() const noexcept;
  /// Bytes modelled for exec `x` (0 for a handle that is not a live exec).
  [[nodiscard]] std::size_t exec_memory(cudaGraphExec_t x) const noexcept;
  /// Nodes counted for exec `x` (nested ones included).
  [[nodiscard]] std::size_t exec_nodes(cudaGraphExec_t x) const noexcept;
  /// The lowest device_memory_free() seen at an instantiate, upload or
  /// launch since construction or the last reset (the peak of use).
  [[nodiscard]] std::size_t device_memory_lowest_free() const noexcept { return lowest_free_; }
  void reset_lowest_free() noexcept { lowest_free_ = device_memory_free(); }
  [[nodiscard]] std::uint64_t graph_memory_reserved() const noexcept { return graph_reserved_; }
  [[nodiscard]] std::uint64_t graph_memory_used() const noexcept { return graph_used_; }

  struct impl;  ///< the seam's functions (native_recorder.cpp)

 private:
  friend struct impl;
  enum class handle_kind : std::uint8_t { graph, node, exec, stream, condition, event, user_object };
  enum class handle_state : std::uint8_t { live, owned_by_node, destroyed };
  struct handle_info {
    handle_kind kind;
    handle_state state;
    std::string label;
    std::uintptr_t owner;  ///< a node's graph
  };

  /// A fake handle; `label` (if given) names it instead of the next
  /// "g3"/"n7" of its kind, for handles CUDA makes unseen (a child node's
  /// own copy of its graph), so that the labels of the caller's handles
  /// do not depend on them.
  std::uintptr_t make_handle(handle_kind kind, std::uintptr_t owner = 0, std::string label = {});
  [[nodiscard]] std::string label(const void* handle) const;
  [[nodiscard]] bool is(const void* handle, handle_kind kind, bool must_be_live = true) const;
  /// Counts the call; returns the injected failure for it, or cudaSuccess.
  cudaError_t begin_call(std::string_view function);
  void record(std::string line) { calls_.push_back(std::move(line)); }
  void misuse(std::string what);

  const api_table* previous_ = nullptr;
  std::unique_ptr<recorded_graphs> graphs_;
  std::vector<std::string> calls_;
  std::vector<std::string> misuse_;
  std::map<std::uintptr_t, handle_info> handles_;
  std::map<const void*, std::pair<std::string, std::vector<std::size_t>>> kernels_;
  std::map<const void*, std::string> pointer_names_;
  std::map<const void*, std::size_t> graph_allocations_;  ///< base -> bytes of each mem_alloc node
  std::map<std::pair<std::uintptr_t, std::uintptr_t>, bool> enabled_;
  std::vector<cudaGraph_t> body_graphs_;  ///< the last conditional node's bodies
  /// Host callables: of each template node, and of each (exec, node) as
  /// instantiation, exec setters and whole-graph updates leave them.
  std::map<std::uintptr_t, cudaHostNodeParams> host_of_node_;
  std::map<std::pair<std::uintptr_t, std::uintptr_t>, cudaHostNodeParams> host_of_exec_;
  /// Streams being captured: the graph the capture builds, what the next
  /// captured work depends on.
  struct capture_state {
    cudaGraph_t graph;
    std::vector<cudaGraphNode_t> dependencies;
    bool into_existing = false;  ///< the caller's graph (stream_begin_capture_to_graph)
    /// Each dependency's edge data, as the caller set it (empty: all full).
    std::vector<cudaGraphEdgeData> edges;
  };
  /// (clone graph, original node) -> the node's copy (node_find_in_clone).
  std::map<std::pair<std::uintptr_t, std::uintptr_t>, std::uintptr_t> clone_nodes_;
  cudaStreamCaptureMode thread_capture_mode_ = cudaStreamCaptureModeGlobal;
  std::map<std::uintptr_t, capture_state> captures_;
  /// Per capture graph, the last piece of stream work captured into it.
  std::map<std::uintptr_t, std::uintptr_t> captured_work_;
  std::uintptr_t captured_work_count_ = 0;
  std::size_t counters_[7] = {};  ///< labels per handle kind
  /// User objects (created, not yet destroyed), and the references each
  /// graph and exec holds (an exec takes its graph's at instantiation).
  struct user_object {
    void* ptr;
    cudaHostFn_t destroy;
    unsigned refs;
  };
  std::map<std::uintptr_t, user_object> user_objects_;
  std::map<std::uintptr_t, std::vector<std::pair<std::uintptr_t, unsigned>>> retained_;
  /// Handles by owner (a graph's nodes, a node's bodies or moved child).
  std::map<std::uintptr_t, std::vector<std::uintptr_t>> members_;
  /// The memory model: each node's add function, a mem_alloc node's bytes,
  /// a cloned child's nodes and allocation bytes, each live exec's share.
  struct node_weight {
    std::string function;
    std::size_t alloc_bytes = 0;
    std::size_t clone_alloc_bytes = 0;
    std::map<std::string, std::size_t> clone_functions;
  };
  std::map<std::uintptr_t, node_weight> node_weights_;
  struct exec_memory_state {
    std::size_t bytes = 0;
    std::size_t nodes = 0;
    std::size_t graph_bytes = 0;
    bool mapped = false;
  };
  std::map<std::uintptr_t, exec_memory_state> exec_memory_;
  std::size_t device_total_ = std::size_t{80} << 30;
  std::size_t device_taken_ = 0;
  std::size_t exec_fixed_ = 0;
  int blocks_per_multiprocessor_ = 2;
  int multiprocessors_ = 132;
  std::size_t exec_per_node_ = 0;
  std::map<std::string, std::size_t, std::less<>> node_memory_;
  std::uint64_t graph_reserved_ = 0;
  std::uint64_t graph_used_ = 0;
  std::uint64_t graph_reserved_high_ = 0;
  std::uint64_t graph_used_high_ = 0;
  std::size_t lowest_free_ = std::size_t{80} << 30;
  std::size_t allocations_ = 0;
  std::set<const void*> stream_allocations_;
  std::size_t condition_handles_ = 0;
  std::map<std::uintptr_t, std::size_t> root_conditions_;  ///< handles made per top-level graph
  /// (top-level graph, handle) -> the default and flags it was made with.
  std::map<std::pair<std::uintptr_t, std::uint64_t>, std::string> condition_defaults_;
  std::size_t call_count_ = 0;
  std::size_t fail_at_ = static_cast<std::size_t>(-1);
  cudaError_t fail_code_ = cudaSuccess;
  std::string fail_function_;
  cudaError_t fail_function_code_ = cudaSuccess;
  cudaGraphNode_t refuse_node_ = nullptr;
  cudaGraphExecUpdateResult refuse_result_ = cudaGraphExecUpdateSuccess;
  std::uintptr_t next_handle_ = 0x1000;
};

}  // namespace cudag::native
