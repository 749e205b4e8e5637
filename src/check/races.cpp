// Races: two nodes of one graph that touch the same bytes, one of them
// writing (memory_access.hpp says who reads and who writes), with no path
// between them. A nested node's access belongs, in every enclosing graph, to
// the node that encloses it there; in its own graph it is judged with its
// siblings.
//
// Not quadratic: per memory and graph, the accessors in topological order,
// and only the reachability queries that transitivity leaves: every write
// must follow the last write and every read or concurrent update since it
// (a write that follows those follows all before them), a read must follow
// the last write and the concurrent updates since it, a concurrent update
// the last write and the reads since it. Each query is a backward search
// from the later node that goes no lower in the order than the earlier one.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <typeinfo>
#include <unordered_map>
#include <variant>

#include "check_passes.hpp"
#include "cudag/buffer_bounds.hpp"
#include "cudag/check.hpp"
#include "cudag/memory_access.hpp"

namespace cudag::check_detail {
namespace {

constexpr std::uint32_t no_memory = ~std::uint32_t{0};

constexpr std::uint32_t none = ~std::uint32_t{0};

/// One node's access to one memory, as the graph `frame` sees it: through
/// node `rep` of that graph (the node itself, or the node enclosing it).
/// 16 bytes: a large graph writes one per pointer argument, so what only
/// some accesses have (a graph other than the top level, a nested node's own
/// place, a view's bytes) is kept aside, in an access_detail.
struct access {
  std::uint32_t memory;
  std::uint32_t rep;
  std::uint32_t rank;  ///< rep's position in its graph's order (sorted by, read once)
  std::uint32_t tail;  ///< the access_mode in the low 2 bits; above, 0 or 1 + its detail's index
};

/// The rare parts of an access; an access without one is of the top-level
/// graph, by `rep` itself, to all of the memory.
struct access_detail {
  std::uint32_t frame;
  std::uint32_t origin;  ///< index into origins_ of the touching node; none: rep itself
  std::uint32_t view;    ///< index into views_ of its bytes; none: all of the memory
};

/// The accesses as collected, in blocks that are never moved: a large graph
/// collects millions, and a growing array would copy them (and touch fresh
/// memory twice) each time it doubled.
class access_log {
 public:
  void push_back(const access& a) {
    if (blocks_.empty() || blocks_.back().size() == blocks_.back().capacity()) {
      // Doubling from a small first block: a small graph's check maps no
      // memory of its own for a few accesses.
      const std::size_t size = blocks_.empty() ? first_block : std::min(2 * blocks_.back().size(), block_size);
      blocks_.emplace_back();
      blocks_.back().reserve(size);
    }
    blocks_.back().push_back(a);
  }
  [[nodiscard]] bool empty() const noexcept { return blocks_.empty(); }
  template <class F>
  void for_each(F&& f) const {
    for (const std::vector<access>& block : blocks_)
      for (const access& a : block) f(a);
  }
  void clear() noexcept { blocks_.clear(); }

 private:
  static constexpr std::size_t first_block = 256;
  static constexpr std::size_t block_size = std::size_t{1} << 16;  // 1 MiB
  std::vector<std::vector<access>> blocks_;
};

/// Where a nested node is.
struct origin_site {
  std::uint32_t frame;
  std::uint32_t node;
};

/// The bytes an access touches: from `begin`, `extent` of them.
struct byte_view {
  std::size_t begin = 0;
  std::size_t extent = to_the_end;
};

/// What a memory is called in messages.
struct memory_name {
  std::string_view name;         ///< a parameter's or buffer's; empty for an address
  std::uintptr_t address = 0;
  bool is_buffer = false;        ///< allocated by the graph
  std::vector<std::string_view> bound_names;  ///< parameters bound to this address
};

/// CUDA's handles are pointers to types no node reads or writes through.
/// Compared by mangled name: a pointer to an incomplete type may have a
/// type_info of its own in each translation unit, which libc++ tells apart.
bool is_cuda_handle(const type_tag& type) {
  static const std::type_info* const handles[] = {
      &typeid(cudaStream_t),    &typeid(cudaEvent_t),     &typeid(cudaGraph_t),
      &typeid(cudaGraphExec_t), &typeid(cudaGraphNode_t), &typeid(cudaUserObject_t),
      &typeid(cudaArray_t),     &typeid(cudaMipmappedArray_t)};
  if (!type.info) return false;
  const auto unique_name = [](const std::type_info& t) {
    std::string_view name = t.name();
    if (!name.empty() && name.front() == '*') name.remove_prefix(1);
    return name;
  };
  for (const std::type_info* h : handles)
    if (unique_name(*h) == unique_name(*type.info)) return true;
  return false;
}

std::string hex(std::uintptr_t address) {
  char text[2 + 2 * sizeof(address) + 1];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(address));
  return text;
}

class race_finder {
 public:
  race_finder(const spec_tree& tree, std::span<const binding> bindings, bool all)
      : tree_(tree), all_(all) {
    bind_addresses(bindings);
    memory_by_decl_.resize(tree.size());
  }

