#include "spec_tree.hpp"

#include "cudag/check.hpp"
#include "nesting.hpp"

namespace cudag::check_detail {
namespace {

std::string body_label(const conditional_node& cond, std::size_t body) {
  if (cond.kind == conditional_kind::if_else) return body == 0 ? "then-body" : "else-body";
  if (cond.kind == conditional_kind::switch_case) return "body " + std::to_string(body);
  return "body";
}

}  // namespace

spec_tree::spec_tree(const graph_spec& top_level) {
  add_frame(top_level, no_frame, 0, "", describe_top_level(top_level), false);
}

spec_tree::spec_tree(const graph_spec& top_level, const cudag::detail::dependency_rows& resolved) {
  add_frame(top_level, no_frame, 0, "", describe_top_level(top_level), false, &resolved);
}

void spec_tree::add_frame(const graph_spec& spec, std::size_t parent, std::size_t enclosing_node,
                          std::string prefix, std::string description, bool in_body,
                          const cudag::detail::dependency_rows* resolved) {
  const std::size_t depth = parent == no_frame ? 0 : frames_[parent]->depth + 1;
  if (depth > max_nesting) {
    // The enclosing node's path is the prefix without its final '/'.
    throw check_error(description + " is nested " + std::to_string(depth) +
                          " graphs deep; a child graph probably contains itself",
                      {prefix.substr(0, prefix.size() - 1)});
  }
  const std::size_t self = frames_.size();
  const graph_view* enclosing = parent == no_frame ? nullptr : &frames_[parent]->view;
  // Frames are made in pre-order: this one's rows are entry `self`.
  frames_.push_back(std::make_unique<frame>(frame{
      resolved && resolved->resolved(self)
          ? graph_view(spec, resolved_dependencies{resolved->begin(self), resolved->indices(self)},
                       std::move(prefix), std::move(description), enclosing)
          : graph_view(spec, std::move(prefix), std::move(description), enclosing),
      parent, enclosing_node, depth, in_body, {}, {}, {}, {}, {}, {}, true}));
  frame& f = *frames_.back();

  for (const param_decl& p : spec.params)
    f.param_names.push_back({name_index::prefix_of(p.name), p.name.size()});
  for (const condition_decl& c : spec.conditions)
    f.condition_names.push_back({name_index::prefix_of(c.name), c.name.size()});
  for (std::size_t i = 0; i < spec.params.size(); ++i) {
    if (!f.param_index.emplace(spec.params[i].name, i).second) {
      throw check_error("parameter '" + spec.params[i].name + "' is declared twice in " +
                            f.view.description(),
                        {});
    }
  }
  for (std::size_t i = 0; i < spec.conditions.size(); ++i) {
    if (!f.condition_index.emplace(spec.conditions[i].name, i).second) {
      throw check_error("condition '" + spec.conditions[i].name + "' is declared twice in " +
                            f.view.description(),
                        {});
    }
  }

  for (const std::uint32_t i : frames_[self]->view.special_nodes()) {
    const node& n = spec.nodes[i];
    const node_kind kind = n.kind();
    if (kind == node_kind::mem_alloc || kind == node_kind::mem_free)
      frames_[self]->alloc_free_nodes.push_back(static_cast<std::uint32_t>(i));
    if (kind != node_kind::child && kind != node_kind::conditional)
      continue;  // only nodes that nest graphs need their path here
    if (kind == node_kind::conditional)
      frames_[self]->conditional_nodes.push_back(static_cast<std::uint32_t>(i));
    // frames_ may reallocate below: re-read through the index, not `f`.
    const std::string node_path = frames_[self]->view.path(i);
    if (const auto* child = std::get_if<child_node>(&n.params)) {
      if (!child->graph) {
        throw check_error("child node '" + node_path + "' has no graph (null graph pointer)",
                          {node_path});
      }
      add_frame(*child->graph, self, i, nested_prefix(node_path, n), "the child graph of '" + node_path + "'",
                in_body, resolved);
    } else if (const auto* cond = std::get_if<conditional_node>(&n.params)) {
      for (std::size_t b = 0; b < cond->bodies.size(); ++b) {
        add_frame(cond->bodies[b], self, i, nested_prefix(node_path, n, b),
                  "the " + body_label(*cond, b) + " of '" + node_path + "'", true, resolved);
      }
    }
  }
}

bool spec_tree::encloses(std::size_t ancestor, std::size_t descendant) const noexcept {
  for (std::size_t f = descendant; f != no_frame; f = frames_[f]->parent)
    if (f == ancestor) return true;
  return false;
}

std::size_t spec_tree::representative(std::size_t ancestor, std::size_t inner,
                                      std::size_t index) const noexcept {
  while (inner != ancestor) {
    index = frames_[inner]->enclosing_node;
    inner = frames_[inner]->parent;
  }
  return index;
}

namespace {

// Graphs declare few parameters and conditions: up to this many, a scan of
// the declarations (lengths first) beats hashing the name.
constexpr std::size_t scan_limit = 8;

template <class Decl>
std::optional<std::size_t> find_declared(const std::vector<Decl>& declared,
                                         const std::vector<frame::short_name>& short_names,
                                         const std::unordered_map<std::string_view, std::size_t>& index,
                                         std::string_view name) {
  if (declared.size() <= scan_limit) {
    const std::uint64_t prefix = name_index::prefix_of(name);
    for (std::size_t i = 0; i < short_names.size(); ++i) {
      if (short_names[i].size == name.size() && short_names[i].prefix == prefix &&
          (name.size() <= 8 || declared[i].name == name))
        return i;
    }
    return std::nullopt;
  }
  if (auto it = index.find(name); it != index.end()) return it->second;
  return std::nullopt;
}

}  // namespace

std::optional<spec_tree::param_found> spec_tree::find_param(std::size_t from,
                                                            std::string_view name) const {
  for (std::size_t f = from; f != no_frame; f = frames_[f]->parent) {
    const frame& fr = *frames_[f];
    if (auto i = find_declared(fr.spec().params, fr.param_names, fr.param_index, name))
      return param_found{f, &fr.spec().params[*i]};
  }
  return std::nullopt;
}

std::optional<spec_tree::condition_found> spec_tree::find_condition(std::size_t from,
                                                                    std::string_view name) const {
  for (std::size_t f = from; f != no_frame; f = frames_[f]->parent) {
    const frame& fr = *frames_[f];
    if (auto i = find_declared(fr.spec().conditions, fr.condition_names, fr.condition_index, name))
      return condition_found{f, &fr.spec().conditions[*i]};
  }
  return std::nullopt;
}

}  // namespace cudag::check_detail
