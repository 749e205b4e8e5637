#pragma once
// The plain-data description of a CUDA graph that every front end produces
// and every later layer (check, lower, exec, dot) consumes. No CUDA calls here:
// only CUDA's plain types (dim3, cudaEvent_t, cudaMemcpyKind).
//
// Scoping: a child graph's or a conditional body's nodes may use the
// parameters, buffers and conditions of every enclosing graph; node names are
// unique within one graph (bodies and children have their own namespace).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cudag/launch_attributes.hpp"
#include "cudag/lean_std.hpp"
#include "cudag/literal_bytes.hpp"
#include "cudag/memory_access.hpp"
#include "cudag/small_vector.hpp"
#include "cudag/type_tag.hpp"

namespace cudag {

// ---------------------------------------------------------------- values --
/// A value known when the spec is written (bytes of the consumer's type).
struct literal {
  literal_bytes bytes;
  friend bool operator==(const literal&, const literal&) = default;
};
/// The value of a named graph parameter, bound at instantiation.
struct param_ref {
  std::string name;
  friend bool operator==(const param_ref&, const param_ref&) = default;
};
/// The device pointer a mem-alloc node produced, plus a byte offset.
struct buffer_ref {
  std::string name;
  std::size_t offset_bytes = 0;
  friend bool operator==(const buffer_ref&, const buffer_ref&) = default;
};
/// The cudaGraphConditionalHandle of a named condition.
struct condition_ref {
  std::string name;
  friend bool operator==(const condition_ref&, const condition_ref&) = default;
};

/// One argument position: the type its consumer expects, and where the value
/// comes from. A literal already holds bytes of `type`.
struct value {
  type_tag type;
  std::variant<literal, param_ref, buffer_ref, condition_ref> source;

