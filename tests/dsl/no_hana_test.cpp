// A translation unit that does not include cudag/dsl/hana.hpp reads no
// Boost.Hana header: cudag's umbrella and every other header of the DSL are
// included here, and the build fails where one of them brings Hana in. (The
// macro is the include guard of boost/hana/config.hpp, which every Hana
// header includes; hana_view_test.cpp checks that Hana still defines it.)
// Compiled by g++ and, as no_hana_test.cu, by nvcc.
#include <gtest/gtest.h>

#include "cudag/cudag.hpp"
#include "cudag/dsl.hpp"
#include "cudag/dsl/arguments.hpp"
#include "cudag/dsl/buffer_views.hpp"
#include "cudag/dsl/chunked_tuple.hpp"
#include "cudag/dsl/declarations.hpp"
#include "cudag/dsl/edges.hpp"
#include "cudag/dsl/exec.hpp"
#include "cudag/dsl/fixed_string.hpp"
#include "cudag/dsl/graph.hpp"
#include "cudag/dsl/graph_nodes.hpp"
#include "cudag/dsl/host_nodes.hpp"
#include "cudag/dsl/items.hpp"
#include "cudag/dsl/kernel_node.hpp"
#include "cudag/dsl/lowering.hpp"
#include "cudag/dsl/memory_nodes.hpp"
#include "cudag/dsl/node.hpp"
#include "cudag/dsl/node_tuple.hpp"
#include "cudag/dsl/shape.hpp"
#include "cudag/dsl/shape_rules.hpp"

#if defined(BOOST_HANA_CONFIG_HPP) || defined(BOOST_HANA_VERSION)
#error "a cudag header other than cudag/dsl/hana.hpp includes Boost.Hana"
#endif

namespace {

void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }
constexpr auto g = cudag::dsl::graph(
    cudag::dsl::kernel<"scale", scale>(1, 32, cudag::dsl::param<"x", float*>, 2.0f, 32));

// What this test checks is that it compiles; a graph is declared and made
// a spec so that the DSL's templates are instantiated too.
TEST(DslNoHana, TheDslCompilesWithoutBoostHana) {
  const cudag::graph_spec spec = to_spec(g);
  ASSERT_EQ(spec.nodes.size(), 1u);
  EXPECT_EQ(spec.nodes[0].name, "scale");
}

}  // namespace
