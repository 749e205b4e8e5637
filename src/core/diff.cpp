// Graph diff: nodes pair by name level by level (hash maps, so linear time
// in the size of both specs), every field of every node kind is compared,
// and both graphs are drawn as one DOT picture with the changes coloured.
#include "cudag/diff.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "cudag/error.hpp"
#include "cudag/native_nodes.hpp"
#include "display_text.hpp"

namespace cudag {
namespace {

using display::append_hex;
using display::cat;
using display::copy_kind_name;
using display::dims;
using display::max_quoted_bytes;
using display::max_shown_bytes;
using display::dot_quoted;
using display::utf8_length;

// What text shows of one user string (as to_dot(spec) does), of a literal's
// bytes and of one node's changes in a picture; Graphviz refuses a quoted
// string of 16,384 bytes or more.
constexpr std::size_t max_literal_bytes = 16;
constexpr std::size_t max_label_changes = 8;
// The nesting check() accepts and to_dot(spec) draws.
constexpr std::size_t max_nesting = 64;

std::string str(std::uint64_t n) { return std::to_string(n); }
std::string str_signed(std::int64_t n) { return std::to_string(n); }

// A user string as text shows it: a control byte (a newline included) or a
// byte that is not valid UTF-8 as the text \xNN, so that one change stays one
// line; at most max_shown_bytes of it, cut between characters, saying how
// long it was.
std::string readable(std::string_view text) {
  std::string out;
  const std::size_t limit = std::min(text.size(), max_shown_bytes);
  std::size_t at = 0;
  while (at < limit) {
    const auto c = static_cast<unsigned char>(text[at]);
    const std::size_t length = utf8_length(text, at);
    if (length == 0 || c < 0x20 || c == 0x7F) {
      out += "\\x";
      append_hex(out, c);
      ++at;
      continue;
    }
    if (at + length > limit) break;
    out.append(text.substr(at, length));
    at += length;
  }
  if (at < text.size()) out += cat({"... (", str(text.size()), " bytes)"});
  return out;
}

std::string named(std::string_view name) { return cat({"'", readable(name), "'"}); }

std::string_view yes_no(bool b) { return b ? "yes" : "no"; }

template <class T>
bool is_type(const type_tag& t) {
  return t.info && *t.info == typeid(T);
}

bool is_signed_integral(const type_tag& t) {
  return is_type<signed char>(t) || is_type<short>(t) || is_type<int>(t) || is_type<long>(t) ||
         is_type<long long>(t) || (std::is_signed_v<char> && is_type<char>(t));
}

template <class F>
std::string shortest(F f) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, f);
  return std::string(buffer, result.ptr);
}

// A literal's bytes, read as the type it was written for where that is a
// number (a host's literals are little-endian, as on every CUDA host).
std::string describe_literal(const type_tag& type, const literal_bytes& bytes) {
  const std::size_t n = bytes.size();
  if (n == 0) return "literal (no bytes)";
  if (type.info && n == type.size) {
    if (is_type<bool>(type)) return cat({"literal ", bytes.data()[0] != std::byte{0} ? "true" : "false"});
    if (type.is_integral && (n == 1 || n == 2 || n == 4 || n == 8)) {
      std::uint64_t u = 0;
      std::memcpy(&u, bytes.data(), n);
      if (is_signed_integral(type)) {
        const unsigned shift = static_cast<unsigned>(64 - 8 * n);
        return cat({"literal ", str_signed(static_cast<std::int64_t>(u << shift) >> shift)});
      }
      return cat({"literal ", str(u)});
    }
    if (is_type<float>(type)) {
      float f = 0;
      std::memcpy(&f, bytes.data(), sizeof f);
      return cat({"literal ", shortest(f)});
    }
    if (is_type<double>(type)) {
      double f = 0;
      std::memcpy(&f, bytes.data(), sizeof f);
      return cat({"literal ", shortest(f)});
    }
  }
  std::string out;
  if (n <= 8) {  // a pointer or another small value: as a little-endian number
    out = "literal 0x";
    for (std::size_t i = n; i-- > 0;) append_hex(out, static_cast<unsigned char>(bytes.data()[i]));
    return out;
  }
  out = "literal bytes ";
  for (std::size_t i = 0; i < std::min(n, max_literal_bytes); ++i)
    append_hex(out, static_cast<unsigned char>(bytes.data()[i]));
  if (n > max_literal_bytes) out += "...";
  return cat({out, " (", str(n), " bytes)"});
}

std::string describe_source(const value& v) {
  if (const auto* p = std::get_if<param_ref>(&v.source)) return cat({"param ", named(p->name)});
  if (const auto* b = std::get_if<buffer_ref>(&v.source)) {
    std::string text = cat({"buffer ", named(b->name)});
    if (b->offset_bytes) text += cat({"+", str(b->offset_bytes)});
    return text;
  }
  if (const auto* c = std::get_if<condition_ref>(&v.source))
    return cat({"condition ", named(c->name)});
  return describe_literal(v.type, std::get<literal>(v.source).bytes);
}

// "param 'x' -> param 'y'"; with the types when they differ.
std::string value_change(const value& before, const value& after) {
  if (before.type == after.type)
    return cat({describe_source(before), " -> ", describe_source(after)});
  return cat({describe_source(before), " (", readable(before.type.name()), ") -> ",
              describe_source(after), " (", readable(after.type.name()), ")"});
}

