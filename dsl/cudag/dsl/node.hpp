#pragma once
// A named node: a fixed-string name and a body of one kind. Everything the
// graph algorithms need is in the node's constexpr `info`; the body's type
// (not the name) carries the lowering code, so nodes of the same kind and
// argument types share one instantiation whatever their names.
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "cudag/dsl/fixed_string.hpp"
#include "cudag/dsl/items.hpp"
#include "cudag/dsl/lowering.hpp"

namespace cudag::dsl {

/// Node kinds CUDA does not accept inside conditional bodies.
[[nodiscard]] constexpr bool forbidden_in_conditional_body(node_kind kind) noexcept {
  return kind == node_kind::host || kind == node_kind::event_record ||
         kind == node_kind::event_wait || kind == node_kind::mem_alloc ||
         kind == node_kind::mem_free;
}

[[nodiscard]] constexpr std::string_view kind_text(node_kind kind) noexcept {
  switch (kind) {
    case node_kind::kernel: return "kernel";
    case node_kind::memcpy: return "memcpy";
    case node_kind::memset: return "memset";
    case node_kind::host: return "host";
    case node_kind::child: return "child";
    case node_kind::captured: return "captured";
    case node_kind::empty: return "empty";
    case node_kind::event_record: return "event record";
    case node_kind::event_wait: return "event wait";
    case node_kind::mem_alloc: return "mem alloc";
    case node_kind::mem_free: return "mem free";
    case node_kind::conditional: return "conditional";
  }
  return "unknown";
}

/// Defaults a body may override: no nested graph, nothing allocated or freed.
struct leaf_body {
  static constexpr std::string_view allocates{};
  static constexpr std::string_view frees{};
  static constexpr std::string_view nested_forbidden_path{};
  static constexpr node_kind nested_forbidden_kind = node_kind::empty;
  static constexpr std::string_view owned_condition{};
};

template <class Body>
[[nodiscard]] consteval message_buffer forbidden_path_of(std::string_view name) {
  message_buffer path;
  if (forbidden_in_conditional_body(Body::kind))
    path << name;
  else if (!Body::nested_forbidden_path.empty())
    path << name << "/" << Body::nested_forbidden_path;
  return path;
}

template <fixed_string Name, class Body>
struct node_t {
  using body_type = Body;
  static constexpr auto name = Name;
  static constexpr message_buffer forbidden_path = forbidden_path_of<Body>(Name.view());
  static constexpr item_info info{
      true,
      Name.view(),
      Body::kind,
      {},
      std::span<const ref_info>(Body::refs),
      Body::allocates,
      Body::frees,
      forbidden_path.view(),
      forbidden_in_conditional_body(Body::kind) ? Body::kind : Body::nested_forbidden_kind,
      forbidden_path.size == 0,
      Body::owned_condition};

  Body body;
};

/// Storage of a non-node item (edges): nothing.
struct no_storage {};

template <class Item>
struct storage_of_item {
  using type = no_storage;
};
template <fixed_string Name, class Body>
struct storage_of_item<node_t<Name, Body>> {
  using type = typename Body::storage;
};

}  // namespace cudag::dsl
