// A buffer lives from its mem_alloc node to its mem_free node (or to the end
// of the graph's life when never freed); an external buffer (a parameter the
// graph did not allocate) lives from before the graph to its free, if any. Every node that reads it, the free
// included, must be ordered inside that window by the graph's edges. A user
// nested in a child graph or body is ordered by the node that encloses it in
// the graph where the comparison is made.
#include <algorithm>
#include <map>
#include <unordered_map>
#include <variant>

#include "check_passes.hpp"
#include "cudag/buffer_bounds.hpp"
#include "cudag/check.hpp"

namespace cudag::check_detail {
namespace {

struct site {
  std::size_t frame;
  std::size_t node;
};

struct buffer_use {
  std::string_view buffer;
  site where;
};

struct buffer_events {
  std::vector<std::string_view> allocated_in_order;
  std::unordered_map<std::string_view, site> alloc;
  /// External buffers: the frame that declares each (outermost first).
  std::vector<std::string_view> external_in_order;
  std::unordered_map<std::string_view, std::size_t> external;
  std::unordered_map<std::string_view, site> free;
  std::vector<buffer_use> uses;  ///< buffer_ref reads, in pre-order
  std::unordered_map<std::string_view, std::vector<site>> uses_by_buffer;
  /// Nodes that read a buffer through an operand, each once, in pre-order.
  std::vector<site> readers;
};

class lifetime_checker {
 public:
  explicit lifetime_checker(const spec_tree& tree) : tree_(tree) {}

  void run() {
    collect();
    for (std::string_view buffer : events_.allocated_in_order) check_window(buffer);
    for (std::string_view buffer : events_.external_in_order) {
      const std::vector<site> users = users_of(buffer);
      if (auto it = events_.free.find(buffer); it != events_.free.end() && users.size() > 1)
        check_before_free(buffer, it->second, users);
    }
    for (const site& reader : events_.readers) check_bounds(reader);
  }

 private:
  std::string path(site s) const { return tree_.at(s.frame).view.path(s.node); }

  void collect() {
    std::vector<buffer_use> frees_in_order;
    for (std::size_t f = 0; f < tree_.size(); ++f)
      for (const param_decl& p : tree_.at(f).spec().params)
        if (p.external_buffer && events_.external.emplace(p.name, f).second)
          events_.external_in_order.push_back(p.name);
    for (std::size_t f = 0; f < tree_.size(); ++f) {
      const frame& fr = tree_.at(f);
      const auto& nodes = fr.spec().nodes;
      if (!fr.reads_buffers) {  // only its allocs and frees matter here
        for (const std::uint32_t i : fr.alloc_free_nodes) collect_node(f, i, nodes[i], frees_in_order);
        continue;
      }
      for (std::size_t i = 0; i < nodes.size(); ++i) collect_node(f, i, nodes[i], frees_in_order);
    }
    for (const buffer_use& f : frees_in_order) require_visible_alloc(f, "frees", "allocates");
    for (const buffer_use& u : events_.uses) require_visible_alloc(u, "uses", "produces");
  }

  // Node i of frame f: its alloc or free, and its buffer_ref reads.
  void collect_node(std::size_t f, std::size_t i, const node& n,
                    std::vector<buffer_use>& frees_in_order) {
    const site here{f, i};
    if (const auto* a = std::get_if<mem_alloc_node>(&n.params)) {
      auto [it, inserted] = events_.alloc.emplace(a->buffer, here);
      if (!inserted) {
        throw check_error("buffer '" + a->buffer + "' is allocated twice, by '" +
                              path(it->second) + "' and by '" + path(here) + "'",
                          {path(it->second), path(here)});
      }
      events_.allocated_in_order.push_back(a->buffer);
      if (auto ext = events_.external.find(a->buffer); ext != events_.external.end())
        throw check_error("node '" + path(here) + "' allocates buffer '" + a->buffer +
                              "', which " + tree_.at(ext->second).view.description() +
                              " declares external (allocated outside the graph)",
                          {path(here)});
    } else if (const auto* fr = std::get_if<mem_free_node>(&n.params)) {
      auto [it, inserted] = events_.free.emplace(fr->buffer, here);
      if (!inserted) {
        throw check_error("buffer '" + fr->buffer + "' is freed twice, by '" +
                              path(it->second) + "' and by '" + path(here) + "'",
                          {path(it->second), path(here)});
      }
      frees_in_order.push_back({fr->buffer, here});
    }
    bool reads = false;
    for_each_value(n, [&](const value& v) {
      const auto* b = std::get_if<buffer_ref>(&v.source);
      if (!b) return;
      if (!reads) events_.readers.push_back(here);
      reads = true;
      events_.uses.push_back({b->name, here});
      auto& sites = events_.uses_by_buffer[b->name];
      // A node reading a buffer through several operands is one user.
      if (sites.empty() || sites.back().frame != f || sites.back().node != i)
        sites.push_back(here);
    });
  }

