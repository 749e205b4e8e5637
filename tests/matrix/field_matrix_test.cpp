// The field matrix: every field of every node kind (field_rows.hpp), at
// every placement (top level, in a child graph, in an IF, IF/ELSE, WHILE and
// SWITCH body, in a child inside an IF body), changed alone through every
// path that can change it. Against the recorder: after the path, the exec
// must hold exactly what an exec instantiated afresh at the target holds
// (recorder::exec_state), the path must take the way the table expects
// (an exec setter, a child-graph setter, one whole-graph update, a refusal,
// a re-instantiation, a cache hit...), and misuse of the native API is a
// failure. A refused change must leave the exec as it was.
//
// The table of expected ways is docs/testing.md's "Field matrix"; the last
// test writes the observed table and requires the doc to hold it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cudag/diff.hpp"
#include "cudag/eager.hpp"
#include "cudag/exec.hpp"
#include "cudag/exec_cache.hpp"
#include "cudag/handles.hpp"
#include "cudag/native_nodes.hpp"
#include "cudag/native_recorder.hpp"
#include "field_rows.hpp"
#include "recorded_state.hpp"

namespace matrix {
namespace {

using cudag::binding;
using cudag::graph_spec;

/// What an exec instantiated afresh from `spec` holds.
std::string fresh_state(const graph_spec& spec, const std::vector<binding>& bindings) {
  cudag::native::recorder rec;
  name_everything(rec);
  auto e = cudag::instantiate(spec, bindings);
  return state_of(rec, e);
}

enum class path {
  update,
  update_or_reinstantiate,
  rebind,
  reshape,
  cache_exact,
  cache_topology,
  instance,
  add_to_capture,
  eager,
  diff
};
constexpr path all_paths[] = {path::update,      path::update_or_reinstantiate,
                              path::rebind,      path::reshape,
                              path::cache_exact, path::cache_topology,
                              path::instance,    path::add_to_capture,
                              path::eager,       path::diff};
const char* path_name(path p) {
  switch (p) {
    case path::update:
      return "update";
    case path::update_or_reinstantiate:
      return "update_or_reinstantiate";
    case path::rebind:
      return "rebind";
    case path::reshape:
      return "reshape";
    case path::cache_exact:
      return "cache, same shape";
    case path::cache_topology:
      return "cache, same topology";
    case path::instance:
      return "instance";
    case path::add_to_capture:
      return "add_to_capture";
    case path::eager:
      return "eager run";
    case path::diff:
      return "diff";
  }
  return "?";
}

bool is_body(placement p) { return p != placement::top && p != placement::child; }

/// What a path must do with a row at a placement, and why where it is not
/// "sent". The rules, not the observations: a fault that turns a send into
/// a refusal (or the reverse) fails here.

std::string expected(const field_row& row, placement pl, path p) {
  const bool literal_refused =  // update cannot change these in place
      row.field == "priority" || is_launch_attribute(row) || row.row_kind == kind_of_row::mem_alloc ||
      row.row_kind == kind_of_row::child || row.row_kind == kind_of_row::conditional;
  // Exec setters reach the exec's own top-level nodes only; a node in a
  // child graph or a body changes through one whole-graph update.
  const std::string sent = pl == placement::top ? "S" : "U";
  if (row.row_kind == kind_of_row::captured) {
    // Captured work is recorded again into a new graph, which only CUDA's
    // child-graph exec setter takes, and only for a top-level node: nested,
    // it is refused in place (update_or_reinstantiate and the cache
    // instantiate afresh; instance() lowers anew).
    const bool top = pl == placement::top;
    switch (p) {
      case path::update:
      case path::rebind:
      case path::reshape:
        return p != path::update && !row.param_form ? "" : top ? "C" : "R";
      case path::update_or_reinstantiate:
        return top ? "C" : "RI";
      case path::cache_exact:
        return !row.param_form ? "" : top ? "X" : "RI";
      case path::cache_topology:
        return top ? "H" : "RI";
      default:
        break;
    }
  }
  // CUDA changes 1-D memsets and copies only, and no copy's kind, in an
  // executable graph: it refuses these, and the exec stays as it was.
  const bool cuda_refuses =
      (row.row_kind == kind_of_row::memset && (row.field == "height" || row.field == "pitch")) ||
      (row.row_kind == kind_of_row::memcpy && row.field == "kind");
  switch (p) {
    case path::update:
      return literal_refused ? "R" : cuda_refuses ? "RC" : sent;
    case path::update_or_reinstantiate:
      return literal_refused || cuda_refuses ? "RI" : sent;
    case path::rebind:
    case path::reshape:
      if (!row.param_form) return "";
      return sent;
    case path::cache_exact:
      if (!row.param_form) return "";
      return row.launch_dimension ? "H" : "X";
    case path::cache_topology:
      if (row.field == "priority" || cuda_refuses) return "RI";
      if (is_launch_attribute(row) || row.row_kind == kind_of_row::mem_alloc || row.row_kind == kind_of_row::child ||
          row.row_kind == kind_of_row::conditional)
        return "M";
      return "H";
    case path::instance:
      return row.param_form ? "I" : "";
    case path::add_to_capture:
      return "K";
    case path::eager:
      if (is_body(pl) || row.row_kind == kind_of_row::conditional || is_launch_attribute(row)) return "R";
      if (row.field == "priority") return "=";
      return "E";
    case path::diff:
      return "D";
  }
  return "?";
}

struct cell {
  std::string observed;
  std::string failure;  ///< empty when the oracle held
  std::string note;     ///< a refusal's message, shown when the table expected otherwise
};

graph_spec literal_base(const field_row& row, placement pl) { return placed(pl, row.base()); }
graph_spec literal_changed(const field_row& row, placement pl) {
  return placed(pl, row.base(), row.change);
}

/// Runs `body` under a recorder; a cudag::error becomes "R" (refused), and
/// misuse of the native API is a failure.
template <class F>
cell recorded(F&& body) {
  cell c;
  cudag::native::recorder rec;
  name_everything(rec);
  try {
    c = body(rec);
  } catch (const cudag::error& e) {
    c.observed = "R";
    c.note = e.what();
  }
  if (!rec.misuse().empty()) c.failure += "native misuse:\n" + lines(rec.misuse());
  return c;
}

std::string compare(const std::string& what, const std::string& got, const std::string& want) {
  if (got == want) return {};
  return what + " differs from a fresh instantiation:\n--- got\n" + got + "--- want\n" + want;
}

cell run_update(const field_row& row, placement pl, bool or_reinstantiate) {
  const graph_spec base = literal_base(row, pl);
  const graph_spec changed = literal_changed(row, pl);
  const auto b1 = first_bindings();
  const std::string want_changed = fresh_state(changed, b1);
  const std::string want_base = fresh_state(base, b1);
  return recorded([&](cudag::native::recorder& rec) {
    cell c;
    auto e = cudag::instantiate(base, b1);
    rec.clear();
    try {
      if (or_reinstantiate) {
        const bool again = e.update_or_reinstantiate(changed, b1);
        c.observed = again ? "RI" : way_of(rec.calls());
      } else {
        e.update(changed, b1);
        c.observed = way_of(rec.calls());
      }
      c.failure = compare("the exec", state_of(rec, e), want_changed);
    } catch (const cudag::error& refusal) {
      // Refused by cudag before any call ("R"), or by CUDA ("RC"): either
      // way the exec is as it was.
      c.observed = way_of(rec.calls()) == "-" ? "R" : "RC";
      c.note = refusal.what();
      c.failure = compare("the refused exec", state_of(rec, e), want_base);
    }
    return c;
  });
}

cell run_rebind(const field_row& row, placement pl, bool reshape) {
  const graph_spec spec = placed(pl, row.param_form());
  const auto b1 = first_bindings();
  const auto b2 = with(b1, *row.after);
  const std::string want = fresh_state(spec, b2);
  return recorded([&](cudag::native::recorder& rec) {
    cell c;
    auto e = cudag::instantiate(spec, b1);
    rec.clear();
    if (reshape)
      e.reshape(*row.after);
    else
      e.rebind(*row.after);
    c.observed = way_of(rec.calls());
    c.failure = compare("the rebound exec", state_of(rec, e), want);
    return c;
  });
}

std::string cache_way(const cudag::exec_cache_stats& s) {
  if (s.refused_updates) return "RI";
  if (s.exact_hits) return "X";
  if (s.hits) return "H";
  return "M";
}

cell run_cache(const field_row& row, placement pl, bool same_shape) {
  const graph_spec first = same_shape ? placed(pl, row.param_form()) : literal_base(row, pl);
  const graph_spec second = same_shape ? first : literal_changed(row, pl);
  const auto b1 = first_bindings();
  const auto b2 = same_shape ? with(b1, *row.after) : b1;
  const std::string want = fresh_state(second, b2);
  return recorded([&](cudag::native::recorder& rec) {
    cell c;
    cudag::exec_cache cache;
    (void)cache.acquire(first, b1);
    const cudag::exec_cache_stats before = cache.stats();
    cudag::exec& e = cache.acquire(second, b2);
    cudag::exec_cache_stats s = cache.stats();
    s.exact_hits -= before.exact_hits;
    s.hits -= before.hits;
    s.refused_updates -= before.refused_updates;
    c.observed = cache_way(s);
    c.failure = compare("the cached exec", state_of(rec, e), want);
    return c;
  });
}

cell run_instance(const field_row& row, placement pl) {
  const graph_spec spec = placed(pl, row.param_form());
  const auto b1 = first_bindings();
  const std::string want_first = fresh_state(spec, b1);
  const std::string want_second = fresh_state(spec, with(b1, *row.after));
  return recorded([&](cudag::native::recorder& rec) {
    cell c;
    auto e = cudag::instantiate(spec, b1);
    const binding changed[] = {*row.after};
    auto other = e.instance(changed);
    c.observed = "I";
    c.failure = compare("the instance", state_of(rec, other), want_second) +
                compare("the exec it came from", state_of(rec, e), want_first);
    // The two share a template: a whole-graph update of either sends every
    // node of it, and leaves the other as it was. (Nested captured work is
    // not rebound in place at all: the rebind table says so.)
    if (row.row_kind == kind_of_row::captured && pl != placement::top) return c;
    binding before;
    for (const binding& b : b1)
      if (b.name == row.after->name) before = b;
    e.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
    other.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
    e.rebind(*row.after);
    other.rebind(before);
    c.failure += compare("the exec rebound after the instance", state_of(rec, e), want_second) +
                 compare("the instance rebound back", state_of(rec, other), want_first);
    return c;
  });
}

cell run_capture(const field_row& row, placement pl) {
  const graph_spec changed = literal_changed(row, pl);
  const auto b1 = first_bindings();
  std::string want;
  {
    cudag::native::recorder rec;
    name_everything(rec);
    cudag::lowered_graph lowered = cudag::lower(changed, b1);
    want = rec.graph_state(lowered.graph.get());
  }
  return recorded([&](cudag::native::recorder& rec) {
    cell c;
    cudag::unique_stream s = cudag::make_stream();
    cudag::native::begin_capture(s.get(), cudaStreamCaptureModeThreadLocal, "matrix");
    cudag::graph_in_capture added = cudag::add_to_capture(s.get(), changed, b1);
    cudag::unique_graph captured = cudag::native::end_capture(s.get(), "matrix");
    c.observed = "K";
    c.failure = compare("the captured graph", rec.graph_state(captured.get()), want);
    return c;
  });
}

/// The eager run's calls, from the stream's first piece of work on.
std::string eager_calls(const graph_spec& spec, const std::vector<binding>& b) {
  cudag::native::recorder rec;
  name_everything(rec);
  cudag::unique_stream s = cudag::make_stream();
  rec.clear();
  host_log().clear();
  {
    cudag::eager_run run = cudag::run_eagerly(spec, b, s.get());
    run.synchronize();
  }
  std::string out = rec.transcript();
  for (const std::string& call : host_log()) out += "host call " + call + "\n";
  return out;
}

cell run_eager(const field_row& row, placement pl) {
  cell c;
  const auto b1 = first_bindings();
  try {
    const std::string before = eager_calls(literal_base(row, pl), b1);
    const std::string after = eager_calls(literal_changed(row, pl), b1);
    c.observed = before == after ? "=" : "E";
  } catch (const cudag::error& e) {
    c.observed = "R";
    c.note = e.what();
  }
  return c;
}

cell run_diff(const field_row& row, placement pl) {
  cell c;
  const cudag::spec_diff d = cudag::diff(literal_base(row, pl), literal_changed(row, pl));
  const std::string path = target_path(pl);
  bool names_target = false;
  for (const auto& change : d.changes)
    names_target |= change.node.starts_with(path) || change.node.ends_with("c2");
  c.observed = names_target ? "D" : d.empty() ? "-" : "elsewhere";
  if (!names_target) c.failure = "diff does not name the target:\n" + d.text();
  return c;
}

cell run_cell(const field_row& row, placement pl, path p) {
  switch (p) {
    case path::update:
      return run_update(row, pl, false);
    case path::update_or_reinstantiate:
      return run_update(row, pl, true);
    case path::rebind:
      return run_rebind(row, pl, false);
    case path::reshape:
      return run_rebind(row, pl, true);
    case path::cache_exact:
      return run_cache(row, pl, true);
    case path::cache_topology:
      return run_cache(row, pl, false);
    case path::instance:
      return run_instance(row, pl);
    case path::add_to_capture:
      return run_capture(row, pl);
    case path::eager:
      return run_eager(row, pl);
    case path::diff:
      return run_diff(row, pl);
  }
  return {};
}

/// Every cell, run once for all the tests of this file.
struct matrix_run {
  // [row][path] -> one code a placement, in all_placements order ("." where
  // the kind cannot live there, "" where the row has no form for the path)
  std::vector<std::map<path, std::vector<std::string>>> codes;
  std::map<path, std::vector<std::string>> failures;
};

const matrix_run& run_all() {
  static const matrix_run all = [] {
    matrix_run m;
    for (const field_row& row : rows()) {
      auto& per_path = m.codes.emplace_back();
      for (path p : all_paths) {
        auto& codes = per_path[p];
        for (placement pl : all_placements) {
          if (!allowed(row, pl)) {
            codes.push_back(".");
            continue;
          }
          const std::string want = expected(row, pl, p);
          if (want.empty()) {
            codes.push_back("");
            continue;
          }
          cell c;
          try {
            c = run_cell(row, pl, p);
          } catch (const std::exception& e) {
            c.observed = "threw";
            c.failure = std::string("unexpected exception: ") + e.what();
          }
          codes.push_back(c.observed);
          std::string where = row.kind + "." + row.field + " at " + placement_name(pl) + " via " +
                              path_name(p) + ": ";
          if (c.observed != want)
            m.failures[p].push_back(where + "took '" + c.observed + "', the table says '" + want +
                                    "'" + (c.note.empty() ? "" : "\n" + c.note) +
                                    (c.failure.empty() ? "" : "\n" + c.failure));
          else if (!c.failure.empty())
            m.failures[p].push_back(where + c.failure);
        }
      }
    }
    return m;
  }();
  return all;
}

void expect_path(path p) {
  const matrix_run& m = run_all();
  auto it = m.failures.find(p);
  if (it == m.failures.end()) return;
  for (const std::string& f : it->second) ADD_FAILURE() << f;
}

TEST(FieldMatrix, Update) { expect_path(path::update); }
TEST(FieldMatrix, UpdateOrReinstantiate) { expect_path(path::update_or_reinstantiate); }
TEST(FieldMatrix, Rebind) { expect_path(path::rebind); }
TEST(FieldMatrix, Reshape) { expect_path(path::reshape); }
TEST(FieldMatrix, ExecCacheSameShape) { expect_path(path::cache_exact); }
TEST(FieldMatrix, ExecCacheSameTopology) { expect_path(path::cache_topology); }
TEST(FieldMatrix, Instance) { expect_path(path::instance); }
TEST(FieldMatrix, AddToCapture) { expect_path(path::add_to_capture); }
TEST(FieldMatrix, EagerRun) { expect_path(path::eager); }
TEST(FieldMatrix, Diff) { expect_path(path::diff); }

// "enabled": a field of the exec alone (exec::set_enabled), for the kinds
// CUDA can disable (kernel, memcpy, memset), on the exec's own top-level
// nodes; it must survive a rebind by exec setters and an update. Nested
// nodes and other kinds are refused, naming the node.
TEST(FieldMatrix, Enabled) {
  for (const field_row& row : rows()) {
    if (row.field != "argument 0 (pointer)" && row.field != "source" &&
        row.field != "destination" && row.field != "argument 0" && row.field != "event")
      continue;
    if (row.kind == "memcpy" && row.field == "destination") continue;
    if (!row.param_form) continue;
    const bool can = row.row_kind == kind_of_row::kernel || row.row_kind == kind_of_row::memcpy ||
                     row.row_kind == kind_of_row::memset;
    for (placement pl : all_placements) {
      if (!allowed(row, pl)) continue;
      SCOPED_TRACE(row.kind + " at " + placement_name(pl));
      const graph_spec spec = placed(pl, row.param_form());
      const std::string name = target_path(pl);
      cudag::native::recorder rec;
      name_everything(rec);
      auto e = cudag::instantiate(spec, first_bindings());
      rec.clear();
      if (!can || pl != placement::top) {
        try {
          e.set_enabled(name, false);
          ADD_FAILURE() << "set_enabled was taken";
        } catch (const cudag::error& refusal) {
          EXPECT_NE(std::string(refusal.what()).find(pl == placement::top ? name : "holder"),
                    std::string::npos)
              << refusal.what();
        }
        EXPECT_TRUE(rec.calls().empty()) << lines(rec.calls());
        continue;
      }
      e.set_enabled(name, false);
      ASSERT_EQ(rec.calls().size(), 1u) << lines(rec.calls());
      EXPECT_TRUE(rec.calls()[0].starts_with("node_set_enabled")) << rec.calls()[0];
      EXPECT_TRUE(rec.calls()[0].ends_with(" off")) << rec.calls()[0];
      EXPECT_FALSE(e.enabled(name));
      EXPECT_FALSE(rec.node_enabled(e.native_exec(), e.node_handle(name)));
      e.rebind(*row.after);  // an exec setter: the node stays disabled
      EXPECT_FALSE(rec.node_enabled(e.native_exec(), e.node_handle(name)));
      e.set_enabled(name, true);
      EXPECT_TRUE(e.enabled(name));
      EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
    }
  }
}

/// The table as docs/testing.md prints it.
std::string table() {
  const matrix_run& m = run_all();
  std::ostringstream out;
  out << "| field |";
  for (path p : all_paths) out << " " << path_name(p) << " |";
  out << "\n|---|";
  for (std::size_t k = 0; k < std::size(all_paths); ++k) out << "---|";
  out << "\n";
  for (std::size_t r = 0; r < rows().size(); ++r) {
    out << "| " << rows()[r].kind << " " << rows()[r].field << " |";
    for (path p : all_paths) {
      const auto& codes = m.codes[r].at(p);
      std::string text;
      bool any = false;
      for (const std::string& code : codes) {
        any |= !code.empty() && code != ".";
        text += code.empty() ? "–" : code;
        text += " ";
      }
      if (!text.empty()) text.pop_back();
      out << " " << (any ? text : "no form") << " |";
    }
    out << "\n";
  }
  return out.str();
}

TEST(FieldMatrix, TheDocsHoldTheTable) {
  const std::string produced = table();
  if (const char* out = std::getenv("CUDAG_WRITE_MATRIX")) std::ofstream(out) << produced;
  const char* docs = std::getenv("CUDAG_TESTING_MD");
  if (docs == nullptr) GTEST_SKIP() << "CUDAG_TESTING_MD is not set (meson sets it)";
  std::ifstream in(docs);
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const std::string begin = "<!-- field matrix: begin -->\n", end = "<!-- field matrix: end -->";
  const auto from = doc.find(begin), to = doc.find(end);
  ASSERT_NE(from, std::string::npos) << docs << " has no field matrix";
  ASSERT_NE(to, std::string::npos);
  EXPECT_EQ(doc.substr(from + begin.size(), to - from - begin.size()), produced)
      << "docs/testing.md's field matrix is out of date; CUDAG_WRITE_MATRIX=FILE writes this one";
}

}  // namespace
}  // namespace matrix