std::string describe_grid_rule(const std::optional<grid_rule>& rule) {
  if (!rule) return "none";
  return cat({"ceil(", readable(rule->param), "/", str(rule->items_per_block), ")"});
}

std::string describe_shape_rule(const shape_rule& rule) {
  return cat({launch_dim_name(rule.dim), " = ceil(", readable(rule.param), " * ",
              str(rule.multiplier), " / ", str(rule.divisor), ")"});
}

std::string_view plural(std::size_t n, std::string_view one, std::string_view many) {
  return n == 1 ? one : many;
}

std::string describe_conditional(const conditional_node& c) {
  return cat({kind_name(c.kind), " with ", str(c.bodies.size()),
              plural(c.bodies.size(), " body", " bodies")});
}

bool same_shape(const node& before, const node& after) {
  if (before.params.index() != after.params.index()) return false;
  const auto* b = std::get_if<conditional_node>(&before.params);
  const auto* a = std::get_if<conditional_node>(&after.params);
  return !b || (b->kind == a->kind && b->bodies.size() == a->bodies.size());
}

const graph_spec& no_graph() {
  static const graph_spec empty;
  return empty;
}

// Refuses, naming the node, a child graph that contains itself and nesting
// deeper than check() accepts, rather than recursing without end.
class nesting_guard {
 public:
  void enter(const graph_spec* before, const graph_spec* after, const std::string& node_path,
             std::string_view what) {
    for (const auto& [b, a] : ancestors_) {
      const bool loop_before = before && before != &no_graph() && b == before;
      const bool loop_after = after && after != &no_graph() && a == after;
      if (loop_before || loop_after) {
        throw error(cat({what, ": the child graph of '", node_path, "' in the '",
                         loop_before ? "before" : "after",
                         "' spec contains itself (it is also the graph of an enclosing node)"}),
                    cudaSuccess, {}, node_path);
      }
    }
    if (ancestors_.size() > max_nesting) {
      throw error(cat({what, ": node '", node_path, "' holds graphs nested more than ",
                       str(max_nesting), " deep"}),
                  cudaSuccess, {}, node_path);
    }
    ancestors_.emplace_back(before, after);
  }
  void leave() { ancestors_.pop_back(); }

 private:
  std::vector<std::pair<const graph_spec*, const graph_spec*>> ancestors_;
};

// ------------------------------------------------------------------ diff --
class differ {
 public:
  explicit differ(std::vector<spec_change>& out) : out_(out) {}

  void run(const graph_spec& before, const graph_spec& after) {
    guard_.enter(&before, &after, "", "diff");
    level(before, after, "");
  }

 private:
  struct nested {
    const graph_spec* before;
    const graph_spec* after;
    std::string prefix;
    std::string owner;  // path of the node that holds them
  };

  void add(change_kind kind, const std::string& node_path, std::string detail) {
    out_.push_back(spec_change{kind, node_path, std::move(detail)});
  }
  void changed(const std::string& node_path, std::string detail) {
    add(change_kind::params_changed, node_path, std::move(detail));
  }

  void level(const graph_spec& before, const graph_spec& after, const std::string& prefix) {
    declarations(before, after, prefix);

    std::unordered_map<std::string_view, std::size_t> before_at, after_at;
    before_at.reserve(before.nodes.size());
    after_at.reserve(after.nodes.size());
    for (std::size_t i = 0; i < before.nodes.size(); ++i) before_at.emplace(before.nodes[i].name, i);
    for (std::size_t i = 0; i < after.nodes.size(); ++i) after_at.emplace(after.nodes[i].name, i);

    std::vector<nested> inner;
    std::string path;
    for (std::size_t i = 0; i < after.nodes.size(); ++i) {
      const node& a = after.nodes[i];
      path.assign(prefix).append(a.name);
      const auto found = before_at.find(a.name);
      if (found == before_at.end() || after_at.find(a.name)->second != i) {
        add(change_kind::node_added, path, std::string(kind_name(a.kind())));
        continue;
      }
      const node& b = before.nodes[found->second];
      compare_node(b, a, path, inner);
      compare_edges(b, a, prefix, path);
    }
    for (std::size_t i = 0; i < before.nodes.size(); ++i) {
      const node& b = before.nodes[i];
      const auto found = after_at.find(b.name);
      if (found == after_at.end() || before_at.find(b.name)->second != i)
        add(change_kind::node_removed, prefix + b.name, std::string(kind_name(b.kind())));
    }
    for (const nested& n : inner) {
      guard_.enter(n.before, n.after, n.owner, "diff");
      level(*n.before, *n.after, n.prefix);
      guard_.leave();
    }
  }

