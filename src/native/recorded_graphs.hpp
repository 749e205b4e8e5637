#pragma once
// The recorder's model of what CUDA would hold: every template node's
// current parameters, and every executable graph's own copy of them, as
// instantiation, exec setters, child-graph setters and whole-graph updates
// leave them. A test compares the state an exec reached through some path
// (rebind, update, a cache hit...) with the state of an exec instantiated
// afresh at the target: equal texts mean the path sent every change, and
// only to nodes CUDA lets it reach.
//
// A node is named by its position, not its handle, so that two lowerings of
// one spec render alike: "3" is the fourth node created in the top-level
// graph, "3/b1/0" the first node of its second body, "2/c/0" the first node
// of the graph cloned into child node 2.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cudag::native {

class recorded_graphs {
 public:
  using handle = std::uintptr_t;

  /// What a node's getters read back (cudaGraph*NodeGetParams, import): the
  /// typed parameters it was added or last set with, by its kind.
  struct typed_params {
    cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
    cudaKernelNodeParams kernel{};  ///< kernelParams: see arguments
    /// The argument bytes, copied when the kernel's argument sizes are
    /// known (recorder::name_kernel); kernelParams then points at them.
    std::vector<std::vector<unsigned char>> arguments;
    bool arguments_known = false;
    std::vector<void*> argument_pointers;
    cudaMemcpy3DParms memcpy{};
    cudaMemsetParams memset{};
    cudaHostNodeParams host{};
    cudaEvent_t event = nullptr;
    cudaMemAllocNodeParams alloc{};
    void* freed = nullptr;
    handle child = 0;  ///< a child node's own graph (its clone, or the graph moved in)
  };

  /// An edge and its CUDA edge data (zeros: a full edge).
  struct edge {
    handle from = 0;
    handle to = 0;
    cudaGraphEdgeData data{};
  };

  /// A node added to `graph` by `function` after `deps` (dependency k with
  /// edge data `edge_data[k]`, all zeros when empty), with its parameters as
  /// text; `label` is the node's name in the call lines.
  void node_added(handle node, handle graph, std::string function, const std::vector<handle>& deps,
                  std::string text, std::string label,
                  std::vector<cudaGraphEdgeData> edge_data = {});
  /// Child node `node` holds a copy of `child` as it is now (a clone).
  void child_cloned(handle node, handle child);
  /// Graph `body` belongs to `node` (a conditional's body, a moved child).
  void graph_owned(handle node, handle body);
  void node_destroyed(handle node);
  /// A template node's parameters changed (a template setter).
  void node_text_set(handle node, std::string text);
  /// A node's typed parameters changed (an add, a template setter).
  void node_params_set(handle node, typed_params params);
  /// The node's typed parameters, null for a node never given any.
  [[nodiscard]] typed_params* params_of(handle node);
  /// The graph node `node` belongs to (0 if unknown).
  [[nodiscard]] handle graph_of(handle node) const;
  /// The live nodes of `graph`, in creation order (what cudaGraphGetNodes
  /// lists), and its edges (from, to): each node's dependencies in order.
  [[nodiscard]] std::vector<handle> nodes_of(handle graph) const;
  [[nodiscard]] std::vector<edge> edges_of(handle graph) const;
  /// How a dependency shows in the recorder's lines: nothing for a full
  /// edge, else ":programmatic", ":launch_completion" or the raw edge data.
  [[nodiscard]] static std::string edge_suffix(const cudaGraphEdgeData& data);
  /// Node `copy` of graph `graph` is a copy of `original` (cudaGraphClone),
  /// depending on `deps` (the copies of the original's dependencies, with
  /// their edge data).
  void node_copied(handle original, handle copy, handle graph, const std::vector<handle>& deps,
                   std::vector<cudaGraphEdgeData> edge_data, std::string label);
  /// Why CUDA would refuse to clone `graph` ("" if it would not).
  [[nodiscard]] std::string unclonable(handle graph) const;
  /// A launch attribute of a template node, kept beside its parameters.
  void node_attribute_set(handle node, std::string attribute, std::string value);
  /// That attribute's value as set, "" where never set.
  [[nodiscard]] std::string attribute_of(handle node, const std::string& attribute) const;

  void instantiated(handle exec, handle graph);
  /// Why CUDA would refuse another exec of `graph` now ("" if it would
  /// not): a graph holding memory or conditional nodes is instantiated once
  /// at a time.
  [[nodiscard]] std::string second_instantiation(handle graph) const;
  void exec_destroyed(handle exec);
  /// An exec setter: "" when CUDA would take it, else why it would not (a
  /// node that is not a top-level node of the exec's graph).
  std::string exec_node_set(handle exec, handle node, std::string text);
  std::string exec_child_set(handle exec, handle node, handle child);
  /// A whole-graph update: "" when taken, else why refused (and the node
  /// of `graph` at fault in `at`, when one is).
  std::string exec_updated(handle exec, handle graph, handle& at);

  /// One line a node: "path function deps=[paths] parameters".
  [[nodiscard]] std::string exec_text(handle exec) const;
  [[nodiscard]] std::string graph_text(handle graph) const;

 private:
  /// path -> "function deps=[...]" and the parameters, apart: an update
  /// needs the first to match and takes the second.
  struct entry {
    std::string shape;
    std::string params;
    std::string attributes;  ///< " name=value" each: an exec setter keeps them
    friend bool operator==(const entry&, const entry&) = default;
  };
  struct node_info {
    handle graph = 0;
    std::string function;
    std::vector<handle> deps;
    std::vector<cudaGraphEdgeData> edge_data;  ///< one per dependency; empty: all full
    std::string text;
    std::string label;
    std::map<std::string, std::string> attributes;
    std::vector<handle> bodies;
    bool destroyed = false;
    bool has_clone = false;
    std::map<std::string, entry> clone;  ///< path below "c/" -> its state when cloned
    bool has_params = false;
    typed_params params;
  };
  using rendering = std::map<std::string, entry>;
  struct exec_info {
    handle graph = 0;
    rendering state;
    std::map<handle, std::string> top_paths;     ///< top-level node -> path
    std::map<std::string, std::string> labels;  ///< node label -> path, for "mem@" names
  };

  void render(handle graph, const std::string& prefix, rendering& out,
              std::map<std::string, std::string>& labels) const;
  [[nodiscard]] rendering render_root(handle graph, std::map<std::string, std::string>* labels,
                                      std::map<handle, std::string>* top_paths) const;
  [[nodiscard]] static std::string attributes_of(const node_info& n);
  [[nodiscard]] bool holds_single_instance_nodes(handle graph) const;
  static std::string normalized(std::string text, const std::map<std::string, std::string>& labels);
  static std::string text_of(const rendering& r);
  /// Why CUDA would refuse to change a node of this shape from `was` to
  /// `now` in an executable graph ("" when it would not).
  static std::string unchangeable(const std::string& shape, const std::string& was,
                                  const std::string& now);

  std::map<handle, node_info> nodes_;
  std::map<handle, std::vector<handle>> graph_nodes_;  ///< creation order
  std::map<handle, exec_info> execs_;
};

}  // namespace cudag::native
