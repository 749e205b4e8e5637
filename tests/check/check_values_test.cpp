// Rejections of values (parameters, conditions, literals) and of node kinds'
// own parameters.
#include <gtest/gtest.h>

#include "spec_helpers.hpp"

namespace cudag {
namespace {
using namespace check_test;

TEST(CheckValues, UndeclaredParameterIsRefused) {
  const graph_spec g = graph({make_node("scale", kernel({param<int>("n")}))});
  expect_rejected([&] { check(g); }, {"node 'scale' uses parameter 'n'", "not declared"},
                  {"scale"});
}

TEST(CheckValues, ParameterOfWrongTypeNamesBothTypes) {
  const graph_spec g =
      graph({make_node("scale", kernel({param<int>("n")}))}, {declare<float>("n")});
  expect_rejected([&] { check(g); },
                  {"node 'scale' passes parameter 'n'", "declared as float", "where int is expected"},
                  {"scale"});
}

TEST(CheckValues, PointerParameterBindsToConstAndVoidPointers) {
  const graph_spec g = graph({make_node("read", kernel({param<const float*>("x")})),
                              make_node("copy", memcpy_node{param<void*>("y"), param<const void*>("x"), 64})},
                             {declare<float*>("x"), declare<float*>("y")});
  EXPECT_NO_THROW(check(g));
}

TEST(CheckValues, ConstPointerParameterDoesNotBindToMutablePointer) {
  const graph_spec g =
      graph({make_node("write", kernel({param<float*>("x")}))}, {declare<const float*>("x")});
  expect_rejected([&] { check(g); }, {"declared as float const*", "where float* is expected"},
                  {"write"});
}

TEST(CheckValues, NestedGraphSeesEnclosingParameters) {
  auto inner = std::make_shared<graph_spec>(graph({make_node("k", kernel({param<int>("n")}))}));
  const graph_spec g = graph({make_node("sub", child_node{inner})}, {declare<int>("n")});
  EXPECT_NO_THROW(check(g));
}

TEST(CheckValues, EnclosingGraphDoesNotSeeNestedParameters) {
  auto inner = std::make_shared<graph_spec>(graph({empty("e")}, {declare<int>("n")}));
  const graph_spec g =
      graph({make_node("sub", child_node{inner}), make_node("k", kernel({param<int>("n")}))});
  expect_rejected([&] { check(g); }, {"node 'k' uses parameter 'n'"}, {"k"});
}

// Past 8 visible parameters a node's parameters are found through the
// spec tree's maps rather than a short list: the same answers either way.
TEST(CheckValues, ManyParametersAreFoundPastTheShortList) {
  std::vector<param_decl> outer;
  std::vector<value> reads_all;
  for (int i = 0; i < 12; ++i) {
    const std::string name = i % 2 ? "p" + std::to_string(i) : "a_longer_name_" + std::to_string(i);
    outer.push_back(i == 11 ? declare<float>(name) : declare<int>(name));
    reads_all.push_back(i == 11 ? param<float>(name) : param<int>(name));
  }
  const auto inner_graph = [&](value read) {
    return std::make_shared<graph_spec>(graph({make_node("inner", kernel({param<int>("own"), std::move(read)}))},
                                              {declare<int>("own")}));
  };
  const auto whole = [&](std::vector<value> top_reads, value inner_read) {
    return graph({make_node("all", kernel(std::move(top_reads))),
                  make_node("sub", child_node{inner_graph(std::move(inner_read))})},
                 outer);
  };
  EXPECT_NO_THROW(check(whole(reads_all, param<float>("p11"))));

  std::vector<value> wrong_type = reads_all;
  wrong_type.back() = param<int>("p11");
  expect_rejected([&] { check(whole(wrong_type, param<float>("p11"))); },
                  {"node 'all' passes parameter 'p11', declared as float, where int is expected"},
                  {"all"});
  std::vector<value> undeclared = reads_all;
  undeclared.push_back(param<int>("p12"));
  expect_rejected([&] { check(whole(undeclared, param<float>("p11"))); },
                  {"node 'all' uses parameter 'p12', which is not declared"}, {"all"});
  // The nested node sees its own parameter and every enclosing one.
  EXPECT_NO_THROW(check(whole(reads_all, param<int>("a_longer_name_10"))));
  expect_rejected([&] { check(whole(reads_all, param<int>("p13"))); },
                  {"node 'sub/inner' uses parameter 'p13', which is not declared"}, {"sub/inner"});
}

TEST(CheckValues, ParameterDeclaredWithTwoTypesIsRefused) {
  auto inner = std::make_shared<graph_spec>(
      graph({make_node("k", kernel({param<float>("n")}))}, {declare<float>("n")}));
  const graph_spec g = graph({make_node("sub", child_node{inner}), make_node("k", kernel({param<int>("n")}))},
                             {declare<int>("n")});
  expect_rejected([&] { check(g); },
                  {"parameter 'n' is declared as int in the top-level graph",
                   "as float in the child graph of 'sub'"},
                  {});
}

TEST(CheckValues, ParameterDeclaredTwiceInOneGraphIsRefused) {
  const graph_spec g = graph({empty("e")}, {declare<int>("n"), declare<int>("n")});
  expect_rejected([&] { check(g); }, {"parameter 'n' is declared twice"}, {});
}

TEST(CheckValues, GridRuleOnNonIntegralParameterIsRefused) {
  kernel_node k = kernel();
  k.grid_from = grid_rule{"x", 256};
  const graph_spec g = graph({make_node("scale", k)}, {declare<float*>("x")});
  expect_rejected([&] { check(g); },
                  {"'scale' computes its grid from parameter 'x'", "float*", "not an integral type"},
                  {"scale"});
}

TEST(CheckValues, GridRuleOnIntegralParameterIsAccepted) {
  kernel_node k = kernel({param<int>("n")});
  k.grid_from = grid_rule{"n", 256};
  const graph_spec g = graph({make_node("scale", k)}, {declare<int>("n")});
  EXPECT_NO_THROW(check(g));
}

TEST(CheckValues, GridRuleOnUndeclaredParameterIsRefused) {
  kernel_node k = kernel();
  k.grid_from = grid_rule{"count", 128};
  const graph_spec g = graph({make_node("scale", k)});
  expect_rejected([&] { check(g); }, {"parameter 'count'", "not declared"}, {"scale"});
}

TEST(CheckValues, LiteralOfWrongSizeIsRefused) {
  value v = make_literal(2.0);  // 8 bytes
  v.type = type_of<int>();
  const graph_spec g = graph({make_node("scale", kernel({make_literal(1), v}))});
  expect_rejected([&] { check(g); }, {"operand 1 of node 'scale'", "literal of 8 bytes", "int (4 bytes)"},
                  {"scale"});
}

TEST(CheckValues, UndeclaredConditionReferenceIsRefused) {
  const graph_spec g = graph({make_node("set", kernel({condition("go")}))});
  expect_rejected([&] { check(g); }, {"node 'set' uses condition 'go'", "not declared"}, {"set"});
}

TEST(CheckValues, NullKernelFunctionIsRefused) {
  kernel_node k = kernel();
  k.function = nullptr;
  const graph_spec g = graph({make_node("scale", k)});
  expect_rejected([&] { check(g); }, {"kernel node 'scale' has no function", "some_kernel"},
                  {"scale"});
}

TEST(CheckValues, MemsetElementSizeMustBeOneTwoOrFour) {
  memset_node m = memset_of(param<void*>("x"));
  m.element_size = 8;
  const graph_spec g = graph({make_node("clear", m)}, {declare<float*>("x")});
  expect_rejected([&] { check(g); }, {"memset node 'clear' has element size 8", "1, 2 or 4"},
                  {"clear"});
}

TEST(CheckValues, MemsetOfZeroWidthIsRefused) {
  const graph_spec g = graph({make_node("clear", memset_of(param<void*>("x"), 0))},
                             {declare<float*>("x")});
  expect_rejected([&] { check(g); }, {"memset node 'clear' has zero width"}, {"clear"});
}

TEST(CheckValues, ChildWithoutGraphIsRefused) {
  const graph_spec g = graph({empty("a"), make_node("sub", child_node{nullptr}, {"a"})});
  expect_rejected([&] { check(g); }, {"child node 'sub' has no graph"}, {"sub"});
}

}  // namespace
}  // namespace cudag