  // Declarations pair by name as nodes do: parameters, then conditions.
  template <class Decl, class Added, class Compare>
  void declared(const std::vector<Decl>& before, const std::vector<Decl>& after,
                const std::string& prefix, Added describe_added, Compare compare) {
    if (before.empty() && after.empty()) return;
    std::unordered_map<std::string_view, std::size_t> before_at, after_at;
    for (std::size_t i = 0; i < before.size(); ++i) before_at.emplace(before[i].name, i);
    for (std::size_t i = 0; i < after.size(); ++i) after_at.emplace(after[i].name, i);
    for (std::size_t i = 0; i < after.size(); ++i) {
      const auto found = before_at.find(after[i].name);
      const std::string path = prefix + after[i].name;
      if (found == before_at.end() || after_at.find(after[i].name)->second != i)
        add(change_kind::declaration_changed, path, describe_added(after[i], "added"));
      else
        compare(before[found->second], after[i], path);
    }
    for (std::size_t i = 0; i < before.size(); ++i) {
      const auto found = after_at.find(before[i].name);
      if (found == after_at.end() || before_at.find(before[i].name)->second != i)
        add(change_kind::declaration_changed, prefix + before[i].name,
            describe_added(before[i], "removed"));
    }
  }

  void declarations(const graph_spec& before, const graph_spec& after, const std::string& prefix) {
    declared(
        before.params, after.params, prefix,
        [](const param_decl& d, std::string_view how) {
          return cat({"param ", how, " (", readable(d.type.name()),
                      d.external_buffer ? ", external buffer)" : ")"});
        },
        [&](const param_decl& b, const param_decl& a, const std::string& path) {
          if (!(b.type == a.type))
            add(change_kind::declaration_changed, path,
                cat({"param type ", readable(b.type.name()), " -> ", readable(a.type.name())}));
          if (b.external_buffer != a.external_buffer)
            add(change_kind::declaration_changed, path,
                cat({"param external buffer ", yes_no(b.external_buffer), " -> ",
                     yes_no(a.external_buffer)}));
        });
    declared(
        before.conditions, after.conditions, prefix,
        [](const condition_decl& d, std::string_view how) {
          return cat({"condition ", how, " (default ", str(d.default_value),
                      d.assign_default ? ", reset at every launch)" : ", kept between launches)"});
        },
        [&](const condition_decl& b, const condition_decl& a, const std::string& path) {
          if (b.default_value != a.default_value)
            add(change_kind::declaration_changed, path,
                cat({"condition default ", str(b.default_value), " -> ", str(a.default_value)}));
          if (b.assign_default != a.assign_default)
            add(change_kind::declaration_changed, path,
                cat({"condition reset at every launch ", yes_no(b.assign_default), " -> ",
                     yes_no(a.assign_default)}));
        });
  }

  void compare_edges(const node& before, const node& after, const std::string& prefix,
                     const std::string& path) {
    if (before.deps == after.deps && same_kinds(before, after)) return;
    // Each dependency with its kind (a name listed twice: its first listing).
    const auto kinds_of = [](const node& n) {
      std::unordered_map<std::string_view, edge_kind> kinds;
      kinds.reserve(n.deps.size());
      for (std::size_t k = 0; k < n.deps.size(); ++k) kinds.emplace(n.deps[k], n.dependency_kind(k));
      return kinds;
    };
    const auto had = kinds_of(before);
    const auto has = kinds_of(after);
    std::unordered_set<std::string_view> reported;
    const auto edge = [&](std::string_view dep) {
      return cat({"edge ", named(prefix + std::string(dep)), " -> ", named(path)});
    };
    for (const std::string& dep : after.deps)
      if (!had.count(dep) && reported.insert(dep).second)
        add(change_kind::edge_added, path, edge(dep));
    for (const std::string& dep : before.deps)
      if (!has.count(dep) && reported.insert(dep).second)
        add(change_kind::edge_removed, path, edge(dep));
    for (const std::string& dep : after.deps) {
      const auto found = had.find(dep);
      if (found == had.end() || !reported.insert(dep).second) continue;
      const edge_kind was = found->second;
      const edge_kind is = has.at(dep);
      if (was != is)
        add(change_kind::edge_kind_changed, path,
            cat({edge(dep), " changes kind: ", edge_kind_name(was), " -> ", edge_kind_name(is)}));
    }
  }

  // The same kinds, dependency by dependency (no list of kinds: all full).
  static bool same_kinds(const node& before, const node& after) {
    if (before.dependency_kinds.empty() && after.dependency_kinds.empty()) return true;
    for (std::size_t k = 0; k < before.deps.size(); ++k)
      if (before.dependency_kind(k) != after.dependency_kind(k)) return false;
    return true;
  }

  void compare_node(const node& before, const node& after, const std::string& path,
                    std::vector<nested>& inner) {
    if (before.params.index() != after.params.index()) {
      add(change_kind::kind_changed, path,
          cat({kind_name(before.kind()), " -> ", kind_name(after.kind())}));
      return;
    }
    std::visit(
        [&](const auto& a) {
          using P = std::remove_cvref_t<decltype(a)>;
          compare(std::get<P>(before.params), a, after, path, inner);
        },
        after.params);
  }

  template <class T, class Describe>
  void sequence(const std::string& path, std::string_view plural_name, std::string_view one_name,
                const std::vector<T>& before, const std::vector<T>& after, Describe describe) {
    if (before.size() != after.size())
      changed(path, cat({plural_name, " ", str(before.size()), " -> ", str(after.size())}));
    const std::size_t common = std::min(before.size(), after.size());
    for (std::size_t i = 0; i < common; ++i)
      if (!(before[i] == after[i]))
        changed(path, cat({one_name, " ", str(i), ": ", describe(before[i], after[i])}));
  }

  void compare_value(const std::string& path, std::string_view what, const value& before,
                     const value& after) {
    if (!(before == after)) changed(path, cat({what, ": ", value_change(before, after)}));
  }

