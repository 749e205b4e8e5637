// Rules about one node at a time: what its kind requires, where CUDA allows
// it, and whether every value it reads refers to something declared with a
// fitting type.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <variant>
#include <vector>

#include <boost/range/iterator_range.hpp>

#include "check_passes.hpp"
#include "checked_plan.hpp"
#include "cudag/check.hpp"
#include "cudag/exec_core.hpp"

namespace cudag::check_detail {
namespace {

bool body_count_fits(conditional_kind kind, std::size_t bodies) {
  switch (kind) {
    case conditional_kind::if_then:
    case conditional_kind::while_loop:
      return bodies == 1;
    case conditional_kind::if_else:
      return bodies == 2;
    case conditional_kind::switch_case:
      return bodies >= 1;
  }
  return false;
}

std::string_view body_count_rule(conditional_kind kind) {
  switch (kind) {
    case conditional_kind::if_then:
    case conditional_kind::while_loop:
      return "exactly 1";
    case conditional_kind::if_else:
      return "exactly 2 (then and else)";
    case conditional_kind::switch_case:
      return "at least 1 (one per case)";
  }
  return "?";
}

// The parameters visible from one frame, innermost declaration first, as one
// short flat list: every node of the frame looks its parameters up here
// rather than climbing the frames (a chain of dependent loads per lookup).
struct visible_param {
  std::uint64_t prefix;
  std::size_t size;
  spec_tree::param_found found;
};

constexpr std::size_t scope_scan_limit = 8;
constexpr std::size_t prefetch_ahead = 8;  // nodes

// Empty when more than scope_scan_limit parameters are visible: then the
// tree's own lookup (hash maps) serves.
std::vector<visible_param> visible_params(const spec_tree& tree, std::size_t from) {
  std::vector<visible_param> scope;
  for (std::size_t f = from; f != no_frame; f = tree.at(f).parent) {
    const auto& params = tree.at(f).spec().params;
    for (const param_decl& p : params) {
      scope.push_back({name_index::prefix_of(p.name), p.name.size(), {f, &p}});
      if (scope.size() > scope_scan_limit) return {};
    }
  }
  return scope;
}

/// What a frame's values add up to, for lowering (checked_plans).
struct value_tally {
  std::uint32_t count = 0;
  std::size_t bytes = 0;
};

class node_checker {
 public:
  node_checker(const spec_tree& tree, std::size_t frame_index, std::size_t node_index,
               const std::vector<visible_param>& scope, bool& reads_buffers, value_tally* tally,
               std::vector<spec_tree::param_found>* resolved = nullptr)
      : tree_(tree),
        frame_index_(frame_index),
        frame_(tree.at(frame_index)),
        node_(frame_.spec().nodes[node_index]),
        node_index_(node_index),
        scope_(scope),
        reads_buffers_(reads_buffers),
        tally_(tally),
        resolved_(resolved) {}

  void run() {
    check_placement();
    std::visit([this](const auto& p) { check_kind(p); }, node_.params);
    if (!node_.dependency_kinds.empty()) check_dependency_kinds();
    std::size_t position = 0;
    if (resolved_) resolved_->clear();
    for_each_value(node_, [&](const value& v) {
      const spec_tree::param_found found = check_value(v, position++);
      if (resolved_) resolved_->push_back(found);
      if (tally_ == nullptr) return;
      const literal* l = std::get_if<literal>(&v.source);
      tally_->bytes += value_room(v.type.size, l ? l->bytes.size() : 0);
    });
    if (tally_) tally_->count += static_cast<std::uint32_t>(position);
  }

 private:
  // Failures build their message in a lambda called here, out of line: the
  // checks that pass (nearly all) keep no strings and small stack frames.
  template <class Message>
  [[noreturn, gnu::cold, gnu::noinline]] void fail(const Message& message) const {
    throw check_error(std::string(message()), {path()});
  }
  /// Built only for a message: most nodes pass and never need it.
  [[nodiscard]] std::string path() const { return frame_.view.path(node_index_); }

  std::string kind_phrase() const {
    const std::string_view kind = kind_name(node_.kind());
    const bool vowel = kind.front() == 'e';
    return std::string(vowel ? "an " : "a ") + std::string(kind) + " node";
  }

  // Lexical lookup, as spec_tree::find_param (the innermost declaration).
  std::optional<spec_tree::param_found> find_param(std::string_view name) const {
    if (scope_.empty()) return tree_.find_param(frame_index_, name);
    const std::uint64_t prefix = name_index::prefix_of(name);
    for (const visible_param& p : scope_) {
      if (p.size == name.size() && p.prefix == prefix &&
          (name.size() <= 8 || p.found.decl->name == name))
        return p.found;
    }
    return std::nullopt;
  }

