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
  csr_rows dependents = build_edges();
  order_nodes(dependents);
  if (!declared_in_order_) {
    dependents_ = adopt_csr<dependent_graph>(static_cast<std::uint32_t>(size()), std::move(dependents));
    has_dependents_ = true;
  }
}

graph_view::graph_view(const graph_spec& spec, const resolved_dependencies& resolved,
                       std::string path_prefix, std::string description, const graph_view* enclosing)
    : spec_(&spec),
      enclosing_(enclosing),
      path_prefix_(std::move(path_prefix)),
      description_(std::move(description)) {
  const auto count = static_cast<std::uint32_t>(size());
  names_indexed_ = false;
  find_special_nodes();
  resize_in_huge_pages(first_slot_, resolved.begin.size());
  std::copy(resolved.begin.begin(), resolved.begin.end(), first_slot_.begin());
  edge_count_ = first_slot_[count];
  csr_rows rows;
  resize_in_huge_pages(rows.begin, first_slot_.size());
  std::copy(first_slot_.begin(), first_slot_.end(), rows.begin.begin());
  resize_in_huge_pages(rows.target, edge_count_);
  std::copy(resolved.deps.begin(), resolved.deps.end(), rows.target.begin());
  for (std::uint32_t v = 0; v < count && declared_in_order_; ++v)
    for (std::uint32_t s = first_slot_[v]; s < first_slot_[v + 1]; ++s) declared_in_order_ &= rows.target[s] < v;
  csr_rows dependents;
  if (!declared_in_order_) dependents = reverse_csr(count, rows.begin.data(), rows.target.data());
  dependencies_ = adopt_csr<dependency_graph>(count, std::move(rows));
  order_nodes(dependents);
  if (!declared_in_order_) {
    dependents_ = adopt_csr<dependent_graph>(count, std::move(dependents));
    has_dependents_ = true;
  }
}

void graph_view::find_special_nodes() {
  const auto& nodes = spec_->nodes;
  for (std::uint32_t i = 0; i < nodes.size(); ++i) {
    const node_kind kind = nodes[i].kind();
    if (kind == node_kind::child || kind == node_kind::conditional ||
        kind == node_kind::mem_alloc || kind == node_kind::mem_free)
      special_nodes_.push_back(i);
  }
}

const name_index& graph_view::names() const {
  if (!names_indexed_) {  // a resolved graph: its names are unique
    index_by_name_ = name_index(spec_->nodes);
    index_all(index_by_name_, spec_->nodes, [](std::uint32_t) {}, [](std::uint32_t, std::uint32_t) {});
    names_indexed_ = true;
  }
  return index_by_name_;
}

const dependent_graph& graph_view::dependents() const {
  if (!has_dependents_) {
    const auto count = static_cast<std::uint32_t>(size());
    std::vector<std::uint32_t> targets;
    targets.reserve(edge_count_);
    for (std::uint32_t v = 0; v < count; ++v)
      for (auto e : boost::make_iterator_range(out_edges(v, dependencies_)))
        targets.push_back(static_cast<std::uint32_t>(target(e, dependencies_)));
    dependents_ = adopt_csr<dependent_graph>(count, reverse_csr(count, first_slot_.data(), targets.data()));
    has_dependents_ = true;
  }
  return dependents_;
}

std::optional<std::size_t> graph_view::index_of(std::string_view name) const {
  return names().find(name);
}

std::string graph_view::path(std::size_t index) const {
  return path_prefix_ + spec_->nodes[index].name;
}

void graph_view::index_names() {
  const auto& nodes = spec_->nodes;
  resize_in_huge_pages(first_slot_, nodes.size() + 1);
  std::size_t total = 0;
  index_by_name_ = name_index(nodes);
  names_indexed_ = true;
  index_all(
      index_by_name_, nodes,
      [&](std::uint32_t i) {
        first_slot_[i] = static_cast<std::uint32_t>(total);
        total += nodes[i].deps.size();
        const node_kind kind = nodes[i].kind();
        if (kind == node_kind::child || kind == node_kind::conditional ||
            kind == node_kind::mem_alloc || kind == node_kind::mem_free)
          special_nodes_.push_back(i);
        const std::string& name = nodes[i].name;
        if (name.empty()) {
          throw check_error("node #" + std::to_string(i) + " of " + description_ +
                                " has an empty name; every node needs a unique name",
                            {path_prefix_ + "#" + std::to_string(i)});
        }
      },
      [&](std::uint32_t i, std::uint32_t existing) {
        throw check_error("node name '" + nodes[i].name + "' is used twice in " + description_ +
                              " (nodes #" + std::to_string(existing) + " and #" +
                              std::to_string(i) + "); names must be unique within a graph",
                          {path(i)});
      });
  first_slot_[nodes.size()] = static_cast<std::uint32_t>(total);
  edge_count_ = total;
}