  template <class T>
  void compare_number(const std::string& path, std::string_view what, T before, T after) {
    if (before != after)
      changed(path, cat({what, " ", std::to_string(before), " -> ", std::to_string(after)}));
  }

  void compare_name(const std::string& path, std::string_view what, const std::string& before,
                    const std::string& after) {
    if (before != after) changed(path, cat({what, " ", named(before), " -> ", named(after)}));
  }

  void compare_args(const std::string& path, const std::vector<value>& before,
                    const std::vector<value>& after) {
    sequence(path, "arguments", "argument", before, after, value_change);
  }

  static std::string function_label(const kernel_node& k) {
    return k.function_name.empty() ? "(unnamed kernel)" : readable(k.function_name);
  }

  void compare(const kernel_node& b, const kernel_node& a, const node&, const std::string& path,
               std::vector<nested>&) {
    if (b.function != a.function || b.function_name != a.function_name) {
      const std::string from = function_label(b);
      std::string to = function_label(a);
      if (from == to) to += " (another function)";
      changed(path, cat({"function ", from, " -> ", to}));
    }
    if (!native::same_dims(b.grid, a.grid)) changed(path, cat({"grid ", dims(b.grid), " -> ", dims(a.grid)}));
    if (!native::same_dims(b.block, a.block))
      changed(path, cat({"block ", dims(b.block), " -> ", dims(a.block)}));
    compare_number(path, "shared bytes", b.shared_bytes, a.shared_bytes);
    if (b.grid_from != a.grid_from)
      changed(path, cat({"grid_from ", describe_grid_rule(b.grid_from), " -> ",
                         describe_grid_rule(a.grid_from)}));
    sequence(path, "shape rules", "shape rule", b.shape_rules, a.shape_rules,
             [](const shape_rule& x, const shape_rule& y) {
               return cat({describe_shape_rule(x), " -> ", describe_shape_rule(y)});
             });
    compare_number(path, "priority", b.priority, a.priority);
    if (!native::same_dims(b.cluster, a.cluster)) {
      const auto cluster = [&](const kernel_node& k) { return has_cluster(k) ? dims(k.cluster) : std::string("none"); };
      changed(path, cat({"cluster ", cluster(b), " -> ", cluster(a)}));
    }
    if (b.cooperative != a.cooperative)
      changed(path, cat({"cooperative ", yes_no(b.cooperative), " -> ", yes_no(a.cooperative)}));
    if (b.mem_sync_domain != a.mem_sync_domain) {
      const auto domain = [](cudaLaunchMemSyncDomain d) {
        return d == cudaLaunchMemSyncDomainDefault  ? std::string("default")
               : d == cudaLaunchMemSyncDomainRemote ? std::string("remote")
                                                    : std::to_string(int(d));
      };
      changed(path, cat({"memory-sync domain ", domain(b.mem_sync_domain), " -> ", domain(a.mem_sync_domain)}));
    }
    if (b.shared_carveout != a.shared_carveout) {
      const auto carveout = [](int c) { return c < 0 ? std::string("none") : std::to_string(c) + "%"; };
      changed(path, cat({"shared carveout ", carveout(b.shared_carveout), " -> ", carveout(a.shared_carveout)}));
    }
    if (b.access_policy != a.access_policy)
      changed(path, cat({"access-policy window ", describe_access_policy(b.access_policy), " -> ",
                         describe_access_policy(a.access_policy)}));
    if (b.synchronizes_grid_dependencies != a.synchronizes_grid_dependencies)
      changed(path, cat({"synchronizes grid dependencies ", yes_no(b.synchronizes_grid_dependencies),
                         " -> ", yes_no(a.synchronizes_grid_dependencies)}));
    compare_accesses(path, b.accesses, a.accesses);
    compare_args(path, b.args, a.args);
  }

  void compare_accesses(const std::string& path, const access_declarations& b, const access_declarations& a) {
    if (b != a)
      changed(path, cat({"declared accesses ", describe_access_declarations(b), " -> ",
                         describe_access_declarations(a)}));
  }

  void compare(const memcpy_node& b, const memcpy_node& a, const node&, const std::string& path,
               std::vector<nested>&) {
    compare_value(path, "dst", b.dst, a.dst);
    compare_value(path, "src", b.src, a.src);
    compare_number(path, "bytes", b.bytes, a.bytes);
    if (b.kind != a.kind)
      changed(path, cat({"copy kind ", copy_kind_name(b.kind), " -> ", copy_kind_name(a.kind)}));
  }

  void compare(const memset_node& b, const memset_node& a, const node&, const std::string& path,
               std::vector<nested>&) {
    compare_value(path, "dst", b.dst, a.dst);
    compare_value(path, "fill", b.fill, a.fill);
    compare_number(path, "element size", b.element_size, a.element_size);
    compare_number(path, "width", b.width, a.width);
    compare_number(path, "height", b.height, a.height);
    compare_number(path, "pitch bytes", b.pitch_bytes, a.pitch_bytes);
  }

  void compare(const host_node& b, const host_node& a, const node&, const std::string& path,
               std::vector<nested>&) {
    if (b.function.get() != a.function.get()) changed(path, "host function replaced by another");
    compare_accesses(path, b.accesses, a.accesses);
    compare_args(path, b.args, a.args);
  }

