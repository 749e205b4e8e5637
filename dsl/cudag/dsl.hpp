#pragma once
// The compile-time DSL: a graph declared once as a constexpr value, checked
// by the compiler, lowered by a walk the compiler planned.
#include "cudag/dsl/accesses.hpp"
#include "cudag/dsl/declarations.hpp"
#include "cudag/dsl/edges.hpp"
#include "cudag/dsl/exec.hpp"
#include "cudag/dsl/graph.hpp"
#include "cudag/dsl/graph_nodes.hpp"
#include "cudag/dsl/host_nodes.hpp"
#include "cudag/dsl/kernel_node.hpp"
#include "cudag/dsl/memory_nodes.hpp"
