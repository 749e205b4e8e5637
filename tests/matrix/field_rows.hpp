#pragma once
// The field list of the test matrix: every field of every node kind, each
// as a row that changes exactly that field. The matrix (field_matrix_test),
// the key and diff properties (field_properties_test) and the DSL half
// (dsl_field_matrix_test) all read this one list, so a field cannot be
// added to a node kind without a row: the row count per kind is asserted
// against the size of that kind's struct (field_properties_test).
//
// A row has up to two forms:
//  - the literal form: a spec whose target node holds the field as a
//    literal, and `change`, which changes exactly that field (the paths
//    that take a changed spec: update, update_or_reinstantiate, the cache's
//    topology hit, add_to_capture, eager runs, diff);
//  - the parameter form: the field read from parameter `param`, bound to
//    `before` then `after` (the paths that take bindings: rebind, reshape,
//    the cache's exact hit, instance).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cudag/bindings.hpp"
#include "cudag/native_api.hpp"
#include "cudag/spec.hpp"

namespace matrix {

// Host functions stand in for kernels: the recorder shows their names.
inline void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }
inline void scale_other(float* x, float a, int n) { (void)x, (void)a, (void)n; }
inline void set_flag(cudaGraphConditionalHandle h, int limit) { (void)h, (void)limit; }

// Stand-in device addresses above 4 GiB (a pointer copied in part shows).
inline float* const dev_x = reinterpret_cast<float*>(0x7f5a07000000);
inline float* const dev_y = reinterpret_cast<float*>(0x7f5a07100000);
inline float* const dev_z = reinterpret_cast<float*>(0x7f5a07200000);
inline float* const dev_w = reinterpret_cast<float*>(0x7f5a07300000);
inline const cudaEvent_t event_a = reinterpret_cast<cudaEvent_t>(0x7f5a07e00000);
inline const cudaEvent_t event_b = reinterpret_cast<cudaEvent_t>(0x7f5a07f00000);

/// The parameters every matrix graph declares, and their first values.
inline std::vector<cudag::param_decl> declared_params() {
  return {{"x", cudag::type_of<float*>()},        {"y", cudag::type_of<float*>()},
          {"z", cudag::type_of<float*>()},        {"a", cudag::type_of<float>()},
          {"k", cudag::type_of<int>()},           {"g", cudag::type_of<unsigned>()},
          {"f", cudag::type_of<unsigned>()},      {"ev", cudag::type_of<cudaEvent_t>()},
          {"ev2", cudag::type_of<cudaEvent_t>()}, {"n", cudag::type_of<int>()}};
}
inline std::vector<cudag::binding> first_bindings() {
  return {cudag::bind("x", dev_x), cudag::bind("y", dev_y),    cudag::bind("z", dev_z),
          cudag::bind("a", 2.0f),  cudag::bind("k", 100),      cudag::bind("g", 2u),
          cudag::bind("f", 7u),    cudag::bind("ev", event_a), cudag::bind("ev2", event_b),
          cudag::bind("n", 1000)};
}
/// `bindings` with `b` in place of the binding of the same name.
inline std::vector<cudag::binding> with(std::vector<cudag::binding> bindings,
                                        const cudag::binding& b) {
  for (auto& old : bindings)
    if (old.name == b.name) old = b;
  return bindings;
}

/// Host node callables: each records its name and argument when it runs.
inline std::vector<std::string>& host_log() {
  static std::vector<std::string> log;
  return log;
}
inline std::shared_ptr<const cudag::host_function> host_callable(std::string name) {
  return std::make_shared<const cudag::host_function>([name](std::span<const void* const> args) {
    const void* p = args.empty() ? nullptr : *static_cast<void* const*>(args[0]);
    char text[32];
    std::snprintf(text, sizeof text, "%p", p);
    host_log().push_back(name + "(" + text + ")");
  });
}

inline cudag::value reads(const std::string& name, cudag::type_tag type) {
  return cudag::value{type, cudag::param_ref{name}};
}

enum class kind_of_row {
  kernel,
  memcpy,
  memset,
  host,
  captured,
  event_record,
  event_wait,
  mem_alloc,
  conditional,
  child
};