  void compare(const captured_node& b, const captured_node& a, const node&,
               const std::string& path, std::vector<nested>&) {
    if (b.record.get() != a.record.get()) changed(path, "recording replaced by another");
    compare_name(path, "what", b.what, a.what);
    compare_accesses(path, b.accesses, a.accesses);
    compare_args(path, b.args, a.args);
  }

  void compare(const child_node& b, const child_node& a, const node& after,
               const std::string& path, std::vector<nested>& inner) {
    const graph_spec* before_graph = b.graph.get();
    const graph_spec* after_graph = a.graph.get();
    if (before_graph == after_graph) return;  // the same graph: nothing to compare
    if (!before_graph || !after_graph) {
      changed(path, cat({"child graph ", before_graph ? named(before_graph->name) : "none", " -> ",
                         after_graph ? named(after_graph->name) : "none"}));
    } else {
      compare_name(path, "child graph name", before_graph->name, after_graph->name);
    }
    inner.push_back(nested{before_graph ? before_graph : &no_graph(),
                           after_graph ? after_graph : &no_graph(), nested_prefix(path, after),
                           path});
  }

  void compare(const empty_node&, const empty_node&, const node&, const std::string&,
               std::vector<nested>&) {}

  void compare(const event_record_node& b, const event_record_node& a, const node&,
               const std::string& path, std::vector<nested>&) {
    compare_value(path, "event", b.event, a.event);
  }

  void compare(const event_wait_node& b, const event_wait_node& a, const node&,
               const std::string& path, std::vector<nested>&) {
    compare_value(path, "event", b.event, a.event);
  }

  void compare(const mem_alloc_node& b, const mem_alloc_node& a, const node&,
               const std::string& path, std::vector<nested>&) {
    compare_name(path, "buffer", b.buffer, a.buffer);
    compare_number(path, "bytes", b.bytes, a.bytes);
    compare_number(path, "device", b.device, a.device);
  }

  void compare(const mem_free_node& b, const mem_free_node& a, const node&,
               const std::string& path, std::vector<nested>&) {
    compare_name(path, "buffer", b.buffer, a.buffer);
  }

  void compare(const conditional_node& b, const conditional_node& a, const node& after,
               const std::string& path, std::vector<nested>& inner) {
    if (b.kind != a.kind || b.bodies.size() != a.bodies.size()) {
      add(change_kind::kind_changed, path,
          cat({describe_conditional(b), " -> ", describe_conditional(a)}));
      return;
    }
    compare_name(path, "condition", b.condition, a.condition);
    for (std::size_t i = 0; i < a.bodies.size(); ++i)
      inner.push_back(nested{&b.bodies[i], &a.bodies[i], nested_prefix(path, after, i), path});
  }

  std::vector<spec_change>& out_;
  nesting_guard guard_;
};

std::string line_of(const spec_change& c) {
  switch (c.kind) {
    case change_kind::node_added: return cat({"added ", readable(c.node), ": ", c.detail, "\n"});
    case change_kind::node_removed: return cat({"removed ", readable(c.node), ": ", c.detail, "\n"});
    case change_kind::kind_changed:
      return cat({"changed kind of ", readable(c.node), ": ", c.detail, "\n"});
    case change_kind::params_changed:
      return cat({"changed ", readable(c.node), ": ", c.detail, "\n"});
    case change_kind::edge_added: return cat({"added ", c.detail, "\n"});
    case change_kind::edge_removed: return cat({"removed ", c.detail, "\n"});
    case change_kind::declaration_changed:
      return cat({"changed declaration of ", readable(c.node), ": ", c.detail, "\n"});
    case change_kind::edge_kind_changed: return cat({c.detail, "\n"});
  }
  return cat({"changed ", readable(c.node), ": ", c.detail, "\n"});
}

// ------------------------------------------------------------------- DOT --
enum class status { unchanged, added, removed, changed };

struct look {
  std::string_view fill;
  std::string_view border;
  std::string_view font;
  bool dashed;
  std::string_view penwidth;
};

look look_of(status s) {
  switch (s) {
    case status::added: return {"#d4edda", "#2e7d32", "#000000", false, "2"};
    case status::removed: return {"#f8d7da", "#c62828", "#000000", true, "2"};
    case status::changed: return {"#ffe0b2", "#ef6c00", "#000000", false, "2"};
    case status::unchanged: break;
  }
  return {"#f5f5f5", "#9e9e9e", "#616161", false, "1"};
}

std::string edge_attributes(status s) {
  switch (s) {
    case status::added: return "color=\"#2e7d32\", penwidth=2";
    case status::removed: return "color=\"#c62828\", style=dashed, penwidth=2";
    case status::changed: return "color=\"#ef6c00\", fontcolor=\"#ef6c00\", penwidth=2";
    case status::unchanged: break;
  }
  return "color=\"#9e9e9e\"";
}

// An edge's kind as a picture labels it: nothing for a full edge (nearly
// every edge), the kind otherwise, and "before -> after" where it changed.
std::string edge_label(edge_kind before, edge_kind after) {
  if (before == after) {
    if (after == edge_kind::full) return {};
    return cat({", label=\"", edge_kind_name(after), "\""});
  }
  return cat({", label=\"", edge_kind_name(before), " -> ", edge_kind_name(after), "\""});
}