  friend bool operator==(const value&, const value&) = default;
};

template <class T>
[[nodiscard]] value make_literal(const T& v) {
  return value{type_of<T>(), literal{literal_bytes(&v, sizeof(T))}};
}

// ----------------------------------------------------------------- nodes --
/// Grid computed from an integral parameter: ceil(param / items_per_block)
/// blocks in x, so that rebinding the size also resizes the launch.
struct grid_rule {
  std::string param;
  unsigned items_per_block = 256;
  friend bool operator==(const grid_rule&, const grid_rule&) = default;
};

/// The launch dimension of a kernel node that a shape rule sets.
enum class launch_dim : unsigned char {
  grid_x,
  grid_y,
  grid_z,
  block_x,
  block_y,
  block_z,
  shared_bytes
};
[[nodiscard]] std::string_view launch_dim_name(launch_dim dim) noexcept;

/// A launch dimension that follows an integral parameter (a shape family's
/// batch size or sequence length): ceil(param * multiplier / divisor),
/// computed at lowering and again whenever the parameter is rebound, so
/// that one executable graph serves every shape.
struct shape_rule {
  launch_dim dim = launch_dim::grid_x;
  std::string param;
  std::uint64_t multiplier = 1;
  std::uint64_t divisor = 1;
  friend bool operator==(const shape_rule&, const shape_rule&) = default;
};

/// What a node declares about its arguments' memory (none: what their types
/// say, memory_access.hpp).
using access_declarations = small_vector<access_declaration, 1>;

/// "argument 1 read; argument 2 concurrent, 512 bytes", or "none".
[[nodiscard]] std::string describe_access_declarations(const access_declarations& declared);

/// A kernel's arguments: the first few held in the node itself (most
/// kernels take few), more on the heap.
using kernel_arguments = small_vector<value, 3>;

struct kernel_node {
  const void* function = nullptr;  ///< host stub address or cudaKernel_t
  std::string function_name;       ///< for messages and pictures
  dim3 grid{1, 1, 1};
  dim3 block{1, 1, 1};
  unsigned shared_bytes = 0;
  kernel_arguments args;           ///< one per kernel parameter, in order
  std::optional<grid_rule> grid_from;
  std::vector<shape_rule> shape_rules;  ///< applied after grid_from, in order
  int priority = 0;                ///< used when instantiated with node priorities
  /// Launch attributes, each sent to CUDA after the node is added (none
  /// sent while it keeps its default). A thread-block cluster of
  /// cluster.x * cluster.y * cluster.z blocks (0x0x0: none); check()
  /// requires it to divide the grid and to hold at most 8 blocks.
  dim3 cluster{0, 0, 0};
  bool cooperative = false;  ///< cudaLaunchAttributeCooperative
  /// cudaLaunchAttributeMemSyncDomain: the memory-synchronisation domain.
  cudaLaunchMemSyncDomain mem_sync_domain = cudaLaunchMemSyncDomainDefault;
  /// cudaLaunchAttributePreferredSharedMemoryCarveout, in percent of the
  /// unified cache given to shared memory (0-100); -1: none.
  int shared_carveout = -1;
  /// cudaLaunchAttributeAccessPolicyWindow: how the L2 cache keeps one
  /// address range (bytes 0: none).
  access_policy_window access_policy;
  /// The kernel calls cudaGridDependencySynchronize() before it reads what
  /// its predecessors wrote: only then may a programmatic or
  /// launch-completion edge lead into it (check() refuses one otherwise).
  bool synchronizes_grid_dependencies = false;
  std::shared_ptr<const void> keep_alive;  ///< e.g. the run-time compiled module
  /// How it touches what its pointer arguments point at, where that is not
  /// what their types say (memory_access.hpp); the race check reads it.
  access_declarations accesses;
};

/// Whether kernel node `k` runs in thread-block clusters.
[[nodiscard]] inline bool has_cluster(const kernel_node& k) noexcept {
  return k.cluster.x != 0 || k.cluster.y != 0 || k.cluster.z != 0;
}

/// Whether kernel node `k` has any launch attribute beyond priority (what an
/// eager run cannot send, what lowering sends).
[[nodiscard]] inline bool has_launch_attributes(const kernel_node& k) noexcept {
  return has_cluster(k) || k.cooperative || k.mem_sync_domain != cudaLaunchMemSyncDomainDefault ||
         k.shared_carveout != -1 || k.access_policy.bytes != 0;
}

/// Whether the launch attributes beyond priority (cluster, cooperative,
/// memory-sync domain, shared-memory carveout, access-policy window) of `a`
/// and `b` are alike.
[[nodiscard]] inline bool same_launch_attributes(const kernel_node& a, const kernel_node& b) noexcept {
  return a.cluster.x == b.cluster.x && a.cluster.y == b.cluster.y && a.cluster.z == b.cluster.z &&
         a.cooperative == b.cooperative && a.mem_sync_domain == b.mem_sync_domain &&
         a.shared_carveout == b.shared_carveout && a.access_policy == b.access_policy;
}

/// Kernel node `k`'s launch attributes beyond priority.
[[nodiscard]] inline launch_attributes attributes_of(const kernel_node& k) noexcept {
  return launch_attributes{k.cluster, k.cooperative, k.mem_sync_domain, k.shared_carveout, k.access_policy};
}

/// Sets kernel node `k`'s launch attributes beyond priority to `a`.
inline void set_launch_attributes(kernel_node& k, const launch_attributes& a) noexcept {
  k.cluster = a.cluster;
  k.cooperative = a.cooperative;
  k.mem_sync_domain = a.mem_sync_domain;
  k.shared_carveout = a.shared_carveout;
  k.access_policy = a.access_policy;
}

/// "cluster 2x1x1, cooperative, memory-sync domain remote, shared carveout
/// 50%", or "none": the launch attributes same_launch_attributes compares.
[[nodiscard]] std::string describe_launch_attributes(const kernel_node& k);
/// "4096 bytes at 0x7f00..., persisting for 0.5 of it, else streaming", or "none".
[[nodiscard]] std::string describe_access_policy(const access_policy_window& w);

struct memcpy_node {
  value dst;  ///< void*
  value src;  ///< const void*
  std::size_t bytes = 0;
  cudaMemcpyKind kind = cudaMemcpyDefault;
};

/// memset of `height` rows of `width` elements of `element_size` (1, 2 or 4)
/// bytes, rows `pitch_bytes` apart (pitch ignored when height == 1).
struct memset_node {
  value dst;        ///< void*
  value fill;       ///< unsigned int; only the low element_size bytes are used
  unsigned element_size = 4;
  std::size_t width = 0;
  std::size_t height = 1;
  std::size_t pitch_bytes = 0;
};

/// A host callable: receives one pointer per argument, each to a value of
/// the argument's type. The builder wraps typed callables into this form.
using host_function = std::function<void(std::span<const void* const> args)>;

struct host_node {
  std::shared_ptr<const host_function> function;
  std::vector<value> args;
  access_declarations accesses;  ///< none: reads and writes every pointer argument
};

/// Work recorded by stream capture into a child graph (library calls such as
/// cuBLAS). Re-recorded when one of its arguments is rebound.
using capture_function =
    std::function<void(cudaStream_t stream, std::span<const void* const> args)>;

struct captured_node {
  std::shared_ptr<const capture_function> record;
  std::vector<value> args;
  std::string what;  ///< short description for pictures ("cublasSgemm 64x64x64")
  access_declarations accesses;  ///< none: reads and writes every pointer argument
};

struct graph_spec;

struct child_node {
  std::shared_ptr<const graph_spec> graph;
};

struct empty_node {};

struct event_record_node {
  value event;  ///< cudaEvent_t
};

struct event_wait_node {
  value event;  ///< cudaEvent_t
};

/// Allocates `bytes` of device memory owned by the graph, named `buffer`.
struct mem_alloc_node {
  std::string buffer;
  std::size_t bytes = 0;
  int device = -1;  ///< -1: the device current at lowering
};

struct mem_free_node {
  std::string buffer;
};

enum class conditional_kind { if_then, if_else, while_loop, switch_case };

/// if_then: one body; if_else: two (taken when the condition is non-zero,
/// then when it is zero); while_loop: one; switch_case: one per case value.
struct conditional_node {
  conditional_kind kind = conditional_kind::if_then;
  std::string condition;
  std::vector<graph_spec> bodies;
};

using node_params =
    std::variant<kernel_node, memcpy_node, memset_node, host_node, child_node, captured_node,
                 empty_node, event_record_node, event_wait_node, mem_alloc_node, mem_free_node,
                 conditional_node>;

/// Index order of node_params' alternatives.
enum class node_kind {
  kernel,
  memcpy,
  memset,
  host,
  child,
  captured,
  empty,
  event_record,
  event_wait,
  mem_alloc,
  mem_free,
  conditional
};

[[nodiscard]] constexpr std::string_view kind_name(node_kind kind) noexcept {
  switch (kind) {
    case node_kind::kernel: return "kernel";
    case node_kind::memcpy: return "memcpy";
    case node_kind::memset: return "memset";
    case node_kind::host: return "host";
    case node_kind::child: return "child";
    case node_kind::captured: return "captured";
    case node_kind::empty: return "empty";
    case node_kind::event_record: return "event_record";
    case node_kind::event_wait: return "event_wait";
    case node_kind::mem_alloc: return "mem_alloc";
    case node_kind::mem_free: return "mem_free";
    case node_kind::conditional: return "conditional";
  }
  return "unknown";
}

/// CUDA's rule for conditional bodies: kernel, memcpy, memset, empty, child
/// (captured work is a child) and conditional nodes; no host, event or
/// memory alloc/free nodes. One rule for the run-time checks and the DSL.
[[nodiscard]] constexpr bool allowed_in_conditional_body(node_kind kind) noexcept {
  return kind != node_kind::host && kind != node_kind::event_record &&
         kind != node_kind::event_wait && kind != node_kind::mem_alloc &&
         kind != node_kind::mem_free;
}
/// CUDA's rule for a graph instantiated for device launch
/// (cudaGraphInstantiateFlagDeviceLaunch): kernel, memcpy, memset and child
/// nodes (captured work is a child, judged by CUDA at instantiation); no
/// empty, host, event, memory alloc/free or conditional node, at any depth.
/// Measured on an H200 with CUDA 13.0: CUDA refuses each of those
/// (cudaErrorInvalidValue), and accepts cooperative kernels and
/// programmatic edges.
[[nodiscard]] constexpr bool allowed_in_device_launchable_graph(node_kind kind) noexcept {
  return kind == node_kind::kernel || kind == node_kind::memcpy || kind == node_kind::memset ||
         kind == node_kind::child || kind == node_kind::captured;
}
[[nodiscard]] std::string_view kind_name(conditional_kind kind) noexcept;

/// A node's dependencies by name: the first held in the node itself (most
/// nodes have one), more on the heap.
using dependency_names = small_vector<std::string, 1>;

/// How a dependency orders its two nodes: CUDA's edge data (the upstream
/// node's outgoing port and the dependency's type, cudaGraphEdgeData).
enum class edge_kind : unsigned char {
  /// The downstream node starts once the upstream node has completed, its
  /// writes visible (CUDA's default edge).
  full,
  /// Between kernel nodes: the downstream kernel may launch once every block
  /// of the upstream kernel has called cudaTriggerProgrammaticLaunchCompletion()
  /// or exited (cudaGraphKernelNodePortProgrammatic); it must call
  /// cudaGridDependencySynchronize() before it reads what the upstream wrote.
  programmatic,
  /// Between kernel nodes: the downstream kernel may launch once every block
  /// of the upstream kernel has begun (cudaGraphKernelNodePortLaunchCompletion);
  /// the same synchronization rule as programmatic.
  launch_completion,
};
[[nodiscard]] constexpr std::string_view edge_kind_name(edge_kind kind) noexcept {
  switch (kind) {
    case edge_kind::full: return "full";
    case edge_kind::programmatic: return "programmatic";
    case edge_kind::launch_completion: return "launch_completion";
  }
  return "unknown";
}

struct node {
  std::string name;
  node_params params;
  dependency_names deps;  ///< names of nodes of the same graph
  /// Empty: every dependency is full (nearly every node). Otherwise one kind
  /// per dependency, in the order of `deps` (check() refuses other lengths).
  std::vector<edge_kind> dependency_kinds;

