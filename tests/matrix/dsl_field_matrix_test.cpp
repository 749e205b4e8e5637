// The field matrix from the DSL: every field a DSL graph reads from a
// parameter, at every placement, rebound through the DSL's exec. The DSL
// exec must (1) lower to what the spec engine lowers its to_spec() to, and
// (2) after the rebind hold what a fresh instantiation at the new value
// holds, taking exec setters for a top-level node and one whole-graph
// update for a nested one (exec setters cannot reach nodes of a body or a
// child graph: the recorder refuses them, as CUDA does).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudag/dsl.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_recorder.hpp"
#include "field_rows.hpp"
#include "recorded_state.hpp"

namespace matrix {
namespace {

using namespace cudag::dsl;

constexpr auto px = param<"x", float*>;
constexpr auto py = param<"y", float*>;
constexpr auto pz = param<"z", float*>;
constexpr auto pa = param<"a", float>;
constexpr auto pk = param<"k", int>;
constexpr auto pn = param<"n", int>;
constexpr auto pf = param<"f", unsigned>;
constexpr auto pev = param<"ev", cudaEvent_t>;
constexpr auto c = condition<"c", 1>;

constexpr auto first = kernel<"first", scale>(2, 32, pz, 2.0f, 100);
constexpr auto other = graph(kernel<"work", scale>(2, 32, pz, 6.0f, 100));

// The placements of field_rows.hpp, from the DSL.
template <class N>
constexpr auto place(placement p, const N& n) {
  (void)p;
  return graph(first, n, edge<"first", "target">);
}
template <class N>
constexpr auto in_child(const N& n) {
  return graph(first, child<"holder">(graph(n)), edge<"first", "holder">);
}
template <class N>
constexpr auto in_if(const N& n) {
  return graph(first, if_then<"holder">(c, graph(n)), edge<"first", "holder">);
}
template <class N>
constexpr auto in_if_else_then(const N& n) {
  return graph(first, if_else<"holder">(c, graph(n), other), edge<"first", "holder">);
}
template <class N>
constexpr auto in_if_else_else(const N& n) {
  return graph(first, if_else<"holder">(c, other, graph(n)), edge<"first", "holder">);
}
template <class N>
constexpr auto in_while(const N& n) {
  return graph(first,
               while_loop<"holder">(
                   c, graph(n, kernel<"again", set_flag>(1, 1, c, 8), edge<"target", "again">)),
               edge<"first", "holder">);
}
template <class N>
constexpr auto in_switch(const N& n) {
  return graph(first, switch_case<"holder">(c, other, graph(n)), edge<"first", "holder">);
}
template <class N>
constexpr auto in_child_in_if(const N& n) {
  return graph(first, if_then<"holder">(c, graph(child<"inner">(graph(n)))),
               edge<"first", "holder">);
}

template <class B>
cudag::binding as_binding(const B& b) {
  return cudag::bind(std::string(B::name.view()), b.value);
}

std::string spec_state(const cudag::graph_spec& spec, const std::vector<cudag::binding>& b) {
  cudag::native::recorder rec;
  name_everything(rec);
  auto e = cudag::instantiate(spec, b);
  return state_of(rec, e);
}

/// One cell: graph `g` bound with `binds`, rebound with `after`.
template <class G, class After, class... B>
void check_cell(const char* field, placement pl, const G& g, const After& after,
                const B&... binds) {
  SCOPED_TRACE(std::string(field) + " at " + placement_name(pl));
  const cudag::graph_spec spec = to_spec(g, "matrix");
  const std::vector<cudag::binding> b1 = {as_binding(binds)...};
  const std::vector<cudag::binding> b2 = with(b1, as_binding(after));
  const std::string want_first = spec_state(spec, b1);
  const std::string want_after = spec_state(spec, b2);
  cudag::native::recorder rec;
  name_everything(rec);
  auto e = instantiate(g, binds...);
  EXPECT_EQ(state_of(rec, e), want_first) << "the DSL lowers otherwise than its spec";
  rec.clear();
  e.rebind(after);
  EXPECT_EQ(way_of(rec.calls()), pl == placement::top ? "S" : "U") << rec.transcript();
  EXPECT_EQ(state_of(rec, e), want_after) << "the rebind did not reach the node";
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

/// Every placement a node kind can take (bodies: kernel, memcpy, memset).
template <bool Bodies, class N, class After, class... B>
void every_placement(const char* field, const N& n, const After& after, const B&... binds) {
  check_cell(field, placement::top, place(placement::top, n), after, binds...);
  check_cell(field, placement::child, in_child(n), after, binds...);
  if constexpr (Bodies) {
    check_cell(field, placement::if_body, in_if(n), after, binds...);
    check_cell(field, placement::if_else_then, in_if_else_then(n), after, binds...);
    check_cell(field, placement::if_else_else, in_if_else_else(n), after, binds...);
    check_cell(field, placement::while_body, in_while(n), after, binds...);
    check_cell(field, placement::switch_case, in_switch(n), after, binds...);
    check_cell(field, placement::child_in_if, in_child_in_if(n), after, binds...);
  }
}

TEST(DslFieldMatrix, KernelArguments) {
  every_placement<true>("kernel argument 0 (pointer)",
                        kernel<"target", scale>(2, 32, px, 2.0f, 100), px = dev_w, pz = dev_z,
                        px = dev_x);
  every_placement<true>("kernel argument 1 (float)", kernel<"target", scale>(2, 32, px, pa, 100),
                        pa = 3.0f, pz = dev_z, px = dev_x, pa = 2.0f);
  every_placement<true>("kernel argument 2 (int)", kernel<"target", scale>(2, 32, px, 2.0f, pk),
                        pk = 200, pz = dev_z, px = dev_x, pk = 100);
}

TEST(DslFieldMatrix, KernelGridFromACount) {
  every_placement<true>("kernel grid from a count",
                        kernel<"target", scale>(blocks_for(pn, 256), 256, px, 2.0f, pn), pn = 3000,
                        pz = dev_z, px = dev_x, pn = 1000);
}

TEST(DslFieldMatrix, MemcpyOperands) {
  every_placement<true>("memcpy destination", memcpy<"target">(py, px, 4096), py = dev_w,
                        pz = dev_z, px = dev_x, py = dev_y);
  every_placement<true>("memcpy source", memcpy<"target">(py, px, 4096), px = dev_w, pz = dev_z,
                        px = dev_x, py = dev_y);
}

TEST(DslFieldMatrix, MemsetOperands) {
  every_placement<true>("memset destination", memset<"target">(py, 7u, 1024), py = dev_w,
                        pz = dev_z, py = dev_y);
  every_placement<true>("memset value", memset<"target">(py, pf, 1024), pf = 9u, pz = dev_z,
                        py = dev_y, pf = 7u);
}

TEST(DslFieldMatrix, Events) {
  every_placement<false>("event_record event", record<"target">(pev), pev = event_b, pz = dev_z,
                         pev = event_a);
  every_placement<false>("event_wait event", wait<"target">(pev), pev = event_b, pz = dev_z,
                         pev = event_a);
}

void log_first(float* p) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", static_cast<void*>(p));
  host_log().push_back(std::string("dsl(") + text + ")");
}

TEST(DslFieldMatrix, HostArguments) {
  every_placement<false>("host argument 0", host<"target">(&log_first, px), px = dev_w, pz = dev_z,
                         px = dev_x);
}

}  // namespace
}  // namespace matrix
