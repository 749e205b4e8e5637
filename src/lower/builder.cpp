#include "cudag/builder.hpp"

#include <algorithm>

#include "cudag/error.hpp"

namespace cudag {

const std::string& node_ref::name() const {
  // Its node went into the spec build() && returned; the builder keeps no
  // name of it (copying them all would slow every build() &&).
  if (generation_ != owner_->generation_) {
    const std::string position = "#" + std::to_string(index_);
    throw error("graph '" + owner_->spec_.name + "': node " + position +
                    " was made before this builder's build() && and belongs to the spec it "
                    "returned",
                cudaSuccess, {}, position);
  }
  // The builder itself was moved from: its nodes went with it.
  if (index_ >= owner_->spec_.nodes.size())
    throw error("node #" + std::to_string(index_) + " is used after its builder was moved from");
  return owner_->spec_.nodes[index_].name;
}

node_ref& node_ref::access(std::size_t argument, access_mode mode, std::size_t extent_bytes) {
  (void)name();  // refuses a ref made before build() && or of a moved-from builder
  cudag::node& n = owner_->spec_.nodes[index_];
  const auto declare = [&](access_declarations& declared, const auto& args) {
    // The message is made only for a refusal: a declaration is on the
    // builder path of every node that makes one.
    const auto refuse = [&](const std::string& why) {
      throw error("graph '" + owner_->spec_.name + "': " + std::string(kind_name(n.kind())) + " node '" +
                      n.name + "' declares an access through argument " + std::to_string(argument) + ", " + why,
                  cudaSuccess, {}, n.name);
    };
    if (argument >= args.size()) refuse("but it takes " + std::to_string(args.size()) + " arguments");
    const value& v = args[argument];
    if (!v.type.is_pointer && !std::holds_alternative<buffer_ref>(v.source))
      refuse("a " + v.type.name() + ", which points at no memory");
    const access_declaration d{static_cast<std::uint32_t>(argument), mode, extent_bytes};
    for (access_declaration& old : declared)
      if (old.argument == d.argument) return void(old = d);
    declared.push_back(d);
  };
  if (auto* k = std::get_if<kernel_node>(&n.params)) declare(k->accesses, k->args);
  else if (auto* h = std::get_if<host_node>(&n.params)) declare(h->accesses, h->args);
  else if (auto* c = std::get_if<captured_node>(&n.params)) declare(c->accesses, c->args);
  else
    throw error("graph '" + owner_->spec_.name + "': " + std::string(kind_name(n.kind())) + " node '" +
                    n.name + "' declares an access; only kernel, host and captured nodes may (a " +
                    std::string(kind_name(n.kind())) + " node's accesses are known)",
                cudaSuccess, {}, n.name);
  return *this;
}

builder::builder(std::string graph_name) { spec_.name = std::move(graph_name); }

void builder::declare_param(const std::string& name, const type_tag& type, bool external_buffer) {
  if (spec_.find_param(name))
    throw error("graph '" + spec_.name + "': parameter '" + name + "' declared twice");
  spec_.params.push_back({name, type, external_buffer});
}

namespace detail {
void refuse_allocation_size(std::string_view graph, std::string_view node, std::size_t count,
                            std::size_t element_bytes) {
  const std::string in_graph = graph.empty() ? "" : "graph '" + std::string(graph) + "': ";
  throw error(in_graph + "mem_alloc node '" + std::string(node) + "': " + std::to_string(count) +
                  " elements of " + std::to_string(element_bytes) + " bytes overflow std::size_t",
              cudaSuccess, {}, std::string(node));
}
void refuse_buffer_offset(std::string_view buffer, std::size_t offset, std::size_t added,
                          std::size_t element_bytes) {
  const std::string elements = offset == 0 ? std::to_string(added)
                               : added == 0 ? std::to_string(offset)
                                            : std::to_string(offset) + " + " + std::to_string(added);
  throw error("buffer '" + std::string(buffer) + "': an offset of " + elements + " elements of " +
              std::to_string(element_bytes) + " bytes overflows std::size_t");
}
void refuse_view_past_end(std::string_view buffer, std::size_t offset, std::size_t element_bytes,
                          std::size_t allocation_bytes) {
  throw error("buffer '" + std::string(buffer) + "': a view at element " + std::to_string(offset) +
                  " of " + std::to_string(element_bytes) + " bytes is past the end of its " +
                  std::to_string(allocation_bytes) + "-byte allocation (" +
                  std::to_string(allocation_bytes / element_bytes) + " elements)",
              cudaErrorInvalidValue);
}
}  // namespace detail

condition_handle builder::condition(std::string name, unsigned default_value, bool assign_default) {
  const bool exists = std::any_of(spec_.conditions.begin(), spec_.conditions.end(),
                                  [&](const condition_decl& c) { return c.name == name; });
  if (exists) throw error("graph '" + spec_.name + "': condition '" + name + "' declared twice");
  spec_.conditions.push_back({name, default_value, assign_default});
  return {std::move(name)};
}

namespace {
/// FNV-1a: node names are short, and for a few bytes it is several times
/// cheaper than the standard library's hash; the table's size is a power of
/// two, so the high bits are folded in.
std::size_t hash_name(std::string_view name) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return static_cast<std::size_t>(h ^ (h >> 29));
}
}  // namespace