  std::vector<race_report> run() {
    collect();
    return judge_all();
  }

  /// After collect_node() saw every node of the tree, in pre-order.
  std::vector<race_report> judge_all() {
    judge();
    return std::move(races_);
  }

 private:
  // ---------------------------------------------------------- memories --
  void bind_addresses(std::span<const binding> bindings) {
    if (bindings.empty()) return;
    for (const binding& b : bindings) {
      if (!b.type.is_pointer || b.bytes.size() != sizeof(void*)) continue;
      std::uintptr_t address = 0;
      std::memcpy(&address, b.bytes.data(), sizeof(address));
      if (address == 0) continue;
      const std::uint32_t id = address_memory(address);
      bound_.emplace(b.name, id);
      memories_[id].bound_names.push_back(b.name);
    }
  }

  std::uint32_t address_memory(std::uintptr_t address) {
    auto [it, fresh] = by_address_.emplace(address, static_cast<std::uint32_t>(memories_.size()));
    if (fresh) {
      memories_.push_back(memory_name{{}, address, false, {}});
      modes_.push_back(0);
      handles_.push_back(unknown);
    }
    return it->second;
  }

  /// The memory named `name`; `is_buffer()` says, for a name seen first,
  /// whether it is a graph-allocated buffer (asked once a name).
  template <class IsBuffer>
  std::uint32_t named_memory(std::string_view name, IsBuffer&& is_buffer) {
    // Most graphs pass a few names to many nodes: a recent one is asked
    // again far more often than any other, and comparing beats hashing.
    for (const recent_name& r : recent_)
      if (r.memory != no_memory && r.name == name) return r.memory;
    const std::uint32_t id = find_or_add(name, is_buffer);
    recent_[next_recent_] = {name, id};
    next_recent_ = (next_recent_ + 1) % recent_.size();
    return id;
  }