/// Captured work: a memset of the first argument to `value`, enqueued
/// through the native seam (so that the recorder sees it captured).
inline std::shared_ptr<const cudag::capture_function> capture_callable(unsigned value) {
  return std::make_shared<const cudag::capture_function>(
      [value](cudaStream_t s, std::span<const void* const> args) {
        void* dst = *static_cast<void* const*>(args[0]);
        (void)cudag::native::api().memset_2d_async(dst, 0, value, 4, 64, 1, s);
      });
}

struct field_row {
  std::string kind;   ///< the node kind ("kernel")
  std::string field;  ///< the field ("grid.x")
  kind_of_row row_kind;
  /// The literal form's target node (named "target"), and the change.
  std::function<cudag::node()> base;
  std::function<void(cudag::graph_spec& root, cudag::node& target)> change;
  /// The parameter form: the target node reading `param`, and its two values.
  std::function<cudag::node()> param_form;
  std::optional<cudag::binding> after;  ///< the parameter's second value
  bool launch_dimension = false;        ///< the parameter drives a launch dimension
};

/// The launch attributes beyond priority: set on the template's node only,
/// so another one is another topology (the cache misses, update refuses),
/// and an eager run, which sends none, refuses them.
inline bool is_launch_attribute(const field_row& row) {
  return row.row_kind == kind_of_row::kernel &&
         (row.field == "cluster" || row.field == "cooperative" || row.field == "memory-sync domain" ||
          row.field == "shared carveout" || row.field == "access-policy window");
}

inline cudag::node named(cudag::node_params p) {
  cudag::node n;
  n.name = "target";
  n.params = std::move(p);
  return n;
}

inline cudag::kernel_node base_kernel() {
  cudag::kernel_node k;
  k.function = reinterpret_cast<const void*>(&scale);
  k.function_name = "scale";
  k.grid = dim3(2, 1, 1);
  k.block = dim3(32, 1, 1);
  k.args.push_back(reads("x", cudag::type_of<float*>()));
  k.args.push_back(cudag::make_literal(2.0f));
  k.args.push_back(cudag::make_literal(100));
  return k;
}

template <class F>
cudag::kernel_node kernel_with(F&& edit) {
  cudag::kernel_node k = base_kernel();
  edit(k);
  return k;
}

inline cudag::memcpy_node base_memcpy() {
  return cudag::memcpy_node{reads("y", cudag::type_of<void*>()),
                            reads("x", cudag::type_of<const void*>()), 4096, cudaMemcpyDefault};
}
inline cudag::memset_node base_memset() {
  cudag::memset_node m;
  m.dst = reads("y", cudag::type_of<void*>());
  m.fill = cudag::make_literal(7u);
  m.element_size = 4;
  m.width = 1024;
  m.height = 1;
  m.pitch_bytes = 0;
  return m;
}
inline cudag::memset_node base_memset_2d() {
  cudag::memset_node m = base_memset();
  m.width = 256;
  m.height = 4;
  m.pitch_bytes = 2048;
  return m;
}
inline cudag::host_node base_host(const char* callable = "first") {
  return cudag::host_node{host_callable(callable), {reads("x", cudag::type_of<float*>())}};
}
/// A one-node body for the conditional rows and nested placements.
inline cudag::graph_spec body_with_kernel(std::string name, float factor) {
  cudag::graph_spec g;
  g.name = std::move(name);
  cudag::kernel_node k = base_kernel();
  k.args[1] = cudag::make_literal(factor);
  cudag::node n;
  n.name = "work";
  n.params = std::move(k);
  g.nodes.push_back(std::move(n));
  return g;
}