csr_rows graph_view::build_edges() {
  const auto& nodes = spec_->nodes;
  const auto count = static_cast<std::uint32_t>(nodes.size());
  const std::size_t total = edge_count_;

  // The dependency graph's rows: slot -> the dependency's index.
  csr_rows rows;
  resize_in_huge_pages(rows.begin, first_slot_.size());
  std::copy(first_slot_.begin(), first_slot_.end(), rows.begin.begin());
  resize_in_huge_pages(rows.target, total);
  std::vector<std::uint32_t>& dependency = rows.target;
  // A dependency listed twice: short lists are scanned (they are in cache);
  // long ones use last_listed_by[u] == v + 1 (v already listed u).
  constexpr std::size_t scan_limit = 16;
  std::vector<std::uint32_t> last_listed_by;
  const auto resolved = [&](std::size_t v, std::size_t k, std::uint32_t u) {
    const std::size_t first = first_slot_[v];
    bool repeated = false;
    // The list's length from first_slot_, not from the node: a large
    // graph's nodes are far from the cache by now.
    if (first_slot_[v + 1] - first <= scan_limit) {
      for (std::size_t s = first; s < first + k; ++s) repeated |= dependency[s] == u;
    } else {
      if (last_listed_by.empty()) last_listed_by.assign(nodes.size(), 0);
      repeated = last_listed_by[u] == v + 1;
      last_listed_by[u] = static_cast<std::uint32_t>(v + 1);
    }
    if (repeated) {
      throw check_error("node '" + path(v) + "' lists its dependency '" + path(u) + "' twice",
                        {path(u), path(v)});
    }
    dependency[first + k] = u;
    declared_in_order_ &= u < v;
  };
  const auto unknown = [&](std::size_t v, std::size_t k) {
    throw_unknown_dependency(static_cast<std::uint32_t>(v), nodes[v].deps[k]);
  };
  resolve_dependencies(index_by_name_, nodes, first_slot_.data(), resolved, unknown);
  // Kahn's sort needs the dependents; a graph declared in dependency order
  // needs no sort, and its dependents are built only if a later pass asks.
  csr_rows dependents;
  if (!declared_in_order_) dependents = reverse_csr(count, rows.begin.data(), rows.target.data());
  dependencies_ = adopt_csr<dependency_graph>(count, std::move(rows));
  return dependents;
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
  if (marks_.size() != size()) marks_.assign(size(), 0);  // first sweep
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
    for (auto e : boost::make_iterator_range(out_edges(u, dependents()))) {
      std::uint32_t w = target(e, dependents_);
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
    for (auto e : boost::make_iterator_range(out_edges(v, dependencies_))) {
      std::uint32_t u = target(e, dependencies_);
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

bool graph_view::reaches_back(std::size_t from, std::size_t to, std::uint32_t from_rank,
                              std::uint32_t to_rank) const {
  if (from == to || from_rank >= to_rank) return false;
  // A direct edge, the usual answer, read from one row without touching
  // the ranks and marks of the other dependencies.
  for (auto e : boost::make_iterator_range(out_edges(static_cast<std::uint32_t>(to), dependencies_)))
    if (target(e, dependencies_) == from) return true;
  const std::uint32_t min_rank = from_rank;
  next_sweep();
  stack_.assign(1, static_cast<std::uint32_t>(to));
  marks_[to] = mark_stamp_;
  while (!stack_.empty()) {
    const std::uint32_t v = stack_.back();
    stack_.pop_back();
    for (auto e : boost::make_iterator_range(out_edges(v, dependencies_))) {
      const std::uint32_t u = target(e, dependencies_);
      if (u == from) return true;
      if (marks_[u] == mark_stamp_ || rank_[u] <= min_rank) continue;
      marks_[u] = mark_stamp_;
      stack_.push_back(u);
    }
  }
  return false;
}

}  // namespace cudag::check_detail