// A slot holds (the name's hash_name() low 32 bits << 32) | (node index + 1);
// 0 is empty. Those 32 bits pick the slot, so that a growing table places
// every entry again without reading its name; a name is compared only when
// its 32 hash bits match, so a probe past other names touches no node (at a
// million nodes, each node touched is a cache and TLB miss).
namespace {
std::uint32_t hash_bits_of(std::string_view name) noexcept {
  return static_cast<std::uint32_t>(hash_name(name));
}
constexpr std::uint64_t slot_of(std::uint32_t hash, std::size_t index) noexcept {
  return (static_cast<std::uint64_t>(hash) << 32) | (index + 1);
}
constexpr std::uint32_t hash_bits(std::uint64_t slot) noexcept {
  return static_cast<std::uint32_t>(slot >> 32);
}
constexpr std::size_t index_of(std::uint64_t slot) noexcept {
  return static_cast<std::uint32_t>(slot) - std::size_t{1};
}
}  // namespace

std::size_t builder::find_node(std::string_view name) const noexcept {
  if (name_slots_.empty()) return npos;
  const std::size_t mask = name_slots_.size() - 1;
  const std::uint32_t hash = hash_bits_of(name);
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    const std::uint64_t slot = name_slots_[i];
    if (slot == 0) return npos;
    if (hash_bits(slot) == hash && spec_.nodes[index_of(slot)].name == name)
      return index_of(slot);
  }
}

void builder::rebuild_name_table(std::size_t slots) {
  // Every indexed node is in the old table, its hash bits with it.
  std::vector<std::uint64_t> grown(slots, 0);
  const std::size_t mask = grown.size() - 1;
  for (const std::uint64_t slot : name_slots_) {
    if (slot == 0) continue;
    std::size_t i = hash_bits(slot) & mask;
    while (grown[i] != 0) i = (i + 1) & mask;
    grown[i] = slot;
  }
  name_slots_.swap(grown);
}

void builder::reserve(std::size_t nodes, std::size_t edges) {
  spec_.nodes.reserve(nodes);
  edges_.reserve(edges);
  // A name table that stays at most half full up to `nodes`.
  std::size_t slots = 64;
  while (slots < 2 * nodes) slots *= 2;
  if (slots > name_slots_.size()) rebuild_name_table(slots);
}

