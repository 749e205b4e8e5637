// A DOT writer of its own rather than boost::write_graphviz: pictures need
// nested clusters (child graphs, conditional bodies) and edges that end at a
// cluster's border (compound=true with lhead/ltail), which write_graphviz's
// flat vertex/edge writers do not express.
#include "cudag/dot.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <string_view>
#include <unordered_map>
#include <variant>

#include "cudag/error.hpp"
#include "../core/display_text.hpp"
#include "check_passes.hpp"
#include "nesting.hpp"

extern char** environ;

namespace cudag {
namespace {

using display::cat;
using display::copy_kind_name;
using display::dims;
using display::max_quoted_bytes;
using display::max_shown_bytes;
using display::dot_quoted;
using display::utf8_length;

// A user string as a picture shows it: at most max_shown_bytes, cut at a
// character boundary, with how much was left out.
std::string shown(std::string_view text) {
  if (text.size() <= max_shown_bytes) return std::string(text);
  std::size_t cut = 0;
  while (cut < max_shown_bytes) {
    const std::size_t length = std::max<std::size_t>(utf8_length(text, cut), 1);
    if (cut + length > max_shown_bytes) break;
    cut += length;
  }
  return std::string(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}


std::string describe_value(const value& v) {
  if (const auto* p = std::get_if<param_ref>(&v.source)) return cat({"param ", shown(p->name)});
  if (const auto* b = std::get_if<buffer_ref>(&v.source)) {
    std::string text = cat({"buffer ", shown(b->name)});
    if (b->offset_bytes) text += cat({"+", std::to_string(b->offset_bytes)});
    return text;
  }
  if (const auto* c = std::get_if<condition_ref>(&v.source)) return cat({"condition ", shown(c->name)});
  return "literal";
}

// The operands that refer to something by name, one line: "reads: param x, buffer tmp".
std::string named_operands(const node& n) {
  std::string text;
  for_each_value(n, [&](const value& v) {
    if (std::holds_alternative<literal>(v.source)) return;
    text += text.empty() ? "reads: " : ", ";
    text += describe_value(v);
  });
  return text;
}

// A full edge keeps the picture's default look; an edge that lets its
// kernel launch before the upstream kernel completes is drawn dashed or
// dotted in a colour of its own, and says which kind it is.
std::string_view edge_style(edge_kind kind) {
  switch (kind) {
    case edge_kind::full: break;
    case edge_kind::programmatic:
      return "style=dashed, color=\"#0b5ed7\", fontcolor=\"#0b5ed7\", penwidth=2, "
             "fontname=\"Helvetica\", fontsize=9, label=\"programmatic\"";
    case edge_kind::launch_completion:
      return "style=dotted, color=\"#7b2cbf\", fontcolor=\"#7b2cbf\", penwidth=2, "
             "fontname=\"Helvetica\", fontsize=9, label=\"launch completion\"";
  }
  return "";
}

struct kind_style {
  std::string_view shape;
  std::string_view fill;
};

kind_style style_of(node_kind kind) {
  switch (kind) {
    case node_kind::kernel: return {"box", "#cfe2ff"};
    case node_kind::memcpy:
    case node_kind::memset: return {"box", "#fff3cd"};
    case node_kind::host: return {"box", "#ffe5d0"};
    case node_kind::captured: return {"box", "#e2d9f3"};
    case node_kind::event_record:
    case node_kind::event_wait: return {"cds", "#f8d7da"};
    case node_kind::mem_alloc:
    case node_kind::mem_free: return {"box", "#d1e7dd"};
    case node_kind::empty: return {"box", "#ffffff"};
    default: return {"box", "#eeeeee"};
  }
}

/// How a picture names each kernel function: without anonymous namespaces,
/// unless two functions of the picture would then read alike.
class kernel_labels {
 public:
  explicit kernel_labels(const graph_spec& spec) {
    std::vector<const graph_spec*> seen;
    collect(spec, seen, 0);
    for (auto& [full, label] : label_)
      if (functions_with_[label] > 1) label = full;
  }
  [[nodiscard]] const std::string& operator()(const std::string& full) const { return label_.at(full); }

 private:
  // Every graph once, no deeper than a picture goes (a graph that holds
  // itself, or nesting beyond that, is refused when drawn).
  void collect(const graph_spec& spec, std::vector<const graph_spec*>& seen, std::size_t depth) {
    if (depth > check_detail::max_nesting + 1 ||
        std::find(seen.begin(), seen.end(), &spec) != seen.end())
      return;
    seen.push_back(&spec);
    for (const node& n : spec.nodes) {
      if (const auto* k = std::get_if<kernel_node>(&n.params)) {
        if (!k->function_name.empty() && !label_.count(k->function_name)) {
          std::string label = display::without_anonymous_namespaces(k->function_name);
          ++functions_with_[label];
          label_.emplace(k->function_name, std::move(label));
        }
      } else if (const auto* child = std::get_if<child_node>(&n.params); child && child->graph) {
        collect(*child->graph, seen, depth + 1);
      } else if (const auto* cond = std::get_if<conditional_node>(&n.params)) {
        for (const graph_spec& body : cond->bodies) collect(body, seen, depth + 1);
      }
    }
  }

  std::unordered_map<std::string, std::string> label_;             // full name -> label
  std::unordered_map<std::string, std::size_t> functions_with_;  // label -> functions
};

// "\naccess argument 1 read" where a node declares how it touches memory
// (a narrowing or a concurrent update shows, so that no declaration hides
// a race unseen).
std::string declared_accesses(const access_declarations& declared) {
  if (declared.empty()) return "";
  return "\naccess " + shown(describe_access_declarations(declared));
}

std::string details_of(const node& n, const kernel_labels& labels) {
  return std::visit(
      [&](const auto& p) -> std::string {
        using P = std::remove_cvref_t<decltype(p)>;
        if constexpr (std::is_same_v<P, kernel_node>) {
          std::string text =
              p.function_name.empty() ? "(unnamed kernel)" : shown(labels(p.function_name));
          text += "\ngrid ";
          text += p.grid_from ? "ceil(" + shown(p.grid_from->param) + "/" +
                                    std::to_string(p.grid_from->items_per_block) + ")"
                              : dims(p.grid);
          text += " block " + dims(p.block);
          if (p.shared_bytes) text += "\nshared " + std::to_string(p.shared_bytes) + " B";
          if (p.synchronizes_grid_dependencies) text += "\nsynchronizes grid dependencies";
          if (p.priority != 0) text += "\npriority " + std::to_string(p.priority);
          if (const std::string a = describe_launch_attributes(p); a != "none") text += "\n" + shown(a);
          text += declared_accesses(p.accesses);
          for (const shape_rule& r : p.shape_rules) {
            text += "\n" + std::string(launch_dim_name(r.dim)) + " = ceil(" + shown(r.param);
            if (r.multiplier != 1) text += "*" + std::to_string(r.multiplier);
            if (r.divisor != 1) text += "/" + std::to_string(r.divisor);
            text += ")";
          }
          return text;
        } else if constexpr (std::is_same_v<P, memcpy_node>) {
          return std::to_string(p.bytes) + " B, " + std::string(copy_kind_name(p.kind));
        } else if constexpr (std::is_same_v<P, memset_node>) {
          std::string text = std::to_string(p.width) + " x " + std::to_string(p.element_size) + " B";
          if (p.height > 1) text += " x " + std::to_string(p.height) + " rows";
          return text;
        } else if constexpr (std::is_same_v<P, captured_node>) {
          return shown(p.what) + declared_accesses(p.accesses);
        } else if constexpr (std::is_same_v<P, host_node>) {
          const std::string declared = declared_accesses(p.accesses);
          return declared.empty() ? declared : declared.substr(1);
        } else if constexpr (std::is_same_v<P, mem_alloc_node>) {
          return "buffer " + shown(p.buffer) + ", " + std::to_string(p.bytes) + " B";
        } else if constexpr (std::is_same_v<P, mem_free_node>) {
          return "buffer " + shown(p.buffer);
        } else {
          return "";
        }
      },
      n.params);
}

// Layout of a nested graph: a cluster whose top is a header node (the
// child or conditional node itself; incoming edges end there, clipped at the
// cluster's border) and whose bottom is an invisible exit point below every
// body node (outgoing edges start there), so successors are drawn below the
// whole body. Edges are written in the cluster that holds both ends: DOT
// makes a node a member of every subgraph whose statements mention it.
class dot_writer {
 public:
  explicit dot_writer(const graph_spec& spec) : labels_(spec) {}

  std::string write(const graph_spec& spec) {
    out_ += "digraph " + dot_quoted(spec.name.empty() ? "cudag" : shown(spec.name)) + " {\n";
    out_ += "  graph [compound=true, fontname=\"Helvetica\", fontsize=11];\n";
    out_ += "  node [fontname=\"Helvetica\", fontsize=10, style=\"rounded,filled\"];\n";
    out_ += "  edge [color=\"#444444\"];\n";
    ancestors_.push_back(&spec);
    write_graph(spec, "  ", "");
    write_races(spec);
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  struct drawn {
    std::string entry;    // where incoming edges end
    std::string exit;     // where outgoing edges start
    std::string cluster;  // "" unless the node is drawn as a cluster
  };

  struct graph_drawing {
    std::vector<drawn> nodes;
    std::vector<std::size_t> roots;  // nodes without dependencies
    std::vector<std::size_t> sinks;  // nodes no other node depends on
  };

  std::string next_id() { return cat({"n", std::to_string(counter_++)}); }

  // Declares every node of `spec` (recursing into clusters), then its edges.
  // `prefix` names the nodes of `spec` by path ("" or "outer/"), for errors.
  graph_drawing write_graph(const graph_spec& spec, const std::string& indent,
                            const std::string& prefix) {
    graph_drawing drawing;
    drawing.nodes.reserve(spec.nodes.size());
    std::unordered_map<std::string_view, std::size_t> by_name;
    for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
      by_name.emplace(spec.nodes[i].name, i);
      drawing.nodes.push_back(write_node(spec.nodes[i], indent, prefix));
    }
    std::vector<bool> has_dependent(spec.nodes.size(), false);
    for (std::size_t v = 0; v < spec.nodes.size(); ++v) {
      const node& n = spec.nodes[v];
      if (n.deps.empty()) drawing.roots.push_back(v);
      for (std::size_t k = 0; k < n.deps.size(); ++k) {
        const std::string& dep = n.deps[k];
        auto found = by_name.find(dep);
        drawn from;
        if (found == by_name.end()) {
          from.entry = from.exit = next_id();
          out_ += indent + from.entry + " [label=" + dot_quoted(shown(dep) + "\n(missing)") +
                  ", shape=box, style=dashed, color=red, fontcolor=red];\n";
        } else {
          from = drawing.nodes[found->second];
          has_dependent[found->second] = true;
        }
        write_edge(from, drawing.nodes[v], n.dependency_kind(k), indent);
      }
    }
    for (std::size_t v = 0; v < spec.nodes.size(); ++v)
      if (!has_dependent[v]) drawing.sinks.push_back(v);
    return drawing;
  }

  void write_edge(const drawn& from, const drawn& to, edge_kind kind, const std::string& indent) {
    out_ += indent + from.exit + " -> " + to.entry;
    std::string attrs(edge_style(kind));
    if (!from.cluster.empty()) attrs += (attrs.empty() ? "" : ", ") + ("ltail=" + from.cluster);
    if (!to.cluster.empty()) attrs += (attrs.empty() ? "" : ", ") + ("lhead=" + to.cluster);
    if (!attrs.empty()) out_ += " [" + attrs + "]";
    out_ += ";\n";
  }

  drawn write_node(const node& n, const std::string& indent, const std::string& prefix) {
    const auto* child = std::get_if<child_node>(&n.params);
    const auto* cond = std::get_if<conditional_node>(&n.params);
    if ((child && child->graph) || cond) return write_cluster(n, child, cond, indent, prefix + n.name);

    const std::string id = next_id();
    const kind_style style = style_of(n.kind());
    std::string label = shown(n.name) + "\n" + std::string(kind_name(n.kind()));
    if (std::string details = details_of(n, labels_); !details.empty()) label += "\n" + details;
    if (std::string reads = named_operands(n); !reads.empty()) label += "\n" + reads;
    out_ += indent + id + " [label=" + dot_quoted(label) + ", shape=" + std::string(style.shape) +
            ", fillcolor=" + dot_quoted(style.fill) + "];\n";
    id_by_path_.emplace(prefix + n.name, id);
    return drawn{id, id, ""};
  }

  // Refuses, rather than recursing without end or beyond the stack, a child
  // graph that contains itself and nesting deeper than check() accepts.
  void enter(const graph_spec& nested, const std::string& node_path) {
    if (std::find(ancestors_.begin(), ancestors_.end(), &nested) != ancestors_.end()) {
      throw error("to_dot: the child graph of '" + node_path +
                      "' contains itself (it is also the graph of an enclosing node); a graph "
                      "that holds itself cannot be drawn",
                  cudaSuccess, {}, node_path);
    }
    if (ancestors_.size() > check_detail::max_nesting) {
      throw error("to_dot: node '" + node_path + "' holds graphs nested more than " +
                      std::to_string(check_detail::max_nesting) +
                      " deep; to_dot draws at most that many levels of child graphs and bodies",
                  cudaSuccess, {}, node_path);
    }
    ancestors_.push_back(&nested);
  }
  void leave() { ancestors_.pop_back(); }

  drawn write_cluster(const node& n, const child_node* child, const conditional_node* cond,
                      const std::string& indent, const std::string& node_path) {
    const std::string id = next_id();
    drawn self{id, id + "_exit", "cluster_" + id};
    std::string header = shown(n.name) + "\n";
    if (child) {
      header += "child graph";
      if (!child->graph->name.empty()) header += " " + shown(child->graph->name);
    } else {
      header += std::string(kind_name(cond->kind)) + " (" + shown(cond->condition) + ")";
    }
    const std::string inner = indent + "  ";
    out_ += indent + "subgraph " + self.cluster + " {\n";
    out_ += inner + "label=" + dot_quoted(shown(n.name)) + ";\n";
    out_ += inner + "style=\"rounded" + (cond ? ",dashed" : "") + "\"; color=\"#666666\";\n";
    out_ += inner + id + " [label=" + dot_quoted(header) + ", shape=box, fillcolor=\"#eeeeee\"];\n";
    out_ += inner + self.exit + " [shape=point, style=invis, width=0, height=0, label=\"\"];\n";

    std::vector<graph_drawing> bodies;
    if (child) {
      enter(*child->graph, node_path);
      bodies.push_back(write_graph(*child->graph, inner, nested_prefix(node_path, n)));
      leave();
    } else if (cond->bodies.size() == 1 && cond->kind != conditional_kind::switch_case) {
      enter(cond->bodies.front(), node_path);
      bodies.push_back(write_graph(cond->bodies.front(), inner, nested_prefix(node_path, n)));
      leave();
    } else {
      for (std::size_t b = 0; b < cond->bodies.size(); ++b) {
        std::string label = cond->kind == conditional_kind::if_else
                                ? (b == 0 ? "then" : "else")
                                : "case " + std::to_string(b);
        out_ += inner + "subgraph " + self.cluster + "_b" + std::to_string(b) + " {\n";
        out_ += inner + "  label=" + dot_quoted(label) + ";\n";
        enter(cond->bodies[b], node_path);
        bodies.push_back(write_graph(cond->bodies[b], inner + "  ", nested_prefix(node_path, n, b)));
        leave();
        out_ += inner + "}\n";
      }
    }
    // Dashed arrows from the header into each body; invisible ones from each
    // body's sinks to the exit point.
    bool any_body_node = false;
    for (const graph_drawing& body : bodies) {
      for (std::size_t r : body.roots) {
        const drawn& root = body.nodes[r];
        out_ += inner + id + " -> " + root.entry + " [style=dashed, arrowhead=none";
        if (!root.cluster.empty()) out_ += ", lhead=" + root.cluster;
        out_ += "];\n";
      }
      for (std::size_t k : body.sinks) {
        out_ += inner + body.nodes[k].exit + " -> " + self.exit + " [style=invis];\n";
        any_body_node = true;
      }
    }
    if (!any_body_node) out_ += inner + id + " -> " + self.exit + " [style=invis];\n";
    out_ += indent + "}\n";
    return self;
  }

  // Each race as a red dashed line between its two nodes, labelled with the
  // memory; none for a graph whose structure check() refuses (drawn as it is).
  void write_races(const graph_spec& spec) {
    std::vector<race_report> races;
    try {
      races = check_detail::find_races(check_detail::spec_tree(spec));
    } catch (const check_error&) {
      return;
    }
    for (const race_report& r : races) {
      const auto a = id_by_path_.find(r.first);
      const auto b = id_by_path_.find(r.second);
      if (a == id_by_path_.end() || b == id_by_path_.end()) continue;
      out_ += "  " + a->second + " -> " + b->second +
              " [dir=none, style=dashed, color=red, fontcolor=red, penwidth=2, constraint=false, label=" +
              dot_quoted("race: " + shown(r.memory)) + "];\n";
    }
  }

  kernel_labels labels_;
  std::unordered_map<std::string, std::string> id_by_path_;  // drawn node ids by path
  std::string out_;
  std::size_t counter_ = 0;
  std::vector<const graph_spec*> ancestors_;  // the graphs being written, outermost first
};

}  // namespace

std::string to_dot(const graph_spec& spec) { return dot_writer(spec).write(spec); }

void write_dot(const graph_spec& spec, const std::string& path) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw error("cannot open DOT file '" + path + "' for writing");
  file << to_dot(spec);
  file.close();
  if (!file) throw error("cannot write DOT file '" + path + "'");
}

bool render_svg(const std::string& dot_path, const std::string& svg_path) {
  // posix_spawnp, not system(): no shell, so paths need no quoting.
  std::string program = "dot", format = "-Tsvg", output_flag = "-o";
  std::string input = dot_path, output = svg_path;
  char* argv[] = {program.data(), format.data(), input.data(), output_flag.data(), output.data(),
                  nullptr};
  pid_t pid = 0;
  if (posix_spawnp(&pid, "dot", nullptr, nullptr, argv, environ) != 0) return false;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace cudag