  void check_placement() const {
    if (frame_.in_conditional_body && !allowed_in_conditional_body(node_.kind())) {
      fail([&] {
        return "node '" + path() + "' is " + kind_phrase() +
               ", which CUDA does not allow inside a conditional body (it is in " +
               frame_.view.description() +
               "); bodies take kernel, memcpy, memset, empty, child, captured and conditional "
               "nodes";
      });
    }
  }

  void check_kind(const kernel_node& k) const {
    if (k.function == nullptr) {
      fail([&] {
        return "kernel node '" + path() + "' has no function (null function pointer" +
               (k.function_name.empty() ? std::string(")") : " for '" + k.function_name + "')");
      });
    }
    // CUDA refuses these at launch configuration; say which node and why.
    const auto dims = [](const dim3& d) {
      return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
    };
    const auto follows = [&](launch_dim dim) {
      return std::any_of(k.shape_rules.begin(), k.shape_rules.end(),
                         [&](const shape_rule& r) { return r.dim == dim; });
    };
    if ((k.block.x == 0 && !follows(launch_dim::block_x)) ||
        (k.block.y == 0 && !follows(launch_dim::block_y)) ||
        (k.block.z == 0 && !follows(launch_dim::block_z)))
      fail([&] {
        return "kernel node '" + path() + "' has a block of " + dims(k.block) +
               " threads; every dimension must be at least 1";
      });
    if ((k.grid.y == 0 && !follows(launch_dim::grid_y)) ||
        (k.grid.z == 0 && !follows(launch_dim::grid_z)) ||
        (k.grid.x == 0 && !k.grid_from && !follows(launch_dim::grid_x)))
      fail([&] {
        return "kernel node '" + path() + "' has a grid of " + dims(k.grid) +
               " blocks; every dimension must be at least 1";
      });
    if (k.grid_from) {
      auto found = find_param(k.grid_from->param);
      if (!found) {
        fail([&] {
          return "kernel node '" + path() + "' computes its grid from parameter '" +
                 k.grid_from->param + "', which is not declared in its graph or an enclosing one";
        });
      }
      if (!found->decl->type.is_integral) {
        fail([&] {
          return "kernel node '" + path() + "' computes its grid from parameter '" +
                 k.grid_from->param + "' of type " + found->decl->type.name() +
                 ", which is not an integral type";
        });
      }
      if (k.grid_from->items_per_block == 0) {
        fail([&] {
          return "kernel node '" + path() + "' computes its grid from parameter '" +
                 k.grid_from->param + "' with 0 items per block";
        });
      }
    }
    for (std::size_t i = 0; i < k.shape_rules.size(); ++i) {
      const shape_rule& r = k.shape_rules[i];
      const auto rule = [&] {
        return "kernel node '" + path() + "': shape rule " + std::string(launch_dim_name(r.dim)) +
               " = ceil(" + r.param + " * " + std::to_string(r.multiplier) + " / " +
               std::to_string(r.divisor) + ")";
      };
      const auto found = find_param(r.param);
      if (!found)
        fail([&] {
          return rule() + " reads parameter '" + r.param +
                 "', which is not declared in its graph or an enclosing one";
        });
      if (!found->decl->type.is_integral)
        fail([&] {
          return rule() + " reads parameter '" + r.param + "' of type " +
                 found->decl->type.name() + ", which is not an integral type";
        });
      if (r.divisor == 0 || r.multiplier == 0)
        fail([&] { return rule() + " has a " + (r.divisor == 0 ? "divisor" : "multiplier") + " of 0"; });
      if ((r.dim == launch_dim::grid_x && k.grid_from) ||
          std::any_of(k.shape_rules.begin(), k.shape_rules.begin() + static_cast<std::ptrdiff_t>(i),
                      [&](const shape_rule& o) { return o.dim == r.dim; }))
        fail([&] {
          return rule() + " sets " + std::string(launch_dim_name(r.dim)) +
                 ", which another rule of the node already sets";
        });
    }
    check_launch_attributes(k, follows);
  }

  /// The rules of cudag/launch_attributes.hpp, which the DSL applies where
  /// a node is declared. No rule for the memory-sync domain: its enum admits
  /// only CUDA's own values (any other is undefined behaviour before a check
  /// could see it).
  template <class Follows>
  void check_launch_attributes(const kernel_node& k, const Follows& follows) const {
    if (!has_launch_attributes(k)) return;
    const launch_attributes a = attributes_of(k);
    const grid_follows axes{k.grid_from.has_value() || follows(launch_dim::grid_x),
                            follows(launch_dim::grid_y), follows(launch_dim::grid_z)};
    const unsigned faults = launch_attribute_faults(k.grid, axes, a);
    for (unsigned bit = 1; bit != 0 && bit <= faults; bit <<= 1)
      if (faults & bit)
        fail([&] {
          return describe_launch_attribute_fault(static_cast<launch_attribute_fault>(bit), path(),
                                                 k.grid, axes, a);
        });
  }

