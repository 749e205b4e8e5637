#pragma once
// Every graph of a spec, nested ones included, as a flat list of frames in
// pre-order (a graph before the graphs nested in its nodes, nodes in
// declaration order). Frames know their enclosing node, which is what lexical
// scoping (parameters, conditions, buffers) and path naming need.
#include <cstddef>
#include <memory>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cudag/resolved_graph.hpp"
#include "cudag/spec.hpp"
#include "graph_view.hpp"

namespace cudag::check_detail {

inline constexpr std::size_t no_frame = static_cast<std::size_t>(-1);

struct frame {
  graph_view view;
  std::size_t parent = no_frame;  ///< enclosing frame; no_frame for the top level
  std::size_t enclosing_node = 0;  ///< index of the child/conditional node in parent
  std::size_t depth = 0;           ///< 0 for the top level
  /// Inside a conditional body, directly or through children nested in one:
  /// CUDA's restrictions on body node kinds apply here.
  bool in_conditional_body = false;
  std::unordered_map<std::string_view, std::size_t> param_index;
  std::unordered_map<std::string_view, std::size_t> condition_index;
  /// Declared names as length and first 8 bytes, for scans of short lists.
  struct short_name {
    std::uint64_t prefix;
    std::size_t size;
  };
  std::vector<short_name> param_names;
  std::vector<short_name> condition_names;
  /// The frame's conditional nodes, and its mem_alloc and mem_free nodes,
  /// by index in declaration order: the passes that only look at those
  /// skip the others (a large graph has few or none).
  std::vector<std::uint32_t> conditional_nodes;
  std::vector<std::uint32_t> alloc_free_nodes;
  /// False once check_node_rules() has seen every value of the frame and
  /// none reads a buffer (buffer_ref): the buffer pass then skips the values.
  mutable bool reads_buffers = true;
  /// Set by check_node_rules() when asked (check_and_plan): the values the
  /// frame's nodes read, and the bytes lowering stores them in.
  mutable std::uint32_t value_count = 0;
  mutable std::size_t value_bytes = 0;

  [[nodiscard]] const graph_spec& spec() const noexcept { return view.spec(); }
};

class spec_tree {
 public:
  /// Builds a view of every graph: throws check_error on the first structural
  /// problem (names, dependencies, cycles, a child without a graph, a
  /// parameter or condition declared twice in one graph, nesting too deep).
  explicit spec_tree(const graph_spec& top_level);
  /// The same for a graph whose dependencies were resolved (resolved_graph):
  /// the names of the graphs with rows are not looked up again; the others
  /// (nested graphs a builder was given by name) are resolved here.
  spec_tree(const graph_spec& top_level, const cudag::detail::dependency_rows& resolved);

  [[nodiscard]] std::size_t size() const noexcept { return frames_.size(); }
  [[nodiscard]] const frame& at(std::size_t index) const noexcept { return *frames_[index]; }
  [[nodiscard]] const frame& top_level() const noexcept { return *frames_.front(); }

  /// True when `ancestor` is `descendant` or encloses it.
  [[nodiscard]] bool encloses(std::size_t ancestor, std::size_t descendant) const noexcept;
  /// The node of frame `ancestor` that holds node `index` of frame `inner`
  /// (the node itself when the frames are the same). `ancestor` must enclose `inner`.
  [[nodiscard]] std::size_t representative(std::size_t ancestor, std::size_t inner,
                                           std::size_t index) const noexcept;

  struct param_found {
    std::size_t frame;
    const param_decl* decl;
  };
  struct condition_found {
    std::size_t frame;
    const condition_decl* decl;
  };
  /// Lexical lookup: the innermost declaration seen from frame `from`.
  [[nodiscard]] std::optional<param_found> find_param(std::size_t from, std::string_view name) const;
  [[nodiscard]] std::optional<condition_found> find_condition(std::size_t from,
                                                              std::string_view name) const;

 private:
  void add_frame(const graph_spec& spec, std::size_t parent, std::size_t enclosing_node,
                 std::string prefix, std::string description, bool in_body,
                 const cudag::detail::dependency_rows* resolved = nullptr);

  std::vector<std::unique_ptr<frame>> frames_;
};

}  // namespace cudag::check_detail