bool builder::index_last_node() {
  const std::size_t count = spec_.nodes.size();
  // Load factor at most one half.
  if (count * 2 > name_slots_.size())
    rebuild_name_table(std::max<std::size_t>(64, name_slots_.size() * 2));
  const std::string& name = spec_.nodes.back().name;
  const std::size_t mask = name_slots_.size() - 1;
  const std::uint32_t hash = hash_bits_of(name);
  std::size_t i = hash & mask;
  for (; name_slots_[i] != 0; i = (i + 1) & mask)
    if (hash_bits(name_slots_[i]) == hash &&
        spec_.nodes[index_of(name_slots_[i])].name == name)
      return false;
  name_slots_[i] = slot_of(hash, count - 1);
  return true;
}

void builder::unindex_last_node() noexcept {
  // The last node went in last: it took the first empty slot of its probe
  // run, and every entry further along that run was placed before, past an
  // empty slot here, so none depends on it. Emptying its slot restores the
  // table as it was.
  const std::size_t last = spec_.nodes.size() - 1;
  const std::size_t mask = name_slots_.size() - 1;
  std::size_t i = hash_bits_of(spec_.nodes.back().name) & mask;
  while (index_of(name_slots_[i]) != last) i = (i + 1) & mask;
  name_slots_[i] = 0;
}

builder::pending_node::pending_node(builder& owner, std::string&& name) : owner_(owner) {
  graph_spec& spec = owner.spec_;
  if (name.empty()) {
    const std::string position = "#" + std::to_string(spec.nodes.size());
    throw error("graph '" + spec.name + "': node " + position +
                    " has an empty name; every node needs a unique name",
                cudaSuccess, {}, position);
  }
  spec.nodes.emplace_back().name = std::move(name);
  bool indexed = false;
  try {
    indexed = owner.index_last_node();
  } catch (...) {
    spec.nodes.pop_back();
    throw;
  }
  if (!indexed) {
    std::string taken = std::move(spec.nodes.back().name);
    spec.nodes.pop_back();
    throw error("graph '" + spec.name + "': duplicate node name '" + taken + "'", cudaSuccess, {},
                taken);
  }
}

builder::pending_node::~pending_node() {
  if (committed_) return;
  owner_.unindex_last_node();
  owner_.spec_.nodes.pop_back();
}

node_ref builder::pending_node::commit() noexcept {
  committed_ = true;
  return node_ref(owner_, owner_.spec_.nodes.size() - 1);
}

node_ref builder::add(std::string name, node_params params) {
  pending_node slot(*this, std::move(name));
  spec_.nodes.back().params = std::move(params);
  return slot.commit();
}

void builder::apply_launch(kernel_node& n, const launch_config& config) {
  n.grid = config.grid;
  n.block = config.block;
  n.shared_bytes = config.shared_bytes;
  // The node is new: its rules are empty, and most launches have none.
  if (config.grid_from) n.grid_from = config.grid_from;
  if (!config.shape_rules.empty()) n.shape_rules = config.shape_rules;
  n.priority = config.priority;
  set_launch_attributes(n, config.attributes);
}

node_ref builder::child(std::string name, graph_spec graph) {
  return add(std::move(name), child_node{std::make_shared<const graph_spec>(std::move(graph))});
}

node_ref builder::child(std::string name, resolved_graph graph) {
  detail::resolved_parts parts = detail::resolved_parts::take(std::move(graph));
  node_ref n =
      add(std::move(name), child_node{std::make_shared<const graph_spec>(std::move(parts.spec))});
  nested_rows_.push_back({static_cast<std::uint32_t>(n.index()), std::move(parts.rows)});
  return n;
}

node_ref builder::empty(std::string name) { return add(std::move(name), empty_node{}); }

node_ref builder::add_conditional(std::string name, conditional_kind kind,
                                  const condition_handle& c, std::vector<graph_spec> bodies) {
  return add(std::move(name), conditional_node{kind, c.name, std::move(bodies)});
}