/// Every row. Placement and path are the matrix's other two dimensions.
inline const std::vector<field_row>& rows() {
  using namespace cudag;
  static const std::vector<field_row> all = [] {
    std::vector<field_row> r;
    auto kernel_row = [&](std::string field, std::function<void(kernel_node&)> edit,
                          std::function<void(kernel_node&)> to_param = {},
                          std::optional<binding> after = std::nullopt, bool launch = false) {
      field_row row{"kernel",
                    std::move(field),
                    kind_of_row::kernel,
                    [] { return named(base_kernel()); },
                    [edit](graph_spec&, node& t) { edit(std::get<kernel_node>(t.params)); },
                    {},
                    std::move(after),
                    launch};
      if (to_param) row.param_form = [to_param] { return named(kernel_with(to_param)); };
      r.push_back(std::move(row));
    };
    auto follow = [](launch_dim dim, std::uint64_t mult = 1) {
      return [dim, mult](kernel_node& k) {
        k.shape_rules.push_back(shape_rule{dim, "g", mult, 1});
      };
    };
    kernel_row("function", [](kernel_node& k) {
      k.function = reinterpret_cast<const void*>(&scale_other);
      k.function_name = "scale_other";
    });
    kernel_row(
        "grid.x", [](kernel_node& k) { k.grid.x = 3; }, follow(launch_dim::grid_x), bind("g", 3u),
        true);
    kernel_row(
        "grid.y", [](kernel_node& k) { k.grid.y = 3; }, follow(launch_dim::grid_y), bind("g", 3u),
        true);
    kernel_row(
        "grid.z", [](kernel_node& k) { k.grid.z = 3; }, follow(launch_dim::grid_z), bind("g", 3u),
        true);
    kernel_row(
        "block.x", [](kernel_node& k) { k.block.x = 64; }, follow(launch_dim::block_x, 16),
        bind("g", 4u), true);
    kernel_row(
        "block.y", [](kernel_node& k) { k.block.y = 2; }, follow(launch_dim::block_y),
        bind("g", 3u), true);
    kernel_row(
        "block.z", [](kernel_node& k) { k.block.z = 2; }, follow(launch_dim::block_z),
        bind("g", 3u), true);
    kernel_row(
        "shared bytes", [](kernel_node& k) { k.shared_bytes = 128; },
        follow(launch_dim::shared_bytes, 64), bind("g", 3u), true);
    kernel_row(
        "grid from a count",
        [](kernel_node& k) {
          k.grid_from = grid_rule{"n", 256};
        },
        [](kernel_node& k) {
          k.grid_from = grid_rule{"n", 256};
        },
        bind("n", 3000), true);
    kernel_row(
        "argument 0 (pointer)", [](kernel_node& k) { k.args[0] = reads("y", type_of<float*>()); },
        {}, bind("x", dev_w));
    r.back().param_form = [] { return named(base_kernel()); };
    kernel_row(
        "argument 1 (float)", [](kernel_node& k) { k.args[1] = make_literal(3.0f); },
        [](kernel_node& k) { k.args[1] = reads("a", type_of<float>()); }, bind("a", 3.0f));
    kernel_row(
        "argument 2 (int)", [](kernel_node& k) { k.args[2] = make_literal(200); },
        [](kernel_node& k) { k.args[2] = reads("k", type_of<int>()); }, bind("k", 200));
    kernel_row("priority", [](kernel_node& k) { k.priority = 1; });
    // The base grid is 2x1x1: a cluster of two divides it.
    kernel_row("cluster", [](kernel_node& k) { k.cluster = dim3(2, 1, 1); });
    kernel_row("cooperative", [](kernel_node& k) { k.cooperative = true; });
    kernel_row("memory-sync domain",
               [](kernel_node& k) { k.mem_sync_domain = cudaLaunchMemSyncDomainRemote; });
    kernel_row("shared carveout", [](kernel_node& k) { k.shared_carveout = 50; });
    kernel_row("access-policy window", [](kernel_node& k) {
      k.access_policy = cudag::access_policy_window{dev_y, 4096, 0.5f};
    });

    auto simple_row =
        [&](std::string kind, kind_of_row rk, std::string field, std::function<node()> base,
            std::function<void(graph_spec&, node&)> change, std::function<node()> param_form = {},
            std::optional<binding> after = std::nullopt) {
          r.push_back(field_row{std::move(kind), std::move(field), rk, std::move(base),
                                std::move(change), std::move(param_form), std::move(after), false});
        };
    auto memcpy_base = [] { return named(base_memcpy()); };
    auto on_memcpy = [](auto edit) {
      return [edit](graph_spec&, node& t) { edit(std::get<memcpy_node>(t.params)); };
    };
    simple_row("memcpy", kind_of_row::memcpy, "destination", memcpy_base,
               on_memcpy([](memcpy_node& m) { m.dst = reads("z", type_of<void*>()); }), memcpy_base,
               bind("y", dev_w));
    simple_row("memcpy", kind_of_row::memcpy, "source", memcpy_base,
               on_memcpy([](memcpy_node& m) { m.src = reads("z", type_of<const void*>()); }),
               memcpy_base, bind("x", dev_w));
    simple_row("memcpy", kind_of_row::memcpy, "bytes", memcpy_base,
               on_memcpy([](memcpy_node& m) { m.bytes = 2048; }));
    simple_row("memcpy", kind_of_row::memcpy, "kind", memcpy_base,
               on_memcpy([](memcpy_node& m) { m.kind = cudaMemcpyDeviceToDevice; }));

    auto memset_base = [] { return named(base_memset()); };
    auto memset_2d = [] { return named(base_memset_2d()); };
    auto on_memset = [](auto edit) {
      return [edit](graph_spec&, node& t) { edit(std::get<memset_node>(t.params)); };
    };
    simple_row("memset", kind_of_row::memset, "destination", memset_base,
               on_memset([](memset_node& m) { m.dst = reads("z", type_of<void*>()); }), memset_base,
               bind("y", dev_w));
    simple_row(
        "memset", kind_of_row::memset, "value", memset_base,
        on_memset([](memset_node& m) { m.fill = make_literal(9u); }),
        [] {
          memset_node m = base_memset();
          m.fill = reads("f", type_of<unsigned>());
          return named(m);
        },
        bind("f", 9u));
    simple_row("memset", kind_of_row::memset, "element size", memset_base,
               on_memset([](memset_node& m) { m.element_size = 2; }));
    simple_row("memset", kind_of_row::memset, "width", memset_base,
               on_memset([](memset_node& m) { m.width = 512; }));
    simple_row("memset", kind_of_row::memset, "height", memset_2d,
               on_memset([](memset_node& m) { m.height = 3; }));
    simple_row("memset", kind_of_row::memset, "pitch", memset_2d,
               on_memset([](memset_node& m) { m.pitch_bytes = 4096; }));

    auto host_base = [] { return named(base_host()); };
    simple_row("host", kind_of_row::host, "callable", host_base, [](graph_spec&, node& t) {
      std::get<host_node>(t.params).function = host_callable("second");
    });
    simple_row(
        "host", kind_of_row::host, "argument 0", host_base,
        [](graph_spec&, node& t) {
          std::get<host_node>(t.params).args[0] = reads("y", type_of<float*>());
        },
        host_base, bind("x", dev_w));

    auto captured_base = [] {
      return named(captured_node{capture_callable(1), {reads("x", type_of<float*>())}, "fill"});
    };
    simple_row("captured", kind_of_row::captured, "recording", captured_base,
               [](graph_spec&, node& t) {
                 std::get<captured_node>(t.params).record = capture_callable(2);
               });
    simple_row(
        "captured", kind_of_row::captured, "argument 0", captured_base,
        [](graph_spec&, node& t) {
          std::get<captured_node>(t.params).args[0] = reads("y", type_of<float*>());
        },
        captured_base, bind("x", dev_w));

    simple_row(
        "event_record", kind_of_row::event_record, "event",
        [] { return named(event_record_node{reads("ev", type_of<cudaEvent_t>())}); },
        [](graph_spec&, node& t) {
          std::get<event_record_node>(t.params).event = reads("ev2", type_of<cudaEvent_t>());
        },
        [] { return named(event_record_node{reads("ev", type_of<cudaEvent_t>())}); },
        bind("ev", event_b));
    simple_row(
        "event_wait", kind_of_row::event_wait, "event",
        [] { return named(event_wait_node{reads("ev", type_of<cudaEvent_t>())}); },
        [](graph_spec&, node& t) {
          std::get<event_wait_node>(t.params).event = reads("ev2", type_of<cudaEvent_t>());
        },
        [] { return named(event_wait_node{reads("ev", type_of<cudaEvent_t>())}); },
        bind("ev", event_b));

    simple_row(
        "mem_alloc", kind_of_row::mem_alloc, "size",
        [] {
          return named(mem_alloc_node{"target", 256, -1});
        },
        [](graph_spec&, node& t) { std::get<mem_alloc_node>(t.params).bytes = 512; });

    auto if_node = [] {
      conditional_node c;
      c.kind = conditional_kind::if_then;
      c.condition = "c2";  // the holders of nested placements test "c"
      c.bodies.push_back(body_with_kernel("then", 4.0f));
      return named(std::move(c));
    };
    simple_row("conditional", kind_of_row::conditional, "condition", if_node,
               [](graph_spec&, node& t) { std::get<conditional_node>(t.params).condition = "c3"; });
    simple_row("conditional", kind_of_row::conditional, "default", if_node,
               [](graph_spec& root, node&) {
                 for (auto& c : root.conditions)
                   if (c.name == "c2") c.default_value = 0;
               });
    simple_row("conditional", kind_of_row::conditional, "body", if_node, [](graph_spec&, node& t) {
      auto& body = std::get<conditional_node>(t.params).bodies[0];
      body.nodes.push_back(body_with_kernel("more", 5.0f).nodes[0]);
      body.nodes.back().name = "more";
      body.nodes.back().deps = {"work"};  // both write x: in turn
    });
    simple_row(
        "child", kind_of_row::child, "body",
        [] {
          return named(child_node{std::make_shared<graph_spec>(body_with_kernel("inner", 4.0f))});
        },
        [](graph_spec&, node& t) {
          auto inner = body_with_kernel("inner", 4.0f);
          inner.nodes.push_back(body_with_kernel("more", 5.0f).nodes[0]);
          inner.nodes.back().name = "more";
          inner.nodes.back().deps = {"work"};  // both write x: in turn
          std::get<child_node>(t.params).graph = std::make_shared<graph_spec>(std::move(inner));
        });
    return r;
  }();
  return all;
}

