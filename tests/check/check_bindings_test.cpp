// check(spec, bindings): every declared parameter bound once, with its type.
#include <gtest/gtest.h>

#include "spec_helpers.hpp"

namespace cudag {
namespace {
using namespace check_test;

graph_spec saxpy_like() {
  auto inner = std::make_shared<graph_spec>(
      graph({make_node("tail", kernel({param<int>("tail_n")}))}, {declare<int>("tail_n")}));
  return graph({make_node("scale", kernel({param<const float*>("x"), param<float>("a"), param<int>("n")})),
                make_node("sub", child_node{inner}, {"scale"})},
               {declare<const float*>("x"), declare<float>("a"), declare<int>("n")});
}

float data[4];

TEST(CheckBindings, AllBoundIsAccepted) {
  const std::vector<binding> b{bind("x", &data[0]), bind("a", 2.0f), bind("n", 4), bind("tail_n", 1)};
  EXPECT_NO_THROW(check(saxpy_like(), b));
}

TEST(CheckBindings, ParameterOnlyInNestedGraphMustBeBound) {
  const std::vector<binding> b{bind("x", &data[0]), bind("a", 2.0f), bind("n", 4)};
  expect_rejected([&] { check(saxpy_like(), b); },
                  {"parameter 'tail_n' (int, declared in the child graph of 'sub') is not bound",
                   "used by 'sub/tail'"},
                  {"sub/tail"});
}

TEST(CheckBindings, UnboundParameterIsRefused) {
  const std::vector<binding> b{bind("x", &data[0]), bind("n", 4), bind("tail_n", 1)};
  expect_rejected([&] { check(saxpy_like(), b); }, {"parameter 'a' (float", "is not bound"},
                  {"scale"});
}

TEST(CheckBindings, BindingOfWrongTypeNamesBothTypes) {
  const std::vector<binding> b{bind("x", &data[0]), bind("a", 2.0), bind("n", 4), bind("tail_n", 1)};
  expect_rejected([&] { check(saxpy_like(), b); },
                  {"parameter 'a' is declared as float", "bound to a value of type double"},
                  {"scale"});
}

TEST(CheckBindings, ParameterBoundTwiceIsRefused) {
  const std::vector<binding> b{bind("x", &data[0]), bind("a", 2.0f), bind("n", 4), bind("n", 5),
                               bind("tail_n", 1)};
  expect_rejected([&] { check(saxpy_like(), b); }, {"parameter 'n' is bound twice"}, {"scale"});
}

TEST(CheckBindings, BindingForUndeclaredParameterIsRefused) {
  const std::vector<binding> b{bind("x", &data[0]), bind("a", 2.0f), bind("n", 4), bind("tail_n", 1),
                               bind("extra", 7)};
  expect_rejected([&] { check(saxpy_like(), b); },
                  {"a binding names parameter 'extra'", "no graph of the spec declares"}, {});
}

TEST(CheckBindings, MutablePointerBindsToConstPointerParameter) {
  float* mutable_x = &data[1];
  const std::vector<binding> b{bind("x", mutable_x), bind("a", 2.0f), bind("n", 4), bind("tail_n", 1)};
  EXPECT_NO_THROW(check(saxpy_like(), b));
}

TEST(CheckBindings, SpecErrorsComeFirst) {
  graph_spec g = saxpy_like();
  g.nodes.push_back(empty("scale"));
  expect_rejected([&] { check(g, std::vector<binding>{}); }, {"'scale' is used twice"}, {"scale"});
}

}  // namespace
}  // namespace cudag