node_ref builder::add_conditional(std::string name, conditional_kind kind,
                                  const condition_handle& c, std::vector<resolved_graph> bodies) {
  std::vector<graph_spec> specs;
  nested_rows rows;
  specs.reserve(bodies.size());
  for (resolved_graph& body : bodies) {
    detail::resolved_parts parts = detail::resolved_parts::take(std::move(body));
    specs.push_back(std::move(parts.spec));
    rows.rows.add(parts.rows);
  }
  node_ref n = add_conditional(std::move(name), kind, c, std::move(specs));
  rows.node = static_cast<std::uint32_t>(n.index());
  nested_rows_.push_back(std::move(rows));
  return n;
}

namespace {
template <class Body>
std::vector<Body> bodies_of(Body first) {
  std::vector<Body> bodies;
  bodies.push_back(std::move(first));
  return bodies;
}
template <class Body>
std::vector<Body> bodies_of(Body first, Body second) {
  std::vector<Body> bodies;
  bodies.push_back(std::move(first));
  bodies.push_back(std::move(second));
  return bodies;
}
}  // namespace

node_ref builder::if_then(std::string name, const condition_handle& c, resolved_graph then_body) {
  return add_conditional(std::move(name), conditional_kind::if_then, c, bodies_of(std::move(then_body)));
}
node_ref builder::if_else(std::string name, const condition_handle& c, resolved_graph then_body,
                          resolved_graph else_body) {
  return add_conditional(std::move(name), conditional_kind::if_else, c,
                         bodies_of(std::move(then_body), std::move(else_body)));
}
node_ref builder::while_loop(std::string name, const condition_handle& c, resolved_graph body) {
  return add_conditional(std::move(name), conditional_kind::while_loop, c, bodies_of(std::move(body)));
}

node_ref builder::if_then(std::string name, const condition_handle& c, graph_spec then_body) {
  return add_conditional(std::move(name), conditional_kind::if_then, c, bodies_of(std::move(then_body)));
}
node_ref builder::if_else(std::string name, const condition_handle& c, graph_spec then_body,
                          graph_spec else_body) {
  return add_conditional(std::move(name), conditional_kind::if_else, c,
                         bodies_of(std::move(then_body), std::move(else_body)));
}
node_ref builder::while_loop(std::string name, const condition_handle& c, graph_spec body) {
  return add_conditional(std::move(name), conditional_kind::while_loop, c, bodies_of(std::move(body)));
}

node_ref builder::switch_case(std::string name, const condition_handle& c,
                              std::vector<graph_spec> cases) {
  return add_conditional(std::move(name), conditional_kind::switch_case, c, std::move(cases));
}

void builder::edge(const node_ref& from, const node_ref& to) { edge(from, to, edge_kind::full); }