  /// The kind of dependency `k` (an index into deps).
  [[nodiscard]] edge_kind dependency_kind(std::size_t k) const noexcept {
    return k < dependency_kinds.size() ? dependency_kinds[k] : edge_kind::full;
  }

  [[nodiscard]] node_kind kind() const noexcept { return static_cast<node_kind>(params.index()); }
};

// ----------------------------------------------------------------- graph --
struct param_decl {
  std::string name;
  type_tag type;
  /// A device buffer the graph did not allocate: its address is this
  /// pointer parameter's value; nodes read it as a buffer (buffer_ref). A
  /// mem_free node may free it if another graph's alloc node made it (CUDA
  /// refuses a free node for other memory, cudaMallocAsync's included).
  /// Every lifetime rule but "after the alloc" applies.
  bool external_buffer = false;
};

/// A conditional handle. assign_default: the value is reset to
/// default_value at every launch (cudaGraphCondAssignDefault).
struct condition_decl {
  std::string name;
  unsigned default_value = 0;
  bool assign_default = true;
};

struct graph_spec {
  std::string name;
  std::vector<node> nodes;
  std::vector<param_decl> params;
  std::vector<condition_decl> conditions;

  // Compiled in the library: a translation unit that holds or returns a
  // spec does not instantiate the destruction and copying of every node kind.
  graph_spec();
  graph_spec(const graph_spec&);
  graph_spec(graph_spec&&) noexcept;
  graph_spec& operator=(const graph_spec&);
  graph_spec& operator=(graph_spec&&) noexcept;
  ~graph_spec();

