#pragma once
// User-defined ops: a new kind of work (a cuFFT plan execution, a cuRAND
// fill, a cuBLAS call cudag does not wrap) added as a node of a spec from
// the user's own code, without editing cudag.
//
// The customization point is one free function, found by argument-dependent
// lookup, so it lives in the op's own namespace next to the op:
//
//   namespace mylib {
//   struct saxpy { int n; };
//   cudag::node_ref cudag_add_op(cudag::builder& b, std::string name, const saxpy& op,
//                                const cudag::param_handle<float>& alpha,
//                                const cudag::param_handle<const float*>& x,
//                                const cudag::param_handle<float*>& y) {
//     return b.captured(std::move(name), "saxpy", record_saxpy{op.n}, alpha, x, y);
//   }
//   }  // namespace mylib
//
//   auto node = cudag::add_op(b, "update", mylib::saxpy{n}, alpha, x, y);
//
// The function turns the op into nodes of the builder's spec with the
// builder's own calls (kernel, captured, memcpy, child...) and returns the
// node that edges attach to. An op made of several nodes builds them in a
// nested builder and adds that as one child (b.child(name, inner.build())),
// so that it still has one entry and one exit for edges.
//
// Library calls go through builder::captured: they are recorded by stream
// capture when the spec is lowered, and again when an argument is rebound.
// The same recording callable serves the DSL's captured node.
#include <concepts>
#include <string>
#include <utility>

#include "cudag/builder.hpp"

namespace cudag {

/// An op with a cudag_add_op overload for these arguments.
template <class Op, class... A>
concept user_op = requires(builder& b, std::string name, const Op& op, A&&... args) {
  { cudag_add_op(b, std::move(name), op, std::forward<A>(args)...) } -> std::same_as<node_ref>;
};

/// Adds `op` to `b` as the node(s) its cudag_add_op makes; returns the node
/// edges attach to.
template <class Op, class... A>
node_ref add_op(builder& b, std::string name, const Op& op, A&&... args) {
  static_assert(user_op<Op, A...>,
                "cudag::add_op(b, name, op, args...) needs a function "
                "'node_ref cudag_add_op(cudag::builder&, std::string, const Op&, args...)' "
                "declared in the namespace of Op (it is found by argument-dependent lookup) "
                "and callable with these arguments");
  // Not called when refused: the call would be a second error.
  if constexpr (!user_op<Op, A...>)
    detail::refused_call();
  else
    return cudag_add_op(b, std::move(name), op, std::forward<A>(args)...);
}

}  // namespace cudag