void builder::edge(const node_ref& from, const node_ref& to, edge_kind kind) {
  const auto current = [&](const node_ref& r) {
    return r.owner_ == this && r.generation_ == generation_ && r.index_ < spec_.nodes.size();
  };
  if (!current(from) || !current(to)) refuse_edge(from, to);
  if (from.index_ == to.index_)
    throw error("graph '" + spec_.name + "': edge " + from.name() + " -> " + to.name() +
                    " is a cycle of one node",
                cudaSuccess, {}, to.name());
  cudag::node& target = spec_.nodes[to.index_];
  auto& deps = target.deps;
  const std::string& dep = spec_.nodes[from.index_].name;
  const std::uint64_t key = (static_cast<std::uint64_t>(to.index_) << 32) | from.index_;
  // A short list is scanned; a long one (a join of many nodes) is looked up
  // in long_list_edges_, so that a fan-in of n costs O(n), not O(n^2).
  const std::size_t listed = deps.size();
  if (listed >= long_list_from ? has_long_list_edge(key)
                               : std::find(deps.begin(), deps.end(), dep) != deps.end()) {
    const auto at = static_cast<std::size_t>(std::find(deps.begin(), deps.end(), dep) - deps.begin());
    if (target.dependency_kind(at) != kind)
      throw error("graph '" + spec_.name + "': edge " + from.name() + " -> " + to.name() + " is " +
                      std::string(edge_kind_name(target.dependency_kind(at))) +
                      " and is added again as " + std::string(edge_kind_name(kind)),
                  cudaSuccess, {}, to.name());
    return;
  }
  // The keys this edge puts in the set: none while the list stays short,
  // the whole list as it turns long, then its own.
  const std::size_t keys = listed + 1 < long_list_from ? 0 : listed + 1 == long_list_from ? long_list_from : 1;
  // Room first, so that the lists grow together or not at all.
  if (edges_.size() == edges_.capacity()) edges_.reserve(std::max<std::size_t>(64, 2 * edges_.size()));
  room_for_long_list_edges(keys);
  // Kinds are kept only once a node has an edge other than full; room for
  // both lists first, so that they grow together or not at all.
  const bool kinds_kept = kind != edge_kind::full || !target.dependency_kinds.empty();
  if (kinds_kept) {
    target.dependency_kinds.reserve(listed + 1);
    deps.reserve(listed + 1);
    target.dependency_kinds.resize(listed, edge_kind::full);
    target.dependency_kinds.push_back(kind);
  }
  deps.push_back(dep);
  edges_.push_back(key);
  if (keys == 1) {
    put_long_list_edge(key);
  } else if (keys != 0) {
    for (const std::string& name : deps)
      put_long_list_edge((static_cast<std::uint64_t>(to.index_) << 32) | find_node(name));
  }
}

namespace {
std::size_t long_list_slot(std::uint64_t key, std::size_t mask) noexcept {
  return static_cast<std::size_t>(key * 0x9E3779B97F4A7C15ull >> 32) & mask;
}
}  // namespace

bool builder::has_long_list_edge(std::uint64_t key) const noexcept {
  if (long_list_edges_.empty()) return false;
  const std::size_t mask = long_list_edges_.size() - 1;
  for (std::size_t i = long_list_slot(key, mask); long_list_edges_[i] != 0; i = (i + 1) & mask)
    if (long_list_edges_[i] == key) return true;
  return false;
}

void builder::room_for_long_list_edges(std::size_t more) {
  if (more == 0 || 2 * (long_list_edge_count_ + more) <= long_list_edges_.size()) return;  // load at most 1/2
  std::size_t slots = std::max<std::size_t>(64, long_list_edges_.size());
  while (2 * (long_list_edge_count_ + more) > slots) slots *= 2;
  std::vector<std::uint64_t> grown(slots, 0);
  const std::size_t mask = slots - 1;
  for (const std::uint64_t k : long_list_edges_) {
    if (k == 0) continue;
    std::size_t i = long_list_slot(k, mask);
    while (grown[i] != 0) i = (i + 1) & mask;
    grown[i] = k;
  }
  long_list_edges_.swap(grown);
}

void builder::put_long_list_edge(std::uint64_t key) noexcept {
  const std::size_t mask = long_list_edges_.size() - 1;
  std::size_t i = long_list_slot(key, mask);
  while (long_list_edges_[i] != 0) i = (i + 1) & mask;
  long_list_edges_[i] = key;
  ++long_list_edge_count_;
}

void builder::refuse_edge(const node_ref& from, const node_ref& to) const {
  (void)from.name(), (void)to.name();  // refuses refs made before build() && or moved from
  if (from.owner_ != this || to.owner_ != this)
    throw error("graph '" + spec_.name + "': edge " + from.name() + " -> " + to.name() +
                    " joins nodes of different graphs",
                cudaSuccess, {}, to.name());
  throw error("graph '" + spec_.name + "': edge #" + std::to_string(from.index_) + " -> #" +
              std::to_string(to.index_) + " joins nodes this builder does not hold");
}

graph_spec builder::build() const& { return spec_; }

graph_spec builder::build() && {
  graph_spec out = std::move(spec_);
  start_again(out.name);
  return out;
}