  void require_visible_alloc(const buffer_use& use, std::string_view verb,
                             std::string_view alloc_verb) const {
    auto it = events_.alloc.find(use.buffer);
    if (it != events_.alloc.end() && tree_.encloses(it->second.frame, use.where.frame)) return;
    if (auto ext = events_.external.find(use.buffer);
        ext != events_.external.end() && tree_.encloses(ext->second, use.where.frame))
      return;
    std::string message = "node '" + path(use.where) + "' " + std::string(verb) + " buffer '" +
                          std::string(use.buffer) + "', which no mem_alloc node of its graph or " +
                          "an enclosing one " + std::string(alloc_verb);
    std::vector<std::string> nodes{path(use.where)};
    if (it != events_.alloc.end()) {
      message += " (it is allocated by '" + path(it->second) + "' in " +
                 tree_.at(it->second.frame).view.description() + ", out of its reach)";
      nodes.push_back(path(it->second));
    }
    throw check_error(std::move(message), std::move(nodes));
  }

  // Users of `buffer`: its buffer_ref readers, then its free (the last use).
  std::vector<site> users_of(std::string_view buffer) const {
    std::vector<site> users;
    if (auto it = events_.uses_by_buffer.find(buffer); it != events_.uses_by_buffer.end())
      users = it->second;
    if (auto it = events_.free.find(buffer); it != events_.free.end()) users.push_back(it->second);
    return users;
  }

  std::string through(std::size_t frame, std::size_t rep, site user) const {
    if (user.frame == frame) return "";
    return " (through its enclosing node '" + tree_.at(frame).view.path(rep) + "')";
  }

  void check_window(std::string_view buffer) const {
    const std::vector<site> users = users_of(buffer);
    if (users.empty()) return;
    const site alloc = events_.alloc.at(buffer);
    check_after_alloc(buffer, alloc, users);
    if (auto it = events_.free.find(buffer); it != events_.free.end())
      check_before_free(buffer, it->second, users);
  }

  void check_after_alloc(std::string_view buffer, site alloc, const std::vector<site>& users) const {
    const graph_view& view = tree_.at(alloc.frame).view;
    std::vector<std::size_t> reps;
    std::uint32_t max_rank = 0;
    for (const site& u : users) {
      reps.push_back(tree_.representative(alloc.frame, u.frame, u.node));
      max_rank = std::max(max_rank, view.rank()[reps.back()]);
    }
    view.sweep_forward(alloc.node, max_rank);
    for (std::size_t k = 0; k < users.size(); ++k) {
      if (reps[k] != alloc.node && view.is_marked(reps[k])) continue;
      const bool is_free = k + 1 == users.size() && events_.free.count(buffer);
      throw check_error("node '" + path(users[k]) + "' " + (is_free ? "frees" : "uses") +
                            " buffer '" + std::string(buffer) + "' but is not ordered after '" +
                            path(alloc) + "', the node that allocates it" +
                            through(alloc.frame, reps[k], users[k]),
                        {path(users[k]), path(alloc)});
    }
  }

