// Prelude: an exec of a DSL graph that allocates buffer "tmp", `exec`.
#pragma once
#include "data.hpp"

inline constexpr auto with_tmp = cudag::dsl::graph(
    cudag::dsl::mem_alloc<"alloc_tmp">(cudag::dsl::buffer<"tmp", float>, 1024),
    cudag::dsl::kernel<"fill", fill_kernel>(4, 256, cudag::dsl::buffer<"tmp", float>, 1024),
    cudag::dsl::edge<"alloc_tmp", "fill">);

extern cudag::dsl::exec_of<with_tmp> exec;