detail::dependency_rows builder::tree_rows() const {
  detail::dependency_rows rows;
  {
    std::vector<std::uint32_t> begin, deps;
    write_dependencies(begin, deps);
    rows.add_first(std::move(begin), std::move(deps));
  }
  // Without a nested graph given resolved, every nested graph is by name:
  // past the last entry, so none needs one.
  if (nested_rows_.empty()) return rows;
  auto given = nested_rows_.begin();
  for (std::uint32_t v = 0; v < spec_.nodes.size(); ++v) {
    const node_params& p = spec_.nodes[v].params;
    if (given != nested_rows_.end() && given->node == v) {
      rows.add((given++)->rows);
    } else if (const auto* child = std::get_if<child_node>(&p)) {
      rows.add_by_name(child->graph ? detail::graphs_in_tree(*child->graph, 1) : 1);
    } else if (const auto* cond = std::get_if<conditional_node>(&p)) {
      for (const graph_spec& body : cond->bodies) rows.add_by_name(detail::graphs_in_tree(body, 1));
    }
  }
  return rows;
}

resolved_graph builder::resolve() const& { return resolved_graph(spec_, tree_rows()); }

resolved_graph builder::resolve() && {
  detail::dependency_rows rows = tree_rows();
  resolved_graph out(std::move(spec_), std::move(rows));
  start_again(out.spec().name);
  return out;
}

void builder::start_again(const std::string& graph_name) {
  // Empty again, for the next graph; messages still name this one.
  spec_ = graph_spec();
  spec_.name = graph_name;
  edges_.clear();
  nested_rows_.clear();
  long_list_edges_.clear();
  long_list_edge_count_ = 0;
  name_slots_.clear();
  ++generation_;
}

void builder::write_dependencies(std::vector<std::uint32_t>& begin,
                                 std::vector<std::uint32_t>& deps) const {
  const std::size_t count = spec_.nodes.size();
  begin.resize(count + 1);
  std::uint32_t total = 0;
  for (std::size_t v = 0; v < count; ++v) {
    begin[v] = total;
    total += static_cast<std::uint32_t>(spec_.nodes[v].deps.size());
  }
  begin[count] = total;
  deps.resize(edges_.size());
  // Edges added in the order of the nodes they lead to (a chain, a node's
  // edges added as it is made) are in the resolved order already.
  bool in_order = true;
  for (std::size_t e = 1; e < edges_.size() && in_order; ++e)
    in_order = (edges_[e - 1] >> 32) <= (edges_[e] >> 32);
  if (in_order) {
    for (std::size_t e = 0; e < edges_.size(); ++e) deps[e] = static_cast<std::uint32_t>(edges_[e]);
    return;
  }
  // Otherwise a stable counting sort by the node they lead to: each node's
  // dependencies keep the order edge() listed them in.
  std::vector<std::uint32_t> next(begin.begin(), begin.end() - 1);
  for (const std::uint64_t e : edges_) deps[next[e >> 32]++] = static_cast<std::uint32_t>(e);
}

void builder::edge(std::string_view from, std::string_view to, edge_kind kind) {
  const std::size_t f = find_node(from);
  const std::size_t t = find_node(to);
  if (f == npos || t == npos) {
    const std::string_view unknown = f == npos ? from : to;
    throw error("graph '" + spec_.name + "': edge " + std::string(from) + " -> " +
                    std::string(to) + " names unknown node '" + std::string(unknown) + "'",
                cudaSuccess, {}, std::string(unknown));
  }
  edge(node_ref(*this, f), node_ref(*this, t), kind);
}

node_ref builder::node(std::string_view name) {
  const std::size_t found = find_node(name);
  if (found == npos)
    throw error("graph '" + spec_.name + "': no node named '" + std::string(name) + "'",
                cudaSuccess, {}, std::string(name));
  return node_ref(*this, found);
}

}  // namespace cudag
