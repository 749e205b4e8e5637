// Two executable graphs sharing one template (exec::instance), checked
// without a GPU: the template holds whichever values were sent to it last,
// for every node, nested ones too. A whole-graph update of one exec must
// first send every node of the template with that exec's own values, also
// the nodes of child graphs and conditional bodies that the rebind itself
// did not change; otherwise the exec takes the other exec's values there.
// Each exec is compared with one instantiated afresh at its values.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cudag/exec.hpp"
#include "cudag/native_recorder.hpp"
#include "recorder_support.hpp"

namespace {

using engine_test::dev_x;
using engine_test::dev_y;
using engine_test::lines;

void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }

void name_everything(cudag::native::recorder& rec) {
  rec.name_kernel(&scale, "scale");
  rec.name_pointer(dev_x, "x");
  rec.name_pointer(dev_y, "y");
}

cudag::node kernel_reading(std::string name, const std::string& pointer, cudag::value factor) {
  cudag::kernel_node k;
  k.function = reinterpret_cast<const void*>(&scale);
  k.function_name = "scale";
  k.grid = dim3(2, 1, 1);
  k.block = dim3(32, 1, 1);
  k.args.push_back(cudag::value{cudag::type_of<float*>(), cudag::param_ref{pointer}});
  k.args.push_back(std::move(factor));
  k.args.push_back(cudag::make_literal(100));
  cudag::node n;
  n.name = std::move(name);
  n.params = std::move(k);
  return n;
}

cudag::graph_spec body(std::string name, cudag::node n) {
  cudag::graph_spec g;
  g.name = std::move(name);
  g.nodes.push_back(std::move(n));
  return g;
}

enum class placement { child, if_body, if_else_else, switch_case, child_in_if };
const char* name_of(placement p) {
  switch (p) {
    case placement::child: return "child";
    case placement::if_body: return "IF";
    case placement::if_else_else: return "IF/ELSE (else)";
    case placement::switch_case: return "SWITCH (case 1)";
    case placement::child_in_if: return "child in IF";
  }
  return "?";
}

/// first (top level, reads x and a) -> holder, with `inner` (reads x) placed in it.
cudag::graph_spec placed(placement p) {
  cudag::graph_spec root;
  root.name = "shared";
  root.params = {{"x", cudag::type_of<float*>()}, {"a", cudag::type_of<float>()}};
  root.nodes.push_back(kernel_reading(
      "first", "x", cudag::value{cudag::type_of<float>(), cudag::param_ref{"a"}}));
  cudag::node inner = kernel_reading("inner", "x", cudag::make_literal(4.0f));
  cudag::node other = kernel_reading("inner", "x", cudag::make_literal(6.0f));
  cudag::node holder;
  holder.name = "holder";
  holder.deps.push_back("first");
  if (p == placement::child) {
    holder.params = cudag::child_node{std::make_shared<cudag::graph_spec>(body("c", inner))};
  } else {
    root.conditions = {{"c", 1, true}};
    cudag::conditional_node c;
    c.condition = "c";
    if (p == placement::if_body) {
      c.kind = cudag::conditional_kind::if_then;
      c.bodies.push_back(body("then", inner));
    } else if (p == placement::child_in_if) {
      c.kind = cudag::conditional_kind::if_then;
      cudag::node child;
      child.name = "child";
      child.params = cudag::child_node{std::make_shared<cudag::graph_spec>(body("c", inner))};
      c.bodies.push_back(body("then", std::move(child)));
    } else {
      c.kind = p == placement::if_else_else ? cudag::conditional_kind::if_else
                                            : cudag::conditional_kind::switch_case;
      c.bodies.push_back(body("zero", other));
      c.bodies.push_back(body("one", inner));
    }
    holder.params = std::move(c);
  }
  root.nodes.push_back(std::move(holder));
  return root;
}

std::string fresh_state(const cudag::graph_spec& spec, const std::vector<cudag::binding>& b) {
  cudag::native::recorder rec;
  name_everything(rec);
  auto e = cudag::instantiate(spec, b);
  return rec.exec_state(e.native_exec());
}

TEST(SharedTemplate, AWholeUpdateSendsEveryNestedNodeWithItsOwnExecsValues) {
  for (placement p : {placement::child, placement::if_body, placement::if_else_else,
                      placement::switch_case, placement::child_in_if}) {
    SCOPED_TRACE(name_of(p));
    const cudag::graph_spec spec = placed(p);
    // (One recorder at a time: the fresh states first.)
    const std::string want_b = fresh_state(spec, {cudag::bind("x", dev_y), cudag::bind("a", 2.0f)});
    const std::string want_a = fresh_state(spec, {cudag::bind("x", dev_x), cudag::bind("a", 3.0f)});
    const std::string want_b2 = fresh_state(spec, {cudag::bind("x", dev_y), cudag::bind("a", 5.0f)});
    cudag::native::recorder rec;
    name_everything(rec);
    {
      const std::vector<cudag::binding> first = {cudag::bind("x", dev_x), cudag::bind("a", 2.0f)};
      auto a = cudag::instantiate(spec, first);
      // The instance sends every node with its values to the shared
      // template: the nested reader of x now holds y there.
      const cudag::binding other_x[] = {cudag::bind("x", dev_y)};
      auto b = a.instance(other_x);
      EXPECT_EQ(rec.exec_state(b.native_exec()), want_b);

      // `a` changes a parameter only its top-level node reads, through one
      // whole-graph update: the nested node keeps a's x, not b's.
      a.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
      rec.clear();
      EXPECT_EQ(a.rebind("a", 3.0f), cudag::rebind_path::whole_graph_update);
      EXPECT_EQ(rec.exec_state(a.native_exec()), want_a) << lines(rec.calls());

      // And the other way round.
      b.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
      rec.clear();
      EXPECT_EQ(b.rebind("a", 5.0f), cudag::rebind_path::whole_graph_update);
      EXPECT_EQ(rec.exec_state(b.native_exec()), want_b2) << lines(rec.calls());
      EXPECT_EQ(rec.exec_state(a.native_exec()), want_a);
    }
    EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
  }
}

}  // namespace
