// Properties over the field list of the matrix (field_rows.hpp):
//  - every member of every node kind's struct has a row, or a reason it
//    has none (a member added to a struct fails to compile here until the
//    inventory names it);
//  - two specs that differ in exactly one field never share an exec cache
//    key (topology and shape); the topology key changes exactly for the
//    fields CUDA cannot update in place;
//  - a binding that only a rebind carries leaves both keys alone (an exact
//    hit then rebinds it); one a launch dimension follows changes the
//    shape key;
//  - diff agrees with the topology key on what is the same topology.
#include <gtest/gtest.h>

#include <cstddef>
#include <set>
#include <string>
#include <type_traits>

#include "cudag/diff.hpp"
#include "cudag/exec_cache.hpp"
#include "field_rows.hpp"

namespace matrix {
namespace {

// -------------------------------------------------------- the inventory --
/// Converts to anything: counts an aggregate's members by brace init.
struct any_member {
  template <class T>
  operator T() const;  // never defined: unevaluated only
};
template <class T, class... Members>
constexpr std::size_t member_count() {
  if constexpr (requires { T{Members{}..., any_member{}}; })
    return member_count<T, Members..., any_member>();
  else
    return sizeof...(Members);
}

/// One entry a member: the rows that change it ("a, b"), and why it has
/// none or what else covers it.
struct member_entry {
  const char* member;
  const char* rows;
  const char* note = "";
};

// clang-format off
constexpr member_entry kernel_members[] = {
    {"function", "function"},
    {"function_name", "", "a label for messages and pictures; never sent to CUDA"},
    {"grid", "grid.x, grid.y, grid.z"},
    {"block", "block.x, block.y, block.z"},
    {"shared_bytes", "shared bytes"},
    {"args", "argument 0 (pointer), argument 1 (float), argument 2 (int)"},
    {"grid_from", "grid from a count"},
    {"shape_rules", "", "the parameter forms of the grid, block and shared rows"},
    {"priority", "priority"},
    {"cluster", "cluster"},
    {"cooperative", "cooperative"},
    {"mem_sync_domain", "memory-sync domain"},
    {"shared_carveout", "shared carveout"},
    {"access_policy", "access-policy window"},
    {"synchronizes_grid_dependencies", "", "a declaration check() reads for programmatic edges; never sent to CUDA (tests/engine/test_programmatic_edges.cpp)"},
    {"keep_alive", "", "what the node's kernel needs alive (a module); never sent to CUDA"},
    {"accesses", "", "a declaration the race check reads; never sent to CUDA (tests/check/races_test.cpp)"},
};
constexpr member_entry memcpy_members[] = {
    {"dst", "destination"}, {"src", "source"}, {"bytes", "bytes"}, {"kind", "kind"}};
constexpr member_entry memset_members[] = {
    {"dst", "destination"}, {"fill", "value"}, {"element_size", "element size"},
    {"width", "width"},     {"height", "height"}, {"pitch_bytes", "pitch"}};
constexpr member_entry host_members[] = {
    {"function", "callable"}, {"args", "argument 0"},
    {"accesses", "", "a declaration the race check reads; never sent to CUDA (tests/check/races_test.cpp)"}};
constexpr member_entry captured_members[] = {
    {"record", "recording"}, {"args", "argument 0"},
    {"what", "", "a label for pictures; never sent to CUDA"},
    {"accesses", "", "a declaration the race check reads; never sent to CUDA (tests/check/races_test.cpp)"}};
constexpr member_entry event_members[] = {{"event", "event"}};
constexpr member_entry alloc_members[] = {
    {"buffer", "", "the buffer's name: renaming it renames every reader (another topology)"},
    {"bytes", "size"},
    {"device", "", "one device in the recorder (-1 is the current device, 0)"}};
constexpr member_entry free_members[] = {
    {"buffer", "", "which allocation it frees: another buffer is another topology"}};
constexpr member_entry conditional_members[] = {
    {"kind", "", "another kind of conditional node is another topology (diff: kind changed)"},
    {"condition", "condition"},
    {"bodies", "body", "and every body placement of every other row"}};
constexpr member_entry child_members[] = {{"graph", "body", "and the child placements of every other row"}};
// clang-format on

static_assert(
    member_count<cudag::kernel_node>() == std::size(kernel_members),
    "kernel_node gained or lost a member: give it a row in field_rows.hpp and an entry here");
static_assert(
    member_count<cudag::memcpy_node>() == std::size(memcpy_members),
    "memcpy_node gained or lost a member: give it a row in field_rows.hpp and an entry here");
static_assert(
    member_count<cudag::memset_node>() == std::size(memset_members),
    "memset_node gained or lost a member: give it a row in field_rows.hpp and an entry here");
static_assert(
    member_count<cudag::host_node>() == std::size(host_members),
    "host_node gained or lost a member: give it a row in field_rows.hpp and an entry here");
static_assert(member_count<cudag::captured_node>() == std::size(captured_members),
              "captured_node gained or lost a member: give it a row and an entry here");
static_assert(member_count<cudag::event_record_node>() == std::size(event_members));
static_assert(member_count<cudag::event_wait_node>() == std::size(event_members));
static_assert(member_count<cudag::mem_alloc_node>() == std::size(alloc_members),
              "mem_alloc_node gained or lost a member: give it a row and an entry here");
static_assert(member_count<cudag::mem_free_node>() == std::size(free_members));
static_assert(member_count<cudag::conditional_node>() == std::size(conditional_members),
              "conditional_node gained or lost a member: give it a row and an entry here");
static_assert(member_count<cudag::child_node>() == std::size(child_members));
static_assert(std::variant_size_v<cudag::node_params> == 12,
              "a node kind was added: give it rows in field_rows.hpp and an inventory here");

TEST(FieldProperties, EveryRowNamedInTheInventoryExists) {
  std::set<std::string> named;
  auto take = [&](const char* kind, const auto& entries) {
    for (const member_entry& e : entries) {
      EXPECT_TRUE(*e.rows || *e.note)
          << kind << "." << e.member << " has neither a row nor a reason";
      for (std::string rows = e.rows; !rows.empty();) {
        const std::size_t comma = rows.find(", ");
        named.insert(std::string(kind) + " " + rows.substr(0, comma));
        rows = comma == std::string::npos ? "" : rows.substr(comma + 2);
      }
    }
  };
  take("kernel", kernel_members);
  take("memcpy", memcpy_members);
  take("memset", memset_members);
  take("host", host_members);
  take("captured", captured_members);
  take("event_record", event_members);
  take("event_wait", event_members);
  take("mem_alloc", alloc_members);
  take("conditional", conditional_members);
  take("child", child_members);
  std::set<std::string> have;
  for (const field_row& row : rows()) have.insert(row.kind + " " + row.field);
  for (const std::string& n : named) EXPECT_TRUE(have.count(n)) << "no row for " << n;
}

// ------------------------------------------------------------- the keys --
/// The fields CUDA cannot update in place: part of the topology key.
bool topological(const field_row& row) {
  return is_launch_attribute(row) || row.row_kind == kind_of_row::mem_alloc ||
         row.row_kind == kind_of_row::conditional || row.row_kind == kind_of_row::child;
}

TEST(FieldProperties, OneFieldApartNeverSharesACacheKey) {
  const auto b = first_bindings();
  for (const field_row& row : rows())
    for (placement pl : all_placements) {
      if (!allowed(row, pl)) continue;
      SCOPED_TRACE(row.kind + "." + row.field + " at " + placement_name(pl));
      const cudag::graph_spec base = placed(pl, row.base());
      const cudag::graph_spec changed = placed(pl, row.base(), row.change);
      const bool same_topology = cudag::topology_key(base) == cudag::topology_key(changed);
      EXPECT_EQ(same_topology, !topological(row));
      if (same_topology) {
        EXPECT_NE(cudag::shape_key(base, b), cudag::shape_key(changed, b))
            << "two specs one field apart share a cache key: an exact hit would run the first";
      }
      // diff's "same topology" is the graph's shape alone: only a body
      // that gains a node leaves it (the cache's key also holds what CUDA
      // cannot update in place).
      EXPECT_EQ(cudag::diff(base, changed).same_topology(), row.field != "body")
          << cudag::diff(base, changed).text();
    }
}

TEST(FieldProperties, ABindingChangesTheShapeKeyOnlyWhereALaunchFollowsIt) {
  const auto b1 = first_bindings();
  for (const field_row& row : rows()) {
    if (!row.param_form) continue;
    for (placement pl : all_placements) {
      if (!allowed(row, pl)) continue;
      SCOPED_TRACE(row.kind + "." + row.field + " at " + placement_name(pl));
      const cudag::graph_spec spec = placed(pl, row.param_form());
      const auto b2 = with(b1, *row.after);
      EXPECT_EQ(cudag::topology_key(spec), cudag::topology_key(placed(pl, row.param_form())));
      EXPECT_EQ(cudag::shape_key(spec, b1) == cudag::shape_key(spec, b2), !row.launch_dimension);
    }
  }
}

// An edge's kind is not a field of a node kind but of a dependency: CUDA
// cannot change an edge's data in place, so the topology key and diff both
// see another topology; the grid dependency marker, never sent to CUDA, is
// neither (diff reports it as a change of the node).
TEST(FieldProperties, AnEdgesKindIsAnotherTopologyToTheKeyAndToDiff) {
  const auto marked = [] {
    cudag::kernel_node k = kernel_with([](cudag::kernel_node&) {});
    k.synchronizes_grid_dependencies = true;
    return named(std::move(k));
  };
  // The kernel -> kernel edges of the matrix graphs: first -> target at the
  // top level; target -> again inside a WHILE body.
  const auto typed = [](cudag::edge_kind kind) {
    return [kind](cudag::graph_spec& root, cudag::node& target) {
      if (target.deps.size() == 1) {
        target.dependency_kinds = {kind};
        return;
      }
      auto& body = std::get<cudag::conditional_node>(root.nodes.back().params).bodies.at(0);
      cudag::node& again = body.nodes.at(1);
      std::get<cudag::kernel_node>(again.params).synchronizes_grid_dependencies = true;
      again.dependency_kinds = {kind};
    };
  };
  for (placement pl : {placement::top, placement::while_body}) {
    SCOPED_TRACE(placement_name(pl));
    const cudag::graph_spec base = placed(pl, marked(), typed(cudag::edge_kind::full));
    for (cudag::edge_kind kind : {cudag::edge_kind::programmatic, cudag::edge_kind::launch_completion}) {
      const cudag::graph_spec changed = placed(pl, marked(), typed(kind));
      EXPECT_NE(cudag::topology_key(base), cudag::topology_key(changed));
      const cudag::spec_diff d = cudag::diff(base, changed);
      EXPECT_FALSE(d.same_topology()) << d.text();
      ASSERT_EQ(d.changes.size(), 1u) << d.text();
      EXPECT_EQ(d.changes[0].kind, cudag::change_kind::edge_kind_changed);
    }
    const cudag::graph_spec unmarked = placed(pl, named(kernel_with([](cudag::kernel_node&) {})),
                                              typed(cudag::edge_kind::full));
    EXPECT_EQ(cudag::topology_key(unmarked), cudag::topology_key(base));
    EXPECT_TRUE(cudag::diff(unmarked, base).same_topology());
    EXPECT_EQ(cudag::diff(unmarked, base).text(),
              "changed " + target_path(pl) + ": synchronizes grid dependencies no -> yes\n");
  }
}

}  // namespace
}  // namespace matrix