  void check_kind(const memset_node& m) const {
    if (m.element_size != 1 && m.element_size != 2 && m.element_size != 4) {
      fail([&] {
        return "memset node '" + path() + "' has element size " + std::to_string(m.element_size) +
               "; CUDA supports 1, 2 or 4 bytes";
      });
    }
    if (m.width == 0)
      fail([&] { return "memset node '" + path() + "' has zero width; it would set nothing"; });
    if (m.height == 0)
      fail([&] { return "memset node '" + path() + "' has zero height; it would set nothing"; });
  }

  void check_kind(const host_node& h) const {
    if (!h.function || !*h.function)
      fail([&] { return "host node '" + path() + "' has no function"; });
  }

  void check_kind(const captured_node& c) const {
    if (!c.record || !*c.record)
      fail([&] { return "captured node '" + path() + "' has no recording function"; });
  }

  void check_kind(const mem_alloc_node& a) const {
    if (a.buffer.empty()) fail([&] { return "mem_alloc node '" + path() + "' names no buffer"; });
    if (a.bytes == 0) fail([&] { return "mem_alloc node '" + path() + "' allocates 0 bytes"; });
  }

  void check_kind(const mem_free_node& f) const {
    if (f.buffer.empty()) fail([&] { return "mem_free node '" + path() + "' names no buffer"; });
  }

  void check_kind(const conditional_node& c) const {
    if (!body_count_fits(c.kind, c.bodies.size())) {
      fail([&] {
        return "conditional node '" + path() + "' (" + std::string(kind_name(c.kind)) + ") has " +
               std::to_string(c.bodies.size()) + " bodies; " + std::string(kind_name(c.kind)) +
               " needs " + std::string(body_count_rule(c.kind));
      });
    }
    if (!tree_.find_condition(frame_index_, c.condition)) {
      fail([&] {
        return "conditional node '" + path() + "' uses condition '" + c.condition +
               "', which is not declared in its graph or an enclosing one";
      });
    }
  }

  /// Edges of a kind other than full: one kind per dependency; only between
  /// kernel nodes (CUDA's rule); only into a kernel that synchronizes its
  /// grid dependencies (cudag's: else it may read before the upstream wrote).
  void check_dependency_kinds() const {
    if (node_.dependency_kinds.size() != node_.deps.size())
      fail([&] {
        return "node '" + path() + "' lists " + std::to_string(node_.dependency_kinds.size()) +
               " dependency kinds for its " + std::to_string(node_.deps.size()) +
               " dependencies; give one kind per dependency, or none (every edge full)";
      });
    const dependency_graph& dependencies = frame_.view.dependencies();
    std::size_t k = 0;
    for (const auto e : boost::make_iterator_range(out_edges(static_cast<std::uint32_t>(node_index_), dependencies))) {
      const edge_kind kind = node_.dependency_kinds[k++];
      if (kind == edge_kind::full) continue;
      const std::size_t upstream = target(e, dependencies);
      const node& from = frame_.spec().nodes[upstream];
      const auto edge = [&] {
        return std::string(edge_kind_name(kind)) + " edge '" + frame_.view.path(upstream) +
               "' -> '" + path() + "'";
      };
      if (from.kind() != node_kind::kernel || node_.kind() != node_kind::kernel) {
        const bool upstream_at_fault = from.kind() != node_kind::kernel;
        fail([&] {
          const node& culprit = upstream_at_fault ? from : node_;
          const std::string_view culprit_kind = kind_name(culprit.kind());
          return edge() + ": CUDA allows one only from a kernel node into a kernel node, and '" +
                 (upstream_at_fault ? frame_.view.path(upstream) : path()) + "' is " +
                 (culprit_kind.front() == 'e' ? "an " : "a ") + std::string(culprit_kind) + " node";
        });
      }
      if (!std::get<kernel_node>(node_.params).synchronizes_grid_dependencies)
        fail([&] {
          return edge() + ": kernel node '" + path() +
                 "' does not synchronize its grid dependencies, so it may read what '" +
                 frame_.view.path(upstream) +
                 "' writes before it is written; mark its kernel with "
                 "cudag::synchronizes_grid_dependencies() once it calls "
                 "cudaGridDependencySynchronize() before those reads";
        });
    }
  }