  [[nodiscard]] const node* find(std::string_view node_name) const noexcept;
  [[nodiscard]] const param_decl* find_param(std::string_view param_name) const noexcept;
  /// Number of nodes including those of children and conditional bodies.
  [[nodiscard]] std::size_t total_nodes() const noexcept;
};

/// The prefix that names the nodes nested in node `n` (at path `node_path`):
/// "stage/" inside child graph 'stage' or the one body of an if or while
/// node; "branch[1]/" inside body 1 of an if_else or switch node. Every
/// layer names nested nodes this way ("stage/fill", "branch[1]/write").
[[nodiscard]] std::string nested_prefix(std::string_view node_path, const node& n,
                                        std::size_t body = 0);

/// Paths of the nodes (nested ones included) that read parameter `param`:
/// as an argument, operand or event, or through a grid rule. The nodes a
/// rebind of `param` updates.
[[nodiscard]] std::vector<std::string> parameter_readers(const graph_spec& spec,
                                                         std::string_view param);

/// Calls f(value&) for every value a node reads (kernel/host/capture
/// arguments, memcpy/memset operands, events).
template <class Node, class F>
void for_each_value(Node& n, F&& f);

template <class Node, class F>
void for_each_value(Node& n, F&& f) {
  std::visit(
      [&](auto& p) {
        using P = std::remove_cvref_t<decltype(p)>;
        if constexpr (requires { p.args; })
          for (auto& v : p.args) f(v);
        if constexpr (std::is_same_v<P, memcpy_node>) {
          f(p.dst);
          f(p.src);
        } else if constexpr (std::is_same_v<P, memset_node>) {
          f(p.dst);
          f(p.fill);
        } else if constexpr (requires { p.event; }) {
          f(p.event);
        }
      },
      n.params);
}

}  // namespace cudag