  template <class IsBuffer>
  std::uint32_t find_or_add(std::string_view name, IsBuffer& is_buffer) {
    if (!bound_.empty())
      if (auto b = bound_.find(name); b != bound_.end()) return b->second;
    if (auto it = by_name_.find(name); it != by_name_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(memories_.size());
    by_name_.emplace(name, id);
    memories_.push_back(memory_name{name, 0, is_buffer(), {}});
    modes_.push_back(0);
    handles_.push_back(unknown);
    return id;
  }

  /// The memory value `v` of a node of frame `f` points at, and the byte
  /// its view starts at; no_memory where it points at none. `decl`: the
  /// declaration a parameter reference resolved to, where known.
  std::pair<std::uint32_t, std::size_t> memory_of(std::size_t f, const value& v,
                                                  spec_tree::param_found decl) {
    if (const auto* b = std::get_if<buffer_ref>(&v.source))
      return {named_memory(b->name, [&] { return !tree_.find_param(f, b->name); }), b->offset_bytes};
    if (!v.type.is_pointer) return {no_memory, 0};
    std::uint32_t memory = no_memory;
    if (const auto* p = std::get_if<param_ref>(&v.source)) {
      memory = decl.decl ? declared_memory(decl) : named_memory(p->name, [] { return false; });
    } else if (const auto* l = std::get_if<literal>(&v.source); l && l->bytes.size() == sizeof(void*)) {
      std::uintptr_t address = 0;
      std::memcpy(&address, l->bytes.data(), sizeof(address));
      if (address != 0) memory = address_memory(address);
    }
    if (memory == no_memory) return {no_memory, 0};
    // A handle is judged once a memory (the type is compared by name).
    std::uint8_t& handle = handles_[memory];
    if (handle == unknown) handle = is_cuda_handle(v.type) ? yes : no;
    return {handle == yes ? no_memory : memory, 0};
  }

  /// The memory of a parameter the node rules resolved: by its place among
  /// its graph's declarations (an array read, where a hash lookup would
  /// miss the caches the walk over the nodes keeps evicting), its name
  /// looked up once.
  std::uint32_t declared_memory(spec_tree::param_found found) {
    if (found.decl == last_decl_) return last_decl_memory_;
    const auto& declared = tree_.at(found.frame).spec().params;
    std::vector<std::uint32_t>& ids = memory_by_decl_[found.frame];
    if (ids.empty()) ids.assign(declared.size(), no_memory);
    std::uint32_t& id = ids[static_cast<std::size_t>(found.decl - declared.data())];
    if (id == no_memory) id = named_memory(found.decl->name, [] { return false; });
    last_decl_ = found.decl;
    return last_decl_memory_ = id;
  }

  // --------------------------------------------------------- collecting --
  void collect() {
    for (std::size_t f = 0; f < tree_.size(); ++f) {
      const auto& nodes = tree_.at(f).spec().nodes;
      for (std::size_t i = 0; i < nodes.size(); ++i) collect_node(f, i, nodes[i]);
    }
  }

  void add(std::size_t f, std::size_t i, const value& v, spec_tree::param_found decl, access_mode mode,
           std::size_t extent) {
    const auto [memory, begin] = memory_of(f, v, decl);
    if (memory == no_memory) return;
    modes_[memory] |= static_cast<std::uint8_t>(1u << static_cast<unsigned>(mode));
    std::uint32_t view = none;
    if (begin != 0 || extent != to_the_end) {
      view = static_cast<std::uint32_t>(views_.size());
      views_.push_back({begin, extent});
    }
    // In its own graph and, through the enclosing node, in every graph around it.
    std::size_t rep = i;
    std::uint32_t origin = none;
    for (std::size_t at = f; at != no_frame; ) {
      accesses_.push_back({memory, static_cast<std::uint32_t>(rep), tree_.at(at).view.rank()[rep],
                           tail_of(mode, static_cast<std::uint32_t>(at), origin, view)});
      if (tree_.at(at).parent != no_frame && origin == none) {
        origin = static_cast<std::uint32_t>(origins_.size());
        origins_.push_back({static_cast<std::uint32_t>(f), static_cast<std::uint32_t>(i)});
      }
      rep = tree_.at(at).enclosing_node;
      at = tree_.at(at).parent;
    }
  }

  /// An access's tail: its mode, and its detail where it has one.
  std::uint32_t tail_of(access_mode mode, std::uint32_t frame, std::uint32_t origin, std::uint32_t view) {
    std::uint32_t tail = static_cast<std::uint32_t>(mode);
    if (frame == 0 && origin == none && view == none) return tail;
    details_.push_back({frame, origin, view});
    return tail | static_cast<std::uint32_t>(details_.size()) << 2;
  }
  static access_mode mode_of(const access& a) { return static_cast<access_mode>(a.tail & 3u); }
  const access_detail* detail_of(const access& a) const {
    return a.tail >> 2 ? &details_[(a.tail >> 2) - 1] : nullptr;
  }
  std::uint32_t frame_of(const access& a) const {
    const access_detail* d = detail_of(a);
    return d ? d->frame : 0;
  }
  std::uint32_t origin_of(const access& a) const {
    const access_detail* d = detail_of(a);
    return d ? d->origin : none;
  }
  std::uint32_t view_index(const access& a) const {
    const access_detail* d = detail_of(a);
    return d ? d->view : none;
  }

  // Every argument of a kernel, host or captured node, by its type or its
  // declaration (a host or captured node: read and written unless declared).
  template <class Args>
  void add_arguments(std::size_t f, std::size_t i, const Args& args,
                     const access_declarations& declared, bool by_type,
                     std::span<const spec_tree::param_found> resolved) {
    for (const access_declaration& d : declared) {
      const auto refuse = [&](const std::string& why) {
        const std::string at = path(static_cast<std::uint32_t>(f), static_cast<std::uint32_t>(i));
        throw check_error(std::string(kind_name(tree_.at(f).spec().nodes[i].kind())) + " node '" + at +
                              "' declares an access through argument " + std::to_string(d.argument) +
                              ", " + why,
                          {at});
      };
      if (d.argument >= args.size())
        refuse("but it takes " + std::to_string(args.size()) + " arguments");
      const value& v = args[d.argument];
      if (!v.type.is_pointer && !std::holds_alternative<buffer_ref>(v.source))
        refuse("a " + v.type.name() + ", which points at no memory");
    }
    for (std::size_t a = 0; a < args.size(); ++a) {
      const value& v = args[a];
      access_mode mode = by_type && v.type.points_to_const ? access_mode::read : access_mode::read_write;
      std::size_t extent = to_the_end;
      for (const access_declaration& d : declared) {
        if (d.argument != a) continue;
        mode = d.mode;
        extent = d.extent_bytes;
      }
      add(f, i, v, a < resolved.size() ? resolved[a] : spec_tree::param_found{0, nullptr}, mode, extent);
    }
  }

 public:
  /// `resolved`: the declaration each value (for_each_value's order)
  /// resolved to, or empty where the node rules did not resolve them.
  void collect_node(std::size_t f, std::size_t i, const node& n,
                    std::span<const spec_tree::param_found> resolved = {}) {
    const auto decl = [&](std::size_t position) {
      return position < resolved.size() ? resolved[position] : spec_tree::param_found{0, nullptr};
    };
    if (const auto* k = std::get_if<kernel_node>(&n.params)) {
      add_arguments(f, i, k->args, k->accesses, true, resolved);
    } else if (const auto* c = std::get_if<memcpy_node>(&n.params)) {
      add(f, i, c->src, decl(1), access_mode::read, c->bytes);
      add(f, i, c->dst, decl(0), access_mode::read_write, c->bytes);
    } else if (const auto* m = std::get_if<memset_node>(&n.params)) {
      add(f, i, m->dst, decl(0), access_mode::read_write,
          detail::memset_extent(m->element_size, m->width, m->height, m->pitch_bytes));
    } else if (const auto* h = std::get_if<host_node>(&n.params)) {
      add_arguments(f, i, h->args, h->accesses, false, resolved);
    } else if (const auto* cap = std::get_if<captured_node>(&n.params)) {
      add_arguments(f, i, cap->args, cap->accesses, false, resolved);
    }
  }

  // ------------------------------------------------------------ judging --
 private:
  void judge() {
    if (accesses_.empty()) return;
    // Grouped by memory, then graph, then order: a counting sort by memory
    // (linear), then each group sorted by (frame, rank) on its own.
    // Only the memories whose modes may conflict are grouped at all (a
    // parameter every kernel reads is skipped here, however many read it).
    std::vector<std::uint32_t> start(memories_.size() + 1, 0);
    accesses_.for_each([&](const access& a) {
      if (may_conflict(modes_[a.memory])) ++start[a.memory + 1];
    });
    for (std::size_t m = 0; m < memories_.size(); ++m) start[m + 1] += start[m];
    if (start.back() == 0) return;
    std::vector<access> grouped(start.back());
    {
      std::vector<std::uint32_t> next(start.begin(), start.end() - 1);
      accesses_.for_each([&](const access& a) {
        if (may_conflict(modes_[a.memory])) grouped[next[a.memory]++] = a;
      });
    }
    accesses_.clear();
    for (std::size_t m = 0; m < memories_.size(); ++m) {
      const std::span<access> group(grouped.data() + start[m], start[m + 1] - start[m]);
      if (group.size() < 2) continue;
      const auto before = [this](const access& a, const access& b) {
        if (a.tail > 3u || b.tail > 3u)
          if (const std::uint32_t fa = frame_of(a), fb = frame_of(b); fa != fb) return fa < fb;
        if (a.rank != b.rank) return a.rank < b.rank;
        return begin_of(a) < begin_of(b);
      };
      // Collected in declaration order, which is often the order itself.
      if (!std::is_sorted(group.begin(), group.end(), before)) std::sort(group.begin(), group.end(), before);
      for (std::size_t first = 0; first < group.size();) {
        std::size_t last = first;
        const std::uint32_t frame = frame_of(group[first]);
        while (last < group.size() && frame_of(group[last]) == frame) ++last;
        judge_graph(group.subspan(first, last - first));
        first = last;
      }
    }
  }

  /// Whether accesses of these modes (a bit per access_mode) may conflict,
  /// by the shared rule (accesses_conflict): with the rule as it is, a
  /// write, or plain reads beside concurrent updates.
  static bool may_conflict(std::uint8_t modes) {
    constexpr access_mode all[] = {access_mode::read, access_mode::read_write, access_mode::concurrent};
    const auto has = [&](access_mode m) { return (modes >> static_cast<unsigned>(m)) & 1u; };
    for (const access_mode a : all)
      for (const access_mode b : all)
        if (has(a) && has(b) && accesses_conflict(a, b)) return true;
    return false;
  }

  /// The accesses of one memory in one graph, in topological order.
  void judge_graph(std::span<const access> in_order) {
    // The common case: every access covers all of the memory, each node once.
    const bool whole = std::all_of(in_order.begin(), in_order.end(),
                                   [this](const access& a) { return view_index(a) == none; });
    const auto same_node = [](const access& a, const access& b) { return a.rep == b.rep; };
    if (whole && std::adjacent_find(in_order.begin(), in_order.end(), same_node) == in_order.end()) {
      judge_range(in_order);
      return;
    }
    // Elementary byte ranges: between consecutive starts and ends of the
    // accesses; most memories have one (every access from byte 0 on).
    std::vector<std::size_t> bounds;
    bounds.reserve(in_order.size() * 2);
    for (const access& a : in_order) {
      const byte_view v = view_of(a);
      bounds.push_back(v.begin);
      if (v.extent != to_the_end && v.extent <= to_the_end - v.begin) bounds.push_back(v.begin + v.extent);
    }
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    for (std::size_t s = 0; s < bounds.size(); ++s) {
      const std::size_t lo = bounds[s];
      const std::size_t extent = s + 1 < bounds.size() ? bounds[s + 1] - lo : to_the_end;
      covering_.clear();
      for (const access& a : in_order) {
        if (const byte_view v = view_of(a); !byte_ranges_overlap(v.begin, v.extent, lo, extent)) continue;
        // One node touching the range through several arguments (or nested
        // nodes): one access, of both modes.
        if (!covering_.empty() && covering_.back().rep == a.rep) {
          access& merged = covering_.back();
          const access_mode mode = combined_access(mode_of(merged), mode_of(a));
          // Named after the access that brings the mode (the writer of a
          // reader and a writer nested in one node).
          const bool renamed = mode != mode_of(merged) && mode == mode_of(a);
          merged.tail = tail_of(mode, frame_of(merged), renamed ? origin_of(a) : origin_of(merged),
                                view_index(merged));
          continue;
        }
        covering_.push_back(a);
      }
      if (covering_.size() > 1) judge_range(covering_);
    }
  }

  /// Accesses of one range, each of a different node, in topological order.
  void judge_range(std::span<const access> in_order) {
    const graph_view& view = tree_.at(frame_of(in_order.front())).view;
    const std::size_t found_before = races_.size();
    const access* last_write = nullptr;
    reads_since_.clear();
    concurrent_since_.clear();
    bool ordered = true;
    const auto require = [&](const access& earlier, const access& later) {
      if (reaches(view, earlier, later)) return;
      ordered = false;
      if (!all_) refuse(earlier, later);
    };
    // Each access after those it conflicts with (the shared rule) among the
    // last write and the reads and concurrent updates since it.
    // Every access of a list has the list's mode: asked once a list, so
    // that many readers since one write cost nothing to a reader.
    const auto after_conflicting = [&](const std::vector<const access*>& earlier, access_mode mode,
                                       const access& x) {
      if (!accesses_conflict(mode, mode_of(x))) return;
      for (const access* e : earlier) require(*e, x);
    };
    // Each access's query reads its node's dependency row, which in a large
    // graph is a cache miss: the rows of the next few are asked for ahead.
    constexpr std::size_t bounds_ahead = 8, row_ahead = 4;
    for (std::size_t k = 0; k < std::min(bounds_ahead, in_order.size()); ++k)
      view.prefetch_row_bounds(in_order[k].rep);
    for (std::size_t k = 0; k < in_order.size(); ++k) {
      if (k + bounds_ahead < in_order.size()) view.prefetch_row_bounds(in_order[k + bounds_ahead].rep);
      if (k + row_ahead < in_order.size()) view.prefetch_row(in_order[k + row_ahead].rep);
      const access& x = in_order[k];
      const access_mode mode = mode_of(x);
      if (last_write && accesses_conflict(mode_of(*last_write), mode)) require(*last_write, x);
      after_conflicting(reads_since_, access_mode::read, x);
      after_conflicting(concurrent_since_, access_mode::concurrent, x);
      if (mode == access_mode::read_write) {
        last_write = &x;
        reads_since_.clear();
        concurrent_since_.clear();
      } else {
        (mode == access_mode::read ? reads_since_ : concurrent_since_).push_back(&x);
      }
    }
    if (ordered) return;
    // Listing every race: past the first missing path transitivity no longer
    // vouches for the rest, so every conflicting pair is asked for.
    races_.resize(found_before);
    for (std::size_t j = 1; j < in_order.size(); ++j)
      for (std::size_t i = 0; i < j; ++i)
        if (accesses_conflict(mode_of(in_order[i]), mode_of(in_order[j])) &&
            !reaches(view, in_order[i], in_order[j]))
          record(in_order[i], in_order[j]);
  }

  static bool reaches(const graph_view& view, const access& from, const access& to) {
    if (from.rep == to.rep) return true;
    return view.reaches_back(from.rep, to.rep, from.rank, to.rank);
  }

  // ----------------------------------------------------------- messages --
  std::string path(std::uint32_t frame, std::uint32_t node) const { return tree_.at(frame).view.path(node); }

  byte_view view_of(const access& a) const {
    const std::uint32_t v = view_index(a);
    return v == none ? byte_view{} : views_[v];
  }
  std::size_t begin_of(const access& a) const { return view_of(a).begin; }
  /// The path of the node that touches the memory itself.
  std::string origin_path(const access& a) const {
    const std::uint32_t origin = origin_of(a);
    if (origin == none) return path(frame_of(a), a.rep);
    return path(origins_[origin].frame, origins_[origin].node);
  }

  std::string through(const access& a) const {
    if (origin_of(a) == none) return "";
    return " (through its enclosing node '" + path(frame_of(a), a.rep) + "')";
  }

  /// "'x'", "buffer 'tmp'", "bytes [0, 512) of buffer 'tmp'", "memory at 0x7f00".
  std::string describe_memory(const access& a, const access& b) const {
    const memory_name& m = memories_[a.memory];
    std::string name;
    if (!m.name.empty()) {
      name = (m.is_buffer ? "buffer '" : "'") + std::string(m.name) + "'";
    } else if (!m.bound_names.empty()) {
      for (std::size_t k = 0; k < m.bound_names.size(); ++k)
        name += (k == 0 ? "'" : k + 1 == m.bound_names.size() ? " and '" : ", '") +
                std::string(m.bound_names[k]) + "'";
      name += m.bound_names.size() > 1 ? " (bound to the same address, " + hex(m.address) + ")"
                                       : " (bound to " + hex(m.address) + ")";
    } else {
      name = "the memory at " + hex(m.address);
    }
    const byte_view va = view_of(a), vb = view_of(b);
    const std::size_t lo = std::max(va.begin, vb.begin);
    const auto end_of = [](const byte_view& x) {
      return x.extent == to_the_end || x.extent > to_the_end - x.begin ? to_the_end : x.begin + x.extent;
    };
    const std::size_t hi = std::min(end_of(va), end_of(vb));
    if (lo == 0 && hi == to_the_end) return name;
    if (hi == to_the_end) return "bytes from " + std::to_string(lo) + " on of " + name;
    return "bytes [" + std::to_string(lo) + ", " + std::to_string(hi) + ") of " + name;
  }

  void record(const access& earlier, const access& later) {
    // Named in declaration order of the graph where they meet.
    const bool swap = later.rep < earlier.rep;
    const access& a = swap ? later : earlier;
    const access& b = swap ? earlier : later;
    race_report r;
    r.first = origin_path(a);
    r.second = origin_path(b);
    r.first_access = mode_of(a);
    r.second_access = mode_of(b);
    r.memory = describe_memory(a, b);
    r.message = "race: '" + r.first + "'" + through(a) + " " + std::string(access_verb(mode_of(a))) + " " +
                r.memory + " while '" + r.second + "'" + through(b) + " " +
                std::string(access_verb(mode_of(b))) + " it, and no path orders them";
    if (frame_of(a) != 0)
      r.message += " in " + tree_.at(frame_of(a)).view.description();
    r.message += " (add an edge, or declare the access: docs/guide/races.md)";
    races_.push_back(std::move(r));
  }

  [[noreturn]] void refuse(const access& earlier, const access& later) {
    record(earlier, later);
    race_report r = std::move(races_.back());
    throw check_error(std::move(r.message), {std::move(r.first), std::move(r.second)});
  }

  const spec_tree& tree_;
  const bool all_;
  std::vector<memory_name> memories_;
  std::vector<std::uint8_t> modes_;  ///< per memory, a bit per access_mode seen
  /// Per memory, whether it is a CUDA handle (no memory): unknown until met.
  static constexpr std::uint8_t unknown = 0, yes = 1, no = 2;
  std::vector<std::uint8_t> handles_;
  /// The last few names asked for (a kernel's arguments name a few memories
  /// each, the same ones node after node).
  struct recent_name {
    std::string_view name;
    std::uint32_t memory = no_memory;
  };
  std::array<recent_name, 4> recent_{};
  /// Per graph of the tree, the memory of each declared parameter (filled as met).
  std::vector<std::vector<std::uint32_t>> memory_by_decl_;
  const param_decl* last_decl_ = nullptr;
  std::uint32_t last_decl_memory_ = no_memory;
  std::size_t next_recent_ = 0;
  std::unordered_map<std::string_view, std::uint32_t> by_name_;
  std::unordered_map<std::uintptr_t, std::uint32_t> by_address_;
  std::unordered_map<std::string_view, std::uint32_t> bound_;
  access_log accesses_;
  std::vector<access_detail> details_;
  std::vector<origin_site> origins_;
  std::vector<byte_view> views_;
  std::vector<access> covering_;
  std::vector<const access*> reads_since_;
  std::vector<const access*> concurrent_since_;
  std::vector<race_report> races_;
};

}  // namespace

struct race_collector::finder : race_finder {
  using race_finder::race_finder;
};

race_collector::race_collector(const spec_tree& tree, std::span<const binding> bindings, bool all)
    : finder_(std::make_unique<finder>(tree, bindings, all)) {}
race_collector::~race_collector() = default;

void race_collector::visit(std::size_t frame, std::size_t index, const node& n,
                           std::span<const spec_tree::param_found> resolved) {
  finder_->collect_node(frame, index, n, resolved);
}

std::vector<race_report> race_collector::judge() { return finder_->judge_all(); }

void check_races(const spec_tree& tree, std::span<const binding> bindings) {
  (void)race_finder(tree, bindings, false).run();
}

std::vector<race_report> find_races(const spec_tree& tree, std::span<const binding> bindings) {
  return race_finder(tree, bindings, true).run();
}

}  // namespace cudag::check_detail
