// Prelude: the DSL's saxpy graph of the README, its parameters and an exec
// of it, `ex`; parameters of the guide's other DSL fragments.
#pragma once
#include "data.hpp"

// The DSL's names as `using namespace cudag::dsl;` brings them, all but
// cudag::dsl::exec, so that a fragment may also name the builder's exec
// `exec` (context exec).
using cudag::dsl::blocks_for, cudag::dsl::buffer, cudag::dsl::captured, cudag::dsl::chain,
    cudag::dsl::child, cudag::dsl::condition, cudag::dsl::edge, cudag::dsl::edges,
    cudag::dsl::edges_from, cudag::dsl::empty, cudag::dsl::exec_of, cudag::dsl::fan_in,
    cudag::dsl::fan_out, cudag::dsl::graph, cudag::dsl::host, cudag::dsl::if_else,
    cudag::dsl::if_then, cudag::dsl::instantiate, cudag::dsl::kernel, cudag::dsl::mem_alloc,
    cudag::dsl::mem_free, cudag::dsl::memcpy, cudag::dsl::memset, cudag::dsl::memset_2d,
    cudag::dsl::param, cudag::dsl::record, cudag::dsl::switch_case, cudag::dsl::to_spec,
    cudag::dsl::wait, cudag::dsl::while_loop, cudag::dsl::edge_kind,
    cudag::dsl::synchronizes_grid_dependencies, cudag::dsl::with_attributes,
    cudag::dsl::with_priority;

constexpr auto x = param<"x", float*>;
constexpr auto y = param<"y", float*>;
constexpr auto n = param<"n", int>;
constexpr auto scratch = param<"scratch", float*>;
constexpr auto error_bits = param<"error_bits", unsigned*>;

inline constexpr auto saxpy = graph(
    memset<"clear_y">(y, 0u, 1 << 20),
    kernel<"scale", scale>(blocks_for(n, 256), 256, x, 2.0f, n),
    kernel<"axpy", axpy>(blocks_for(n, 256), 256, x, y, 3.0f, n),
    fan_in<"axpy", "clear_y", "scale">);

extern exec_of<saxpy> ex;