  // Child graphs were resolved when the tree was built; empty, memcpy and
  // events need nothing beyond their values.
  template <class Other>
  void check_kind(const Other&) const {}

  /// The declaration a parameter reference resolves to (a null decl for
  /// another value).
  spec_tree::param_found check_value(const value& v, std::size_t position) const {
    auto where = [&] {
      return "operand " + std::to_string(position) + " of node '" + path() + "'";
    };
    if (const auto* lit = std::get_if<literal>(&v.source)) {
      if (v.type.info && lit->bytes.size() != v.type.size) {
        fail([&] {
          return where() + " is a literal of " + std::to_string(lit->bytes.size()) +
                 " bytes where " + v.type.name() + " (" + std::to_string(v.type.size) +
                 " bytes) is expected";
        });
      }
    } else if (const auto* p = std::get_if<param_ref>(&v.source)) {
      auto found = find_param(p->name);
      if (!found) {
        fail([&] {
          return "node '" + path() + "' uses parameter '" + p->name +
                 "', which is not declared in its graph or an enclosing one";
        });
      }
      if (found->decl->type.info != v.type.info && !binds_to(found->decl->type, v.type)) {
        fail([&] {
          return "node '" + path() + "' passes parameter '" + p->name + "', declared as " +
                 found->decl->type.name() + ", where " + v.type.name() + " is expected (" +
                 where() + ")";
        });
      }
      return *found;
    } else if (const auto* c = std::get_if<condition_ref>(&v.source)) {
      if (!tree_.find_condition(frame_index_, c->name)) {
        fail([&] {
          return "node '" + path() + "' uses condition '" + c->name +
                 "', which is not declared in its graph or an enclosing one";
        });
      }
    } else if (std::holds_alternative<buffer_ref>(v.source)) {
      reads_buffers_ = true;  // resolved with the buffers' lifetimes
    }
    return {0, nullptr};
  }

  const spec_tree& tree_;
  std::size_t frame_index_;
  const frame& frame_;
  const node& node_;
  std::size_t node_index_;
  const std::vector<visible_param>& scope_;
  bool& reads_buffers_;
  value_tally* tally_;  ///< null: check() alone, nothing to lower
  /// Where wanted (the race pass), the declaration each value resolved to.
  std::vector<spec_tree::param_found>* resolved_;
};

}  // namespace

void check_node_rules(const spec_tree& tree, bool tally_values, race_collector* races) {
  for (std::size_t f = 0; f < tree.size(); ++f) {
    const auto& nodes = tree.at(f).spec().nodes;
    if (nodes.empty()) continue;
    const std::vector<visible_param> scope = visible_params(tree, f);
    bool reads_buffers = false;
    value_tally tally;
    std::vector<spec_tree::param_found> resolved;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      // A node's rules read most of its 256 bytes; in a large graph the
      // nodes are far past the caches, and the hardware prefetcher stops at
      // every 4 KiB page: fetched a few nodes ahead.
      if (i + prefetch_ahead < nodes.size()) {
        const char* ahead = reinterpret_cast<const char*>(&nodes[i + prefetch_ahead]);
        for (std::size_t at = 0; at < sizeof(node); at += 64) __builtin_prefetch(ahead + at);
      }
      node_checker(tree, f, i, scope, reads_buffers, tally_values ? &tally : nullptr,
                   races ? &resolved : nullptr)
          .run();
      // The race pass reads the node while it is in the cache, and the
      // parameters as the rules resolved them.
      if (races) races->visit(f, i, nodes[i], resolved);
    }
    tree.at(f).reads_buffers = reads_buffers;  // every value of the frame seen
    tree.at(f).value_count = tally.count;
    tree.at(f).value_bytes = tally.bytes;
  }
}

}  // namespace cudag::check_detail

namespace cudag {

namespace {
void refuse_for_device_launch(const graph_spec& g, const std::string& prefix, const std::string& top) {
  for (const node& n : g.nodes) {
    const std::string path = prefix + n.name;
    const node_kind kind = n.kind();
    if (!allowed_in_device_launchable_graph(kind))
      throw check_error("graph '" + top + "' is instantiated for device launch, and node '" + path +
                            "' is a " + std::string(kind_name(kind)) +
                            " node; a device-launchable graph holds only kernel, memcpy, memset "
                            "and child-graph nodes (CUDA refuses the others)",
                        {path});
    if (const auto* c = std::get_if<child_node>(&n.params); c && c->graph)
      refuse_for_device_launch(*c->graph, nested_prefix(path, n, 0), top);
  }
}
}  // namespace

void check_device_launchable(const graph_spec& spec) { refuse_for_device_launch(spec, "", spec.name); }

}  // namespace cudag