  void check_before_free(std::string_view buffer, site free, const std::vector<site>& users) const {
    // The frames from the free's graph up to the top level.
    std::vector<bool> on_free_chain(tree_.size(), false);
    for (std::size_t f = free.frame; f != no_frame; f = tree_.at(f).parent) on_free_chain[f] = true;

    struct pending {
      std::size_t user;  // index into users
      std::size_t rep;   // the user's representative in the meeting frame
    };
    // Grouped by the frame where user and free meet; ordered for determinism.
    std::map<std::size_t, std::vector<pending>> by_meeting_frame;
    for (std::size_t k = 0; k + 1 < users.size(); ++k) {  // the last user is the free
      std::size_t meet = users[k].frame;
      while (!on_free_chain[meet]) meet = tree_.at(meet).parent;
      by_meeting_frame[meet].push_back(
          {k, tree_.representative(meet, users[k].frame, users[k].node)});
    }

    std::size_t first_late = users.size();
    std::size_t late_rep = 0;
    std::size_t late_frame = 0;
    for (const auto& [meet, group] : by_meeting_frame) {
      const graph_view& view = tree_.at(meet).view;
      const std::size_t free_rep = tree_.representative(meet, free.frame, free.node);
      std::uint32_t min_rank = view.rank()[free_rep];
      for (const pending& p : group) min_rank = std::min(min_rank, view.rank()[p.rep]);
      view.sweep_backward(free_rep, min_rank);
      for (const pending& p : group) {
        // Same representative: user and free share an enclosing node whose
        // own graph orders them (checked there), unless they sit in sibling
        // bodies, where a free cannot be.
        if (p.rep == free_rep || view.is_marked(p.rep)) continue;
        if (p.user < first_late) {
          first_late = p.user;
          late_rep = p.rep;
          late_frame = meet;
        }
      }
    }
    if (first_late == users.size()) return;
    const site user = users[first_late];
    throw check_error("node '" + path(user) + "' uses buffer '" + std::string(buffer) +
                          "' but is not ordered before '" + path(free) +
                          "', the node that frees it" + through(late_frame, late_rep, user),
                      {path(user), path(free)});
  }

  // Every operand of node `at` that views an allocated buffer stays inside
  // the allocation (buffer_bounds.hpp). The size of an external buffer is
  // not known here.
  void check_bounds(site at) const {
    const node& n = tree_.at(at.frame).spec().nodes[at.node];
    const auto within = [&](const value& v, view_access access, std::size_t extent) {
      const auto* b = std::get_if<buffer_ref>(&v.source);
      if (!b) return;
      const auto alloc = events_.alloc.find(b->name);
      if (alloc == events_.alloc.end()) return;  // external
      const site made = alloc->second;
      const std::size_t size =
          std::get<mem_alloc_node>(tree_.at(made.frame).spec().nodes[made.node].params).bytes;
      if (detail::view_within(b->offset_bytes, extent, size)) return;
      throw check_error(detail::view_past_allocation(kind_name(n.kind()), path(at), b->name, access,
                                                     b->offset_bytes, extent, size, path(made)),
                        {path(at), path(made)});
    };
    if (const auto* c = std::get_if<memcpy_node>(&n.params)) {
      within(c->dst, view_access::writes, c->bytes);
      within(c->src, view_access::reads, c->bytes);
    } else if (const auto* m = std::get_if<memset_node>(&n.params)) {
      within(m->dst, view_access::sets,
             detail::memset_extent(m->element_size, m->width, m->height, m->pitch_bytes));
    } else {
      for_each_value(n, [&](const value& v) { within(v, view_access::address, 0); });
    }
  }

  const spec_tree& tree_;
  buffer_events events_;
};

}  // namespace

void check_buffer_lifetimes(const spec_tree& tree) { lifetime_checker(tree).run(); }

}  // namespace cudag::check_detail

namespace cudag::detail {

std::string view_past_allocation(std::string_view kind, std::string_view node,
                                 std::string_view buffer, view_access access, std::size_t offset,
                                 std::size_t extent, std::size_t size, std::string_view alloc_node) {
  std::string text = std::string(kind) + " node '" + std::string(node) + "' ";
  const std::string_view verb = access == view_access::reads    ? "reads"
                                : access == view_access::writes ? "writes"
                                                                : "sets";
  if (access == view_access::address)
    text += "is given buffer '" + std::string(buffer) + "' at byte " + std::to_string(offset);
  else if (extent > ~std::size_t{0} - offset || extent == ~std::size_t{0})
    text += std::string(verb) + " more bytes than std::size_t holds from byte " +
            std::to_string(offset) + " of buffer '" + std::string(buffer) + "'";
  else
    text += std::string(verb) + " bytes [" + std::to_string(offset) + ", " +
            std::to_string(offset + extent) + ") of buffer '" + std::string(buffer) + "'";
  return text + ", past the end of its " + std::to_string(size) + " bytes (allocated by '" +
         std::string(alloc_node) + "')";
}

void refuse_view_past_allocation(std::string_view kind, std::string_view node,
                                 std::string_view buffer, view_access access, std::size_t offset,
                                 std::size_t extent, std::size_t size, std::string_view alloc_node) {
  throw error(view_past_allocation(kind, node, buffer, access, offset, extent, size, alloc_node),
              cudaSuccess, {}, std::string(node));
}

}  // namespace cudag::detail