/// Where the target node lives.
enum class placement {
  top,
  child,
  if_body,
  if_else_then,
  if_else_else,
  while_body,
  switch_case,
  child_in_if
};
inline constexpr placement all_placements[] = {
    placement::top,          placement::child,      placement::if_body,     placement::if_else_then,
    placement::if_else_else, placement::while_body, placement::switch_case, placement::child_in_if};
inline const char* placement_name(placement p) {
  switch (p) {
    case placement::top:
      return "top level";
    case placement::child:
      return "child";
    case placement::if_body:
      return "IF";
    case placement::if_else_then:
      return "IF/ELSE (then)";
    case placement::if_else_else:
      return "IF/ELSE (else)";
    case placement::while_body:
      return "WHILE";
    case placement::switch_case:
      return "SWITCH";
    case placement::child_in_if:
      return "child in IF";
  }
  return "?";
}
/// The path of the target node in a graph placed at `p`.
inline std::string target_path(placement p) {
  switch (p) {
    case placement::top:
      return "target";
    case placement::child:
      return "holder/target";
    case placement::if_body:
      return "holder/target";
    case placement::if_else_then:
      return "holder[0]/target";
    case placement::if_else_else:
      return "holder[1]/target";
    case placement::while_body:
      return "holder/target";
    case placement::switch_case:
      return "holder[1]/target";
    case placement::child_in_if:
      return "holder/inner/target";
  }
  return "?";
}
/// Whether CUDA lets `kind` live at `p` (conditional bodies take kernel,
/// memcpy, memset, empty, child and conditional nodes only).
inline bool allowed(const field_row& row, placement p) {
  const bool in_body = p != placement::top && p != placement::child;
  if (!in_body) return true;
  switch (row.row_kind) {
    case kind_of_row::host:
    case kind_of_row::event_record:
    case kind_of_row::event_wait:
    case kind_of_row::mem_alloc:
      return false;
    default:
      return true;
  }
}