// Lines of at most `limit` items, then how many more.
void append_bounded(std::string& label, const std::vector<std::string_view>& lines,
                    std::size_t limit) {
  for (std::size_t i = 0; i < lines.size() && i < limit; ++i) {
    label += '\n';
    label += lines[i];
  }
  if (lines.size() > limit) label += cat({"\n... and ", str(lines.size() - limit), " more"});
}

// The layout of to_dot(spec): a nested graph is a cluster whose top is a
// header node (incoming edges end there, clipped at the cluster's border) and
// whose bottom an invisible exit point (outgoing edges start there). One
// level draws the union of a graph's two versions; a side that is absent
// (nullptr) makes every node of the other added or removed.
class diff_dot_writer {
 public:
  explicit diff_dot_writer(const spec_diff& d) : diff_(d) {
    for (const spec_change& c : d.changes) {
      if (c.kind == change_kind::params_changed || c.kind == change_kind::kind_changed)
        node_changes_[c.node].push_back(c.kind == change_kind::kind_changed
                                            ? std::string_view(kind_lines_.emplace_back(
                                                  cat({"kind ", c.detail})))
                                            : std::string_view(c.detail));
    }
  }

  std::string write(const graph_spec& before, const graph_spec& after) {
    out_ += "digraph \"diff\" {\n";
    out_ += "  graph [compound=true, fontname=\"Helvetica\", fontsize=11, labelloc=t, label=" +
            dot_quoted(summary()) + "];\n";
    out_ += "  node [fontname=\"Helvetica\", fontsize=10, shape=box];\n";
    guard_.enter(&before, &after, "", "to_dot");
    write_level(&before, &after, "  ", "");
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  struct drawn {
    std::string entry;    // where incoming edges end
    std::string exit;     // where outgoing edges start
    std::string cluster;  // "" unless the node is drawn as a cluster
  };

  struct level_drawing {
    std::vector<drawn> nodes;
    std::vector<std::size_t> roots;
    std::vector<std::size_t> sinks;
  };

  struct item {
    const node* before = nullptr;
    const node* after = nullptr;
  };

  std::string summary() const {
    std::size_t counts[8] = {};
    for (const spec_change& c : diff_.changes) ++counts[static_cast<std::size_t>(c.kind)];
    const std::size_t edge_kinds = counts[static_cast<std::size_t>(change_kind::edge_kind_changed)];
    std::string label;
    if (diff_.changes.empty()) {
      label = "no changes";
    } else {
      label = cat({str(diff_.changes.size()), plural(diff_.changes.size(), " change", " changes"),
                   ": nodes ", str(counts[0]), " added, ", str(counts[1]), " removed, ",
                   str(counts[2] + counts[3]), " changed (kind or parameter); edges ", str(counts[4]),
                   " added, ", str(counts[5]), " removed",
                   edge_kinds ? cat({", ", str(edge_kinds), " of another kind"}) : std::string(),
                   "; declarations ", str(counts[6]),
                   " changed"});
    }
    std::vector<std::string> declaration_lines;
    for (const spec_change& c : diff_.changes)
      if (c.kind == change_kind::declaration_changed)
        declaration_lines.push_back(cat({"declaration ", readable(c.node), ": ", c.detail}));
    std::vector<std::string_view> views(declaration_lines.begin(), declaration_lines.end());
    append_bounded(label, views, max_label_changes);
    label += "\ngreen: added, red dashed: removed, orange: changed, grey: unchanged";
    return label;
  }

  std::string next_id() { return cat({"n", str(counter_++)}); }

  status status_of(const item& it, const std::string& path) const {
    if (!it.before) return status::added;
    if (!it.after) return status::removed;
    if (!same_shape(*it.before, *it.after) || node_changes_.count(path)) return status::changed;
    return status::unchanged;
  }

  void write_edge(const drawn& from, const drawn& to, status s, std::string_view label,
                  const std::string& indent) {
    out_ += cat({indent, from.exit, " -> ", to.entry, " [", edge_attributes(s), label});
    if (!from.cluster.empty()) out_ += cat({", ltail=", from.cluster});
    if (!to.cluster.empty()) out_ += cat({", lhead=", to.cluster});
    out_ += "];\n";
  }

  level_drawing write_level(const graph_spec* before, const graph_spec* after,
                            const std::string& indent, const std::string& prefix) {
    // The union: the 'after' nodes in order, then those only 'before' has;
    // pairs by first declaration, as diff() does.
    std::vector<item> items;
    std::unordered_map<std::string_view, std::size_t> at;
    const std::size_t total = (before ? before->nodes.size() : 0) + (after ? after->nodes.size() : 0);
    items.reserve(total);
    at.reserve(total);
    if (after)
      for (const node& n : after->nodes) {
        at.emplace(n.name, items.size());
        items.push_back(item{nullptr, &n});
      }
    if (before)
      for (const node& n : before->nodes) {
        const auto found = at.find(n.name);
        if (found != at.end() && !items[found->second].before && items[found->second].after) {
          items[found->second].before = &n;
          continue;
        }
        if (found == at.end()) at.emplace(n.name, items.size());
        items.push_back(item{&n, nullptr});
      }
    // A name declared twice in 'after' maps to its first declaration only.
    level_drawing drawing;
    drawing.nodes.reserve(items.size());
    std::string path;
    for (const item& it : items) {
      const node& shown_node = it.after ? *it.after : *it.before;
      path.assign(prefix).append(shown_node.name);
      drawing.nodes.push_back(write_item(it, path, indent));
    }

    std::vector<bool> has_dependent(items.size(), false);
    std::vector<bool> has_dependency(items.size(), false);
    const auto edge = [&](std::size_t to, std::string_view dep, status s,
                          const std::string& label) {
      has_dependency[to] = true;
      const auto found = at.find(dep);
      drawn from;
      if (found == at.end()) {
        from.entry = from.exit = next_id();
        out_ += cat({indent, from.entry, " [label=", dot_quoted(readable(dep) + "\n(missing)"),
                     ", style=dashed, color=red, fontcolor=red];\n"});
      } else {
        from = drawing.nodes[found->second];
        has_dependent[found->second] = true;
      }
      write_edge(from, drawing.nodes[to], s, label, indent);
    };
    for (std::size_t v = 0; v < items.size(); ++v) {
      const node* a = items[v].after;
      const node* b = items[v].before;
      if (a && b && a->deps == b->deps && a->dependency_kinds == b->dependency_kinds) {
        for (std::size_t k = 0; k < a->deps.size(); ++k)
          edge(v, a->deps[k], status::unchanged,
               edge_label(a->dependency_kind(k), a->dependency_kind(k)));
        continue;
      }
      std::unordered_map<std::string_view, edge_kind> had, has;
      std::unordered_set<std::string_view> drawn_deps;
      if (a && b)  // each dependency with its kind (a name listed twice: its first listing)
        for (std::size_t k = 0; k < b->deps.size(); ++k) had.emplace(b->deps[k], b->dependency_kind(k));
      if (a && b)
        for (std::size_t k = 0; k < a->deps.size(); ++k) has.emplace(a->deps[k], a->dependency_kind(k));
      if (a)
        for (std::size_t k = 0; k < a->deps.size(); ++k) {
          const std::string& dep = a->deps[k];
          if (!drawn_deps.insert(dep).second) continue;
          const edge_kind is = a->dependency_kind(k);
          const auto found = had.find(dep);
          if (found == had.end()) {
            edge(v, dep, status::added, edge_label(is, is));
            continue;
          }
          edge(v, dep, found->second == is ? status::unchanged : status::changed,
               edge_label(found->second, is));
        }
      if (b)
        for (std::size_t k = 0; k < b->deps.size(); ++k) {
          const std::string& dep = b->deps[k];
          if (!has.count(dep) && drawn_deps.insert(dep).second)
            edge(v, dep, status::removed, edge_label(b->dependency_kind(k), b->dependency_kind(k)));
        }
    }
    for (std::size_t v = 0; v < items.size(); ++v) {
      if (!has_dependency[v]) drawing.roots.push_back(v);
      if (!has_dependent[v]) drawing.sinks.push_back(v);
    }
    return drawing;
  }

  std::string label_of(const item& it, const std::string& path, status s,
                       std::string_view what) const {
    const node& shown_node = it.after ? *it.after : *it.before;
    std::string label = cat({readable(shown_node.name), "\n", what});
    if (s == status::added) label += "\n(added)";
    if (s == status::removed) label += "\n(removed)";
    if (const auto found = node_changes_.find(path); found != node_changes_.end())
      append_bounded(label, found->second, max_label_changes);
    return label;
  }

  std::string node_attributes(status s) const {
    const look l = look_of(s);
    return cat({"style=\"rounded,filled", l.dashed ? ",dashed" : "", "\", fillcolor=\"", l.fill,
                "\", color=\"", l.border, "\", fontcolor=\"", l.font, "\", penwidth=", l.penwidth});
  }

  drawn write_item(const item& it, const std::string& path, const std::string& indent) {
    const status s = status_of(it, path);
    const node& shown_node = it.after ? *it.after : *it.before;
    // The side whose nested graphs pair with the shown node's: none when the
    // node changed kind (its new contents are all added).
    const node* before_side =
        it.before && (!it.after || same_shape(*it.before, *it.after)) ? it.before : nullptr;
    const node* after_side = it.after;

    if (const auto* child = std::get_if<child_node>(&shown_node.params)) {
      const graph_spec* b =
          before_side ? std::get<child_node>(before_side->params).graph.get() : nullptr;
      const graph_spec* a = after_side ? child->graph.get() : nullptr;
      if (a || b) {
        const graph_spec* named_graph = a ? a : b;
        std::string what = "child graph";
        if (!named_graph->name.empty()) what += " " + readable(named_graph->name);
        return write_cluster(it, path, s, what, shown_node, {{b, a}}, {}, indent);
      }
    } else if (const auto* cond = std::get_if<conditional_node>(&shown_node.params)) {
      const auto* b = before_side ? &std::get<conditional_node>(before_side->params) : nullptr;
      const auto* a = after_side ? cond : nullptr;
      std::vector<std::pair<const graph_spec*, const graph_spec*>> bodies;
      for (std::size_t i = 0; i < cond->bodies.size(); ++i)
        bodies.emplace_back(b ? &b->bodies[i] : nullptr, a ? &a->bodies[i] : nullptr);
      std::vector<std::string> body_labels;
      if (!(cond->bodies.size() == 1 && cond->kind != conditional_kind::switch_case))
        for (std::size_t i = 0; i < cond->bodies.size(); ++i)
          body_labels.push_back(cond->kind == conditional_kind::if_else
                                    ? (i == 0 ? "then" : "else")
                                    : "case " + str(i));
      return write_cluster(it, path, s,
                           cat({kind_name(cond->kind), " (", readable(cond->condition), ")"}),
                           shown_node, bodies, body_labels, indent);
    }
    const std::string id = next_id();
    out_ += cat({indent, id, " [label=",
                 dot_quoted(label_of(it, path, s, kind_name(shown_node.kind()))), ", ",
                 node_attributes(s), "];\n"});
    return drawn{id, id, ""};
  }

  drawn write_cluster(const item& it, const std::string& path, status s, const std::string& what,
                      const node& shown_node,
                      const std::vector<std::pair<const graph_spec*, const graph_spec*>>& bodies,
                      const std::vector<std::string>& body_labels, const std::string& indent) {
    const std::string id = next_id();
    drawn self{id, id + "_exit", "cluster_" + id};
    const look l = look_of(s);
    const bool conditional = std::holds_alternative<conditional_node>(shown_node.params);
    const std::string inner = indent + "  ";
    out_ += cat({indent, "subgraph ", self.cluster, " {\n"});
    out_ += cat({inner, "label=", dot_quoted(readable(shown_node.name)), ";\n"});
    out_ += cat({inner, "style=\"rounded", conditional || l.dashed ? ",dashed" : "",
                 "\"; color=\"", l.border, "\"; penwidth=", l.penwidth, ";\n"});
    out_ += cat({inner, id, " [label=", dot_quoted(label_of(it, path, s, what)), ", ",
                 node_attributes(s), "];\n"});
    out_ += cat({inner, self.exit, " [shape=point, style=invis, width=0, height=0, label=\"\"];\n"});

    std::vector<level_drawing> drawings;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      std::string body_indent = inner;
      if (!body_labels.empty()) {
        out_ += cat({inner, "subgraph ", self.cluster, "_b", str(i), " {\n"});
        out_ += cat({inner, "  label=", dot_quoted(body_labels[i]), ";\n"});
        body_indent += "  ";
      }
      guard_.enter(bodies[i].first, bodies[i].second, path, "to_dot");
      drawings.push_back(write_level(bodies[i].first, bodies[i].second, body_indent,
                                     nested_prefix(path, shown_node, i)));
      guard_.leave();
      if (!body_labels.empty()) out_ += cat({inner, "}\n"});
    }
    bool any_body_node = false;
    for (const level_drawing& body : drawings) {
      for (std::size_t r : body.roots) {
        const drawn& root = body.nodes[r];
        out_ += cat({inner, id, " -> ", root.entry, " [style=dashed, arrowhead=none, color=\"",
                     l.border, "\""});
        if (!root.cluster.empty()) out_ += cat({", lhead=", root.cluster});
        out_ += "];\n";
      }
      for (std::size_t k : body.sinks) {
        out_ += cat({inner, body.nodes[k].exit, " -> ", self.exit, " [style=invis];\n"});
        any_body_node = true;
      }
    }
    if (!any_body_node) out_ += cat({inner, id, " -> ", self.exit, " [style=invis];\n"});
    out_ += cat({indent, "}\n"});
    return self;
  }

