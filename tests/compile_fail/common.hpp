#pragma once
// Shared by the compile-fail cases: a few kernels (host functions stand in,
// only their signatures matter) and parameters.
#include "cudag/dsl.hpp"

namespace cf {
inline void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }
inline void axpy(const float* x, float* y, float a, int n) { (void)x, (void)y, (void)a, (void)n; }
inline void set_flag(cudaGraphConditionalHandle h) { (void)h; }
}  // namespace cf

using namespace cudag::dsl;
inline constexpr auto x = param<"x", float*>;
inline constexpr auto y = param<"y", float*>;
inline constexpr auto n = param<"n", int>;

/// Uses a graph the ways a program does (its spec, instantiation, a
/// rebinding), so that a case whose mistake sits in the declaration also
/// checks that nothing after it adds a second error.
template <class G, class... B>
void use_graph(const G& g, const B&... bindings) {
  (void)to_spec(g);
  auto e = instantiate(g, bindings...);
  (void)e.rebind(bindings...);
}
