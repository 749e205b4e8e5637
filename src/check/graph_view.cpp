#include "graph_view.hpp"

#include <utility>

#include "cudag/check.hpp"

namespace cudag::check_detail {

std::string describe_top_level(const graph_spec& spec) {
  return spec.name.empty() ? std::string("the top-level graph") : "graph '" + spec.name + "'";
}

graph_view::graph_view(const graph_spec& spec, std::string path_prefix, std::string description,
                       const graph_view* enclosing)
    : spec_(&spec),
      enclosing_(enclosing),
      path_prefix_(std::move(path_prefix)),
      description_(std::move(description)) {
  index_names();
  build_edges();
  order_nodes();
}

std::optional<std::size_t> graph_view::index_of(std::string_view name) const {
  return index_by_name_.find(name);
}

std::string graph_view::path(std::size_t index) const {
  return path_prefix_ + spec_->nodes[index].name;
}

void graph_view::index_names() {
  const auto& nodes = spec_->nodes;
  index_by_name_ = name_index(nodes);
  for (std::uint32_t i = 0; i < nodes.size(); ++i) {
    const std::string& name = nodes[i].name;
    if (name.empty()) {
      throw check_error("node #" + std::to_string(i) + " of " + description_ +
                            " has an empty name; every node needs a unique name",
                        {path_prefix_ + "#" + std::to_string(i)});
    }
    if (auto existing = index_by_name_.insert(i)) {
      throw check_error("node name '" + name + "' is used twice in " + description_ +
                            " (nodes #" + std::to_string(*existing) + " and #" +
                            std::to_string(i) + "); names must be unique within a graph",
                        {path(i)});
    }
  }
}

void graph_view::build_edges() {
  const auto& nodes = spec_->nodes;
  first_slot_.resize(nodes.size() + 1);
  std::size_t total = 0;
  for (std::size_t v = 0; v < nodes.size(); ++v) {
    first_slot_[v] = static_cast<std::uint32_t>(total);
    total += nodes[v].deps.size();
  }
  first_slot_[nodes.size()] = static_cast<std::uint32_t>(total);
  edge_count_ = total;

  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  std::vector<dependency_slot> slots;
  edges.reserve(total);
  slots.reserve(total);
  // last_listed_by[u] == v + 1: v already listed u as a dependency.
  std::vector<std::uint32_t> last_listed_by(nodes.size(), 0);
  for (std::uint32_t v = 0; v < nodes.size(); ++v) {
    const auto& deps = nodes[v].deps;
    for (std::uint32_t k = 0; k < deps.size(); ++k) {
      auto u = index_of(deps[k]);
      if (!u) throw_unknown_dependency(v, deps[k]);
      if (last_listed_by[*u] == v + 1) {
        throw check_error("node '" + path(v) + "' lists its dependency '" + path(*u) + "' twice",
                          {path(*u), path(v)});
      }
      last_listed_by[*u] = v + 1;
      edges.emplace_back(static_cast<std::uint32_t>(*u), v);
      slots.push_back({first_slot_[v] + k});
    }
  }
  graph_ = dependency_graph(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(),
                            slots.begin(), static_cast<std::uint32_t>(nodes.size()));
  marks_.assign(nodes.size(), 0);
}

void graph_view::throw_unknown_dependency(std::uint32_t dependent,
                                          const std::string& dependency) const {
  for (const graph_view* outer = enclosing_; outer; outer = outer->enclosing_) {
    if (auto found = outer->index_of(dependency)) {
      throw check_error("node '" + path(dependent) + "' depends on '" + outer->path(*found) +
                            "', a node of " + outer->description_ + ", not of " + description_ +
                            "; dependencies must stay within one graph (order the enclosing "
                            "node instead)",
                        {path(dependent), outer->path(*found)});
    }
  }
  throw check_error("node '" + path(dependent) + "' depends on '" + dependency +
                        "', which is not a node of " + description_,
                    {path(dependent), path_prefix_ + dependency});
}

void graph_view::next_sweep() const {
  if (++mark_stamp_ == 0) {  // wrapped: old stamps could collide
    std::fill(marks_.begin(), marks_.end(), 0);
    mark_stamp_ = 1;
  }
}

void graph_view::sweep_forward(std::size_t source, std::uint32_t max_rank) const {
  next_sweep();
  stack_.assign(1, static_cast<std::uint32_t>(source));
  marks_[source] = mark_stamp_;
  while (!stack_.empty()) {
    std::uint32_t u = stack_.back();
    stack_.pop_back();
    for (auto e : boost::make_iterator_range(out_edges(u, graph_))) {
      std::uint32_t w = target(e, graph_);
      if (marks_[w] == mark_stamp_ || rank_[w] > max_rank) continue;
      marks_[w] = mark_stamp_;
      stack_.push_back(w);
    }
  }
}

void graph_view::sweep_backward(std::size_t target_node, std::uint32_t min_rank) const {
  next_sweep();
  stack_.assign(1, static_cast<std::uint32_t>(target_node));
  marks_[target_node] = mark_stamp_;
  while (!stack_.empty()) {
    std::uint32_t v = stack_.back();
    stack_.pop_back();
    for (auto e : boost::make_iterator_range(in_edges(v, graph_))) {
      std::uint32_t u = source(e, graph_);
      if (marks_[u] == mark_stamp_ || rank_[u] < min_rank) continue;
      marks_[u] = mark_stamp_;
      stack_.push_back(u);
    }
  }
}

bool graph_view::reaches(std::size_t from, std::size_t to) const {
  if (from == to || rank_[from] >= rank_[to]) return false;
  sweep_forward(from, rank_[to]);
  return is_marked(to);
}

}  // namespace cudag::check_detail