  const spec_diff& diff_;
  std::unordered_map<std::string_view, std::vector<std::string_view>> node_changes_;
  std::deque<std::string> kind_lines_;
  std::string out_;
  std::size_t counter_ = 0;
  nesting_guard guard_;
};

}  // namespace

std::string_view change_kind_name(change_kind kind) noexcept {
  switch (kind) {
    case change_kind::node_added: return "node_added";
    case change_kind::node_removed: return "node_removed";
    case change_kind::kind_changed: return "kind_changed";
    case change_kind::params_changed: return "params_changed";
    case change_kind::edge_added: return "edge_added";
    case change_kind::edge_removed: return "edge_removed";
    case change_kind::declaration_changed: return "declaration_changed";
    case change_kind::edge_kind_changed: return "edge_kind_changed";
  }
  return "unknown";
}

bool spec_diff::same_topology() const noexcept {
  return std::all_of(changes.begin(), changes.end(), [](const spec_change& c) {
    return c.kind == change_kind::params_changed || c.kind == change_kind::declaration_changed;
  });
}

std::string spec_diff::text() const { return text(changes.size()); }

std::string spec_diff::text(std::size_t max_changes) const {
  std::string out;
  const std::size_t shown_changes = std::min(max_changes, changes.size());
  for (std::size_t i = 0; i < shown_changes; ++i) out += line_of(changes[i]);
  if (changes.size() > shown_changes)
    out += cat({"... and ", str(changes.size() - shown_changes), " more ",
                plural(changes.size() - shown_changes, "change", "changes"), "\n"});
  return out;
}

spec_diff diff(const graph_spec& before, const graph_spec& after) {
  spec_diff d;
  differ(d.changes).run(before, after);
  return d;
}

std::string diff_text(const graph_spec& before, const graph_spec& after, std::size_t max_changes) {
  return diff(before, after).text(max_changes);
}

std::string to_dot(const spec_diff& d, const graph_spec& before, const graph_spec& after) {
  return diff_dot_writer(d).write(before, after);
}

}  // namespace cudag