/// The matrix graph: a first kernel, then a holder at `p` with the target
/// inside (or the target itself at top level), after the first kernel.
inline cudag::graph_spec placed(
    placement p, cudag::node target,
    const std::function<void(cudag::graph_spec&, cudag::node&)>& edit = {}) {
  using namespace cudag;
  graph_spec root;
  root.name = "matrix";
  root.params = declared_params();
  root.conditions = {{"c", 1, true}, {"c2", 1, true}, {"c3", 1, true}};
  node first;
  first.name = "first";
  first.params =
      kernel_with([](cudag::kernel_node& k) { k.args[0] = reads("z", cudag::type_of<float*>()); });
  root.nodes.push_back(std::move(first));
  auto body_of = [](std::string name, node n) {
    graph_spec g;
    g.name = std::move(name);
    g.nodes.push_back(std::move(n));
    return g;
  };
  auto other_body = [] { return body_with_kernel("other", 6.0f); };
  node holder;
  holder.name = "holder";
  switch (p) {
    case placement::top:
      holder = std::move(target);
      break;
    case placement::child:
      holder.params =
          child_node{std::make_shared<graph_spec>(body_of("holder", std::move(target)))};
      break;
    case placement::if_body:
    case placement::if_else_then:
    case placement::if_else_else:
    case placement::while_body:
    case placement::switch_case: {
      conditional_node c;
      c.condition = "c";
      c.kind = p == placement::if_body       ? conditional_kind::if_then
               : p == placement::while_body  ? conditional_kind::while_loop
               : p == placement::switch_case ? conditional_kind::switch_case
                                             : conditional_kind::if_else;
      graph_spec mine = body_of("body", std::move(target));
      if (p == placement::while_body) {  // the loop's body decides whether it runs again
        node flag;
        flag.name = "again";
        kernel_node k;
        k.function = reinterpret_cast<const void*>(&set_flag);
        k.function_name = "set_flag";
        k.args.push_back(value{type_of<cudaGraphConditionalHandle>(), condition_ref{"c"}});
        k.args.push_back(make_literal(8));
        flag.params = std::move(k);
        flag.deps.push_back("target");
        mine.nodes.push_back(std::move(flag));
      }
      if (p == placement::if_else_else || p == placement::switch_case)
        c.bodies.push_back(other_body());
      c.bodies.push_back(std::move(mine));
      if (p == placement::if_else_then) c.bodies.push_back(other_body());
      holder.params = std::move(c);
      break;
    }
    case placement::child_in_if: {
      node inner;
      inner.name = "inner";
      inner.params = child_node{std::make_shared<graph_spec>(body_of("inner", std::move(target)))};
      conditional_node c;
      c.kind = conditional_kind::if_then;
      c.condition = "c";
      c.bodies.push_back(body_of("body", std::move(inner)));
      holder.params = std::move(c);
      break;
    }
  }
  holder.deps.push_back("first");
  root.nodes.push_back(std::move(holder));
  if (edit) {
    // The target, wherever it was placed; child graphs are copied first
    // (shared_ptr<const>) so that the base spec stays as it was.
    node* at = &root.nodes.back();
    std::function<node*(graph_spec&)> find = [&](graph_spec& g) -> node* {
      for (node& n : g.nodes) {
        if (n.name == "target") return &n;
        if (auto* c = std::get_if<child_node>(&n.params)) {
          auto copy = std::make_shared<graph_spec>(*c->graph);
          c->graph = copy;
          if (node* t = find(*copy)) return t;
        }
        if (auto* c = std::get_if<conditional_node>(&n.params))
          for (graph_spec& b : c->bodies)
            if (node* t = find(b)) return t;
      }
      return nullptr;
    };
    at = find(root);
    edit(root, *at);
  }
  // CUDA refuses a graph with a condition no conditional node tests.
  std::function<void(const graph_spec&, std::vector<std::string>&)> tested =
      [&](const graph_spec& g, std::vector<std::string>& out) {
        for (const node& n : g.nodes) {
          if (auto* c = std::get_if<child_node>(&n.params)) tested(*c->graph, out);
          if (auto* c = std::get_if<conditional_node>(&n.params)) {
            out.push_back(c->condition);
            for (const graph_spec& b : c->bodies) tested(b, out);
          }
        }
      };
  std::vector<std::string> used;
  tested(root, used);
  std::erase_if(root.conditions, [&](const condition_decl& c) {
    return std::find(used.begin(), used.end(), c.name) == used.end();
  });
  return root;
}

}  // namespace matrix
