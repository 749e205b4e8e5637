#!/usr/bin/env python3
"""Mutation check: seeds known faults into the engine, one at a time, and
requires the test suite to fail for every one. A fault the suite does not
catch is a hole in the tests (docs/testing.md keeps the table).

usage: mutate.py [--build DIR] [--suite cpu|gpu] [--only ID,ID] [--list]
                 [--markdown FILE] [--tests NAME,NAME [--build-tests-only]]

Each fault replaces one exact snippet of one source file (it must occur
exactly once), rebuilds, runs the suite (the tests named in `tests`, or the
whole suite), restores the file and records which tests failed. The build
folder is configured on first use (device code off for the cpu suite).
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# id, what the fault does, file, original, mutated, where it is caught
FAULTS = [
    ("drop-edge-spec", "spec lowering drops each node's last dependency",
     "src/lower/lower.cpp",
     "for (std::uint32_t k = plan.dep_begin[i]; k < plan.dep_begin[i + 1]; ++k)",
     "for (std::uint32_t k = plan.dep_begin[i]; k + 1 < plan.dep_begin[i + 1]; ++k)",
     "both"),
    ("drop-edge-dsl", "DSL lowering drops each node's last dependency",
     "dsl/cudag/dsl/graph.hpp",
     "native::deps_span(deps.data(), count), s.names[v]);\n    }\n  }\n}",
     "native::deps_span(deps.data(), count > 0 ? count - 1 : 0), s.names[v]);\n    }\n  }\n}",
     "both"),
    ("spurious-edge", "spec lowering makes every node depend on the first one created",
     "src/lower/lower.cpp",
     "        deps.push_back(created[plan.deps[k]]);",
     "        deps.push_back(created[plan.deps[k]]);\n"
     "      if (deps.empty() && created[plan.order[0]] != nullptr) deps.push_back(created[plan.order[0]]);",
     "cpu"),
    ("record-as-empty", "an event record node is lowered as an empty node",
     "src/native/native_nodes.cpp",
     "check(api().add_event_record_node(&n, g, deps.data(), deps.size(), e),",
     "(void)e; check(api().add_empty_node(&n, g, deps.data(), deps.size()),",
     "both"),
    ("wait-as-empty", "an event wait node is lowered as an empty node",
     "src/native/native_nodes.cpp",
     "check(api().add_event_wait_node(&n, g, deps.data(), deps.size(), e), \"cudaGraphAddEventWaitNode\",",
     "(void)e; check(api().add_empty_node(&n, g, deps.data(), deps.size()), \"cudaGraphAddEventWaitNode\",",
     "both"),
    ("skip-setter", "a rebind by exec setters skips the last changed node",
     "src/core/rebind.cpp",
     "    for (const std::uint32_t v : dirty) {\n      nodes.push(v, native::param_target::on_exec(exec));",
     "    for (const std::uint32_t v : dirty.first(dirty.size() - 1)) {\n      nodes.push(v, native::param_target::on_exec(exec));",
     "both"),
    ("wrong-rebind-path", "the automatic rebind picks the other path",
     "src/core/rebind.cpp",
     "? prefer_whole_graph_update(top_level, nodes.top_level_count())",
     "? !prefer_whole_graph_update(top_level, nodes.top_level_count())",
     "both"),
    ("stale-template", "a whole-graph update forgets nodes changed earlier on the exec",
     "src/core/rebind.cpp",
     "      if (!captured(v)) state.template_stale[v] = true;",
     "      (void)v;",
     "both"),
    ("grid-floor", "a grid from a count rounds down instead of up",
     "include/cudag/native_nodes.hpp",
     "const std::uint64_t blocks = (count + per_block - 1) / per_block;",
     "const std::uint64_t blocks = count / per_block;",
     "both"),
    ("grid-zero", "a count of zero gives a grid of zero blocks",
     "include/cudag/native_nodes.hpp",
     "return blocks == 0 ? 1u : static_cast<unsigned>(blocks);",
     "return static_cast<unsigned>(blocks);",
     "both"),
    ("use-after-free-spec", "check() accepts a buffer used after its free node",
     "src/check/buffer_lifetime.cpp",
     "\n      check_before_free(buffer, it->second, users);\n  }",
     "\n      (void)it;\n  }",
     "cpu"),
    ("use-after-free-dsl", "the DSL accepts a buffer used after its free node",
     "dsl/cudag/dsl/shape.hpp",
     "const bool ordered_before = free_node == no_index || u == free_node || before_free[u];",
     "const bool ordered_before = true || before_free[u];",
     "cpu"),
    ("accept-cycle-spec", "check() accepts a cycle",
     "src/check/topological_order.cpp",
     "  if (!complete) throw_cycle();",
     "  (void)complete;",
     "cpu"),
    ("resolved-edges-unsorted", "builder::resolve() keeps edges in the order edge() added them, not by node",
     "src/lower/builder.cpp",
     "  for (const std::uint64_t e : edges_) deps[next[e >> 32]++] = static_cast<std::uint32_t>(e);",
     "  for (std::size_t e = 0; e < edges_.size(); ++e) deps[e] = static_cast<std::uint32_t>(edges_[e]);",
     "cpu"),
    ("resolved-view-unordered", "the check's view of a resolved graph takes the declaration order as topological",
     "src/check/graph_view.cpp",
     "    for (std::uint32_t s = first_slot_[v]; s < first_slot_[v + 1]; ++s) declared_in_order_ &= rows.target[s] < v;",
     "    ;",
     "cpu"),
    ("resolved-nested-rows-ignored", "the check resolves nested graphs by name although they have rows",
     "src/check/spec_tree.cpp",
     "      resolved && resolved->resolved(self)",
     "      resolved && self == 0 && resolved->resolved(self)",
     "cpu"),
    ("resolved-by-name-graphs-uncounted", "builder::resolve() counts a by-name nested graph as one graph, whatever it nests",
     "src/lower/builder.cpp",
     "      rows.add_by_name(child->graph ? detail::graphs_in_tree(*child->graph, 1) : 1);",
     "      rows.add_by_name(1);",
     "cpu"),
    ("resolved-order-unsorted", "topological_order() of a resolved graph skips Kahn's sort",
     "src/check/topological_order.cpp",
     "    for (std::uint32_t s = begin[v]; s < begin[v + 1]; ++s) declared_in_order &= deps[s] < v;",
     "    ;",
     "cpu"),
    ("typed-edge-unsynchronized-accepted", "check() accepts a programmatic edge into a kernel that does not synchronize",
     "src/check/node_rules.cpp",
     "      if (!std::get<kernel_node>(node_.params).synchronizes_grid_dependencies)",
     "      if (false && !std::get<kernel_node>(node_.params).synchronizes_grid_dependencies)",
     "cpu"),
    ("typed-edge-non-kernel-accepted", "check() accepts a programmatic edge from or into a node that is not a kernel",
     "src/check/node_rules.cpp",
     "      if (from.kind() != node_kind::kernel || node_.kind() != node_kind::kernel) {",
     "      if (false) {",
     "cpu"),
    ("typed-edge-data-dropped", "lowering sends a kernel's typed dependencies as full edges",
     "src/lower/lower.cpp",
     "    if (kinds.empty()) {\n      h = native::add_kernel(target, deps, st.kernel, st.path);",
     "    if (true) {\n      h = native::add_kernel(target, deps, st.kernel, st.path);",
     "both"),
    ("typed-edge-ports-swapped", "a programmatic edge leaves from the launch-completion port and back",
     "src/native/native_nodes.cpp",
     "  data.from_port = kind == edge_kind::programmatic ? cudaGraphKernelNodePortProgrammatic",
     "  data.from_port = kind != edge_kind::programmatic ? cudaGraphKernelNodePortProgrammatic",
     "both"),
    ("typed-edge-kinds-misaligned", "the builder keeps a node's kinds one place before their dependencies",
     "src/lower/builder.cpp",
     "    target.dependency_kinds.resize(listed, edge_kind::full);",
     "    target.dependency_kinds.resize(listed > 0 ? listed - 1 : 0, edge_kind::full);",
     "cpu"),
    ("edge-kind-update-blind", "exec::update pairs dependencies by name alone, whatever their kinds",
     "src/lower/exec_update.cpp",
     "  for (std::size_t k = 0; k < n.deps.size(); ++k) deps.emplace_back(n.deps[k], n.dependency_kind(k));",
     "  for (std::size_t k = 0; k < n.deps.size(); ++k) deps.emplace_back(n.deps[k], edge_kind::full);",
     "cpu"),
    ("edge-kind-cache-blind", "the exec cache's topology key leaves the edges' kinds out",
     "src/lower/exec_cache.cpp",
     "             (static_cast<std::size_t>(n.dependency_kind(k)) * 0x9E3779B97F4A7C15ull));",
     "             (static_cast<std::size_t>(0) * 0x9E3779B97F4A7C15ull));",
     "cpu"),
    ("rtc-waiters-unseen", "rtc reads no kernel's PTX as waiting for its grid dependencies",
     "src/extras/rtc.cpp",
     "      if (wait != std::string::npos && wait < next) result->grid_dependency_waiters.push_back(expression);",
     "      if (wait != std::string::npos && wait < entry) result->grid_dependency_waiters.push_back(expression);",
     "cpu"),
    ("accept-cycle-dsl", "the DSL accepts a cycle",
     "dsl/cudag/dsl/shape.hpp",
     "  if (tail < N) {",
     "  if (tail < N && false) {",
     "cpu"),
    ("accept-wrong-argument-dsl", "the DSL accepts any kernel argument type",
     "dsl/cudag/dsl/kernel_node.hpp",
     "    return (dsl_passes_as<P, A> && ...);",
     "    return true;",
     "cpu"),
    ("accept-wrong-argument-builder", "the builder accepts any kernel argument type",
     "include/cudag/arguments.hpp",
     "  constexpr bool passes[] = {passes_as<P, A>..., true};  // never empty",
     "  constexpr bool passes[] = {(true || passes_as<P, A>)..., true};  // never empty",
     "cpu"),
    ("swallow-host-exception", "a host node's exception is dropped",
     "include/cudag/native_nodes.hpp",
     "      call->failures->record(call->node, std::current_exception());",
     "      (void)call;",
     "gpu"),
    ("memset-pitch", "a one-row memset gets pitch 0",
     "src/native/native_nodes.cpp",
     "p.pitch = height > 1 ? pitch_bytes : width * element_size;",
     "p.pitch = height > 1 ? pitch_bytes : 0;",
     "cpu"),
    ("clear-home-slot", "taking a refused node out of the builder's name index empties its name's home slot, whoever holds it",
     "src/lower/builder.cpp",
     "  while (index_of(name_slots_[i]) != last) i = (i + 1) & mask;\n",
     "",
     "cpu"),
    ("hand-out-view-past-end", "the builder's exec hands out a view past the end of its buffer",
     "src/lower/exec.cpp",
     "  if (offset > bytes / element_bytes) detail::refuse_view_past_end(name, offset, element_bytes, bytes);\n",
     "",
     "cpu"),
    ("dsl-view-past-end", "the DSL's exec hands out a view past the end of its buffer",
     "dsl/cudag/dsl/exec.hpp",
     "      if (view.offset > bytes / sizeof(element))\n",
     "      if (false)\n",
     "cpu"),
    ("unchecked-direct-view", "a DSL view made directly, not by +, may overflow its byte offset",
     "dsl/cudag/dsl/declarations.hpp",
     "    if (elements > most) buffer_view_offset_overflows<Name, T>(0, elements);\n",
     "",
     "cpu"),
    ("unbounded-operand-spec", "check() accepts an operand past the end of its buffer",
     "src/check/buffer_lifetime.cpp",
     "    for (const site& reader : events_.readers) check_bounds(reader);\n",
     "",
     "cpu"),
    ("memset-extent-one-row", "a memset's extent counts its first row only",
     "include/cudag/buffer_bounds.hpp",
     "  if (height == 1) return row;\n",
     "  if (height >= 1) return row;\n",
     "cpu"),
    ("unbounded-operand-dsl", "the DSL accepts an operand past the end of its buffer",
     "dsl/cudag/dsl/graph.hpp",
     "      detail::check_buffer_views(items...);\n",
     "      ;\n",
     "cpu"),
    ("unbounded-nested-view-dsl", "the DSL's walk skips the graph of a child node",
     "dsl/cudag/dsl/graph_nodes.hpp",
     "    f(graph, std::string_view(\"/\"));\n",
     "    (void)f;\n",
     "cpu"),
    ("dsl-alloc-size-wraps", "the DSL lets an allocation's size wrap",
     "dsl/cudag/dsl/memory_nodes.hpp",
     "  if (cudag::detail::bytes_overflow(count, sizeof(T)))  // the builder's check too\n    allocation_size_overflows<Name, B::name, T>(count);\n",
     "",
     "cpu"),
    ("batch-lost-grid-y", "a kernel node sent through the driver loses its grid's y",
     "src/native/native_nodes.cpp",
     "  d.gridDimY = p.gridDim.y;\n",
     "  d.gridDimY = 1;\n",
     "gpu"),
    ("batch-lost-shared", "a kernel node sent through the driver loses its dynamic shared memory",
     "src/native/native_nodes.cpp",
     "  d.sharedMemBytes = p.sharedMemBytes;\n",
     "",
     "gpu"),
    ("batch-any-kernel-matches", "a batch answers any kernel with the first it remembers",
     "src/native/native_nodes.cpp",
     "      if (m.entries[i].kernel == kernel) {\n",
     "      if (true) {\n",
     "gpu"),
    ("batch-never-resolves", "a batch never resolves a kernel (every call the runtime's)",
     "src/native/native_nodes.cpp",
     "  return resolve(*found);\n",
     "  return nullptr;\n",
     "gpu"),
    ("batch-clears-errors", "resolving a kernel clears the caller's pending error",
     "src/native/native_nodes.cpp",
     "  entry.asked_again = true;\n",
     "  entry.asked_again = true;\n  (void)cudaGetLastError();\n",
     "gpu"),
    ("batch-handle-unresolved", "a cudaKernel_t is never resolved by the driver",
     "src/native/native_nodes.cpp",
     "      entry.function = function;\n  }\n",
     "      entry.function = nullptr;\n  }\n",
     "gpu"),
    ("batch-open-in-user-code", "a captured node's recording runs inside the batch",
     "include/cudag/native_nodes.hpp",
     "  const batch_pause user_code;  // record() is the caller's code\n",
     "",
     "gpu"),
    ("rebind-forgets-kernels", "each rebind pass starts with an empty memory of kernels",
     "src/core/rebind.cpp",
     "  const native::same_device_batch batch(core.kernel_functions());\n",
     "  const native::same_device_batch batch;\n",
     "gpu"),
    ("kernel-run-overtaken", "a node that follows a run of prepared kernel nodes is added before them",
     "src/lower/lower.cpp",
     "      add_prepared();\n      gather_dependencies(i);\n",
     "      gather_dependencies(i);\n",
     "cpu"),
    ("long-list-repeats", "the builder never finds a repeated edge into a node of 16 or more dependencies",
     "src/lower/builder.cpp",
     "    if (long_list_edges_[i] == key) return true;\n",
     "    if (long_list_edges_[i] == key) return false;\n",
     "cpu"),
    ("small-vector-growth-leaks", "a small_vector moving to a larger block leaves its old elements undestroyed",
     "include/cudag/small_vector.hpp",
     "    std::uninitialized_move(data_, data_ + size_, fresh);\n    std::destroy(data_, data_ + size_);\n",
     "    std::uninitialized_move(data_, data_ + size_, fresh);\n",
     "cpu"),
    ("lazy-dependents-empty", "a graph declared in dependency order never builds its dependents' view",
     "src/check/graph_view.cpp",
     "    dependents_ = adopt_csr<dependent_graph>(count, reverse_csr(count, first_slot_.data(), targets.data()));\n",
     "",
     "cpu"),
    ("reverse-bucket-drops-edge", "reversing the edges of a graph past 2^16 nodes drops each bucket's last edge",
     "src/check/csr.hpp",
     "      for (std::uint32_t k = out.begin[first]; k < out.begin[last]; ++k)\n",
     "      for (std::uint32_t k = out.begin[first]; k + 1 < out.begin[last]; ++k)\n",
     "cpu"),
    ("kahn-many-readied-early", "Kahn's sort readies a node of 255 or more dependencies one dependency early",
     "src/check/kahn.hpp",
     "      waiting_on_many[v] = degree;\n",
     "      waiting_on_many[v] = degree - 1;\n",
     "cpu"),
    ("reverse-wide-staging-truncates", "reversing the edges of a graph past 2^21 nodes keeps 21 bits of each source",
     "src/check/csr.hpp",
     "[](std::uint32_t low, std::uint32_t v) { return (static_cast<std::uint64_t>(low) << 32) | v; }",
     "[](std::uint32_t low, std::uint32_t v) { return (static_cast<std::uint64_t>(low) << 32) | (v & 0x1FFFFF); }",
     "cpu"),
    ("many-params-short-list", "the checks look a node's parameters up in the first 9 visible only",
     "src/check/node_rules.cpp",
     "      if (scope.size() > scope_scan_limit) return {};\n",
     "      if (scope.size() > scope_scan_limit) return scope;\n",
     "cpu"),
    ("many-params-wrong-slot", "past 8 parameters, lowering takes the parameter declared before the one named",
     "src/lower/exec_state.hpp",
     "  return it == index.end() ? nullptr : &params[it->second];\n",
     "  return it == index.end() ? nullptr : &params[it->second > 1 ? it->second - 1 : it->second];\n",
     "cpu"),
    ("value-copy-half", "lowering copies 4 of an 8-byte value's bytes",
     "src/lower/lower.cpp",
     "      if (size == 8) std::memcpy(to, data, 8);\n",
     "      if (size == 8) std::memcpy(to, data, 4);\n",
     "cpu"),
    ("keep-refused-rebind", "a rebind CUDA refuses half way keeps its new values",
     "src/core/rebind.cpp",
     "    undo_refused_rebind(core, nodes, dirty, state, retired_before, exec_updated);\n",
     "",
     "cpu"),
    ("free-running-callable", "a refused rebind lets the host callable the exec runs be freed",
     "src/core/rebind.cpp",
     "    for (auto& object : core.retired()->take_from(retired_before)) core.keep_alive(std::move(object));\n",
     "",
     "cpu"),
    ("keep-staged-values", "a rebind or reshape refused by one of its values keeps the others",
     "src/lower/exec.cpp",
     "  } catch (...) {\n    undo_staged(st);\n    throw;\n",
     "  } catch (...) {\n    throw;\n",
     "cpu"),
    ("keep-refused-update", "an update CUDA refuses keeps the changed spec as the exec's record",
     "src/lower/exec_update.cpp",
     "    st.spec = std::move(old_spec);\n",
     "    throw;\n    st.spec = std::move(old_spec);\n",
     "cpu"),
    ("forget-update-values", "an update CUDA refuses keeps the nodes' new values",
     "src/lower/exec_update.cpp",
     "  st.update_in_flight = &before;\n",
     "",
     "cpu"),
    ("drop-priority", "an update drops a kernel's changed priority",
     "src/lower/exec_update.cpp",
     "a->priority != to)",
     "false && a->priority != to)",
     "cpu"),
    ("judge-each-value", "a reshape judges the launch after each of its values, not the shape asked for",
     "src/lower/exec.cpp",
     "  std::memcpy(p.bytes.data(), bytes, size);\n  write_readers(st, p);\n}",
     "  std::memcpy(p.bytes.data(), bytes, size);\n  write_readers(st, p);\n  settle_launches(st);\n}",
     "cpu"),

    # ---- 2026-11-29: faults for the field matrix (tests/matrix). Each names
    # the dimension of the matrix it stands for: field (one field of one node
    # kind), path (one way a change reaches the exec), placement (where the
    # node lives: child graph, conditional body, two levels deep) or front end
    # (the DSL's exec).
    ("update-ignores-memset-element-size",
     "field: an update misses a change of a memset's element size (the exec keeps the old one)",
     "src/lower/exec_update.cpp",
     "p.changed |= a.element_size != b.element_size || a.width != b.width ||",
     "p.changed |= a.width != b.width ||",
     "cpu"),
    ("update-ignores-memcpy-kind",
     "field: an update misses a change of a memcpy's kind",
     "src/lower/exec_update.cpp",
     "p.changed |= a.bytes != b.bytes || a.kind != b.kind;",
     "p.changed |= a.bytes != b.bytes;",
     "cpu"),
    ("update-ignores-grid-z",
     "field: an update compares launches by hand and leaves out grid.z",
     "src/lower/exec_update.cpp",
     "p.changed |= p.kernel.func != n.kernel.func || !native::same_launch(p.kernel, n.kernel);",
     "p.changed |= p.kernel.func != n.kernel.func || p.kernel.gridDim.x != n.kernel.gridDim.x ||\n"
     "                         p.kernel.gridDim.y != n.kernel.gridDim.y ||\n"
     "                         !native::same_dims(p.kernel.blockDim, n.kernel.blockDim) ||\n"
     "                         p.kernel.sharedMemBytes != n.kernel.sharedMemBytes;",
     "cpu"),
    ("update-ignores-last-value",
     "field: an update never compares a node's last value (a kernel's last argument, a memset's fill, an event)",
     "src/lower/exec_update.cpp",
     "      p.changed |= !same_bytes(n.slots[k], out);",
     "      p.changed |= k + 1 < n.slot_count && !same_bytes(n.slots[k], out);",
     "cpu"),
    ("update-ignores-host-callable",
     "field: an update misses a host node's new callable (one field of one kind, as the audit found)",
     "src/lower/exec_update.cpp",
     "            p.changed |= a.function != b.function;",
     "            (void)b;",
     "cpu"),
    ("shape-key-drops-shared-bytes",
     "field: the exec cache's shape key leaves out a kernel's shared bytes (two shapes share one exec)",
     "src/lower/exec_cache.cpp",
     "          h.u64(p.shared_bytes);\n",
     "",
     "cpu"),
    ("topology-key-drops-alloc-size",
     "field: the exec cache's topology key leaves out an allocation's size (an update is tried and refused)",
     "src/lower/exec_cache.cpp",
     "    h.u64(a->bytes);\n",
     "",
     "cpu"),
    ("topology-key-drops-condition-default",
     "field: the exec cache's topology key leaves out a condition's default value",
     "src/lower/exec_cache.cpp",
     "    h.u64(c.default_value);\n",
     "",
     "cpu"),
    ("check-refuses-2-byte-memset",
     "field: check() refuses a memset of 2-byte elements, which CUDA takes",
     "src/check/node_rules.cpp",
     "if (m.element_size != 1 && m.element_size != 2 && m.element_size != 4) {",
     "if (m.element_size != 1 && m.element_size != 4) {",
     "cpu"),
    ("setter-memset-width-for-height",
     "path: the exec setter of a memset node sends its width as its height",
     "src/lower/exec.cpp",
     "    case node_kind::memset:\n"
     "      native::set_memset(to, n.handle,\n"
     "                         memset_params_of(n, std::get<memset_node>(n.spec_node->params)), path);\n"
     "      return;\n",
     "    case node_kind::memset: {\n"
     "      const memset_node& m = std::get<memset_node>(n.spec_node->params);\n"
     "      native::set_memset(to, n.handle,\n"
     "                         native::memset_params(pointer_at(n, 0), memset_params_of(n, m).value,\n"
     "                                               m.element_size, m.width, m.width, m.pitch_bytes),\n"
     "                         path);\n"
     "      return;\n"
     "    }\n",
     "cpu"),
    ("setter-host-sends-old-call",
     "path: the host node's setter sends the call it already has, where it has one (the old callable and arguments)",
     "src/lower/exec.cpp",
     "      native::set_host(to, n.handle, fresh->params(), path);",
     "      native::set_host(to, n.handle, n.host ? n.host->params() : fresh->params(), path);",
     "cpu"),
    ("rebind-drops-shared-bytes",
     "path: a rebind or reshape computes a launch from its shape rules but keeps the old shared bytes",
     "src/lower/exec.cpp",
     "    n.kernel.sharedMemBytes = launch.sharedMemBytes;\n",
     "",
     "cpu"),
    ("instance-stages-top-level-only",
     "path: instance() sends the new values of the top-level nodes only to the shared template",
     "src/lower/exec.cpp",
     "    if (n.kind != node_kind::captured)\n      detail::push_node_params(n, nullptr,",
     "    if (n.kind != node_kind::captured && !n.nested)\n      detail::push_node_params(n, nullptr,",
     "cpu"),
    ("eager-drops-block-y",
     "path: an eager run launches each kernel with a block of y = 1",
     "src/native/native_nodes.cpp",
     "  check(api().launch_kernel(p.func, p.gridDim, p.blockDim, p.kernelParams, p.sharedMemBytes, stream),",
     "  check(api().launch_kernel(p.func, p.gridDim, dim3(p.blockDim.x, 1, p.blockDim.z), p.kernelParams,\n"
     "                            p.sharedMemBytes, stream),",
     "cpu"),
    ("diff-misses-memset-width",
     "path: diff does not compare a memset's width",
     "src/core/diff.cpp",
     "    compare_number(path, \"width\", b.width, a.width);\n",
     "",
     "cpu"),
    ("diff-kernel-by-name",
     "path: diff compares kernels by name only (another function of the same name passes)",
     "src/core/diff.cpp",
     "if (b.function != a.function || b.function_name != a.function_name) {",
     "if (b.function_name != a.function_name) {",
     "cpu"),
    ("reshape-skips-argument-readers",
     "path: a reshape sends only the kernels whose launch follows a parameter (readers of it as an argument keep the old value)",
     "src/lower/exec.cpp",
     "  std::size_t top_level = st.dirty_scratch.size();\n  if (st.any_nested) {",
     "  for (const std::uint32_t v : st.dirty_scratch) st.nodes[v].dirty = false;\n"
     "  std::erase_if(st.dirty_scratch, [&](std::uint32_t v) { return st.nodes[v].launch_group == 0; });\n"
     "  std::size_t top_level = st.dirty_scratch.size();\n  if (st.any_nested) {",
     "cpu"),
    ("cache-exact-hit-no-rebind",
     "path: the exec cache's exact hit returns the exec as it is, without rebinding its other values",
     "src/lower/exec_cache.cpp",
     "      e.executable->rebind(bindings);\n",
     "",
     "cpu"),
    ("update-drops-condition-check",
     "path: exec::update no longer refuses a changed condition default (require_same_conditions removed)",
     "src/lower/exec_update.cpp",
     "  require_same_conditions(st, next);\n",
     "",
     "cpu"),
    ("shared-template-skips-nested",
     "path: a whole-graph update through a shared template (after instance()) refreshes the top-level nodes only",
     "src/core/rebind.cpp",
     "    if (!std::binary_search(dirty.begin(), dirty.end(), v))\n",
     "    if (!std::binary_search(dirty.begin(), dirty.end(), v) && !nodes.needs_whole_update(v))\n",
     "cpu"),
    ("child-nodes-top-level",
     "placement: lowering marks a child graph's nodes top-level (exec setters are sent to them)",
     "src/lower/lower.cpp",
     "lower_graph(*p.graph, child.get(), &s, nested_prefix(path, n), true);",
     "lower_graph(*p.graph, child.get(), &s, nested_prefix(path, n), false);",
     "cpu"),
    ("update-pairs-bodies-off-by-one",
     "placement: an update pairs body b of an IF/ELSE or SWITCH node with body b + 1 of the changed spec",
     "src/lower/exec_update.cpp",
     "index_by_path(c->bodies[b], nested_prefix(path, n, b), out);",
     "index_by_path(c->bodies[b], nested_prefix(path, n, (b + 1) % c->bodies.size()), out);",
     "cpu"),
    ("update-child-prefix-by-name",
     "placement: an update names a child graph's nodes by the child node's name, not its path (a child in a body is lost)",
     "src/lower/exec_update.cpp",
     "index_by_path(*c->graph, nested_prefix(path, n), out);",
     "index_by_path(*c->graph, nested_prefix(n.name, n), out);",
     "cpu"),
    ("shape-key-skips-bodies",
     "placement: the shape key does not look inside conditional bodies for launches that follow a parameter",
     "src/lower/exec_cache.cpp",
     "      for (const graph_spec& body : k->bodies)\n        if (launch_follows(body, name)) return true;\n",
     "",
     "cpu"),
    ("capture-deps-for-nested-roots",
     "placement: add_to_capture makes the roots of nested graphs follow the capture's dependencies too",
     "src/lower/lower.cpp",
     "      if (top_level && deps.empty()) deps.assign(root_dependencies_.begin(), root_dependencies_.end());",
     "      if (deps.empty()) deps.assign(root_dependencies_.begin(), root_dependencies_.end());",
     "cpu"),
    ("plan-counts-top-level-values",
     "placement: check_and_plan counts the value slots of the top-level graph only",
     "src/check/check.cpp",
     "    plans.value_slots += at.value_count;\n",
     "    if (f == 0) plans.value_slots += at.value_count;\n",
     "cpu"),
    ("dsl-conditional-by-setter",
     "front end: the DSL exec sends the rebind of a parameter read only inside a conditional body by exec setters",
     "dsl/cudag/dsl/exec.hpp",
     "      return k == node_kind::child || k == node_kind::conditional;",
     "      return k == node_kind::child;",
     "cpu"),
    ("dsl-memcpy-stale-operands",
     "front end: the DSL memcpy node's rebind sends the operands it was lowered with",
     "dsl/cudag/dsl/memory_nodes.hpp",
     "    fill(s, st.values, slots);\n    native::set_memcpy(to, node, s.params, name);",
     "    native::set_memcpy(to, node, s.params, name);",
     "cpu"),
    ("dsl-host-sends-old-call",
     "front end: the DSL host node's rebind sends the call it already has",
     "dsl/cudag/dsl/host_nodes.hpp",
     "    native::set_host(to, node, fresh->params(), name);",
     "    native::set_host(to, node, s.call->params(), name);",
     "cpu"),
    ("dsl-kernel-keeps-launch",
     "front end: the DSL kernel node's rebind refreshes its arguments but not its launch",
     "dsl/cudag/dsl/kernel_node.hpp",
     "    fill(s, st.values, slots, name);\n    native::set_kernel(to, node, s.params, name);",
     "    fill_at(s, st.values, slots, std::index_sequence_for<P...>{});\n    native::set_kernel(to, node, s.params, name);",
     "cpu"),
    # The opt-in Hana view (cudag/dsl/hana.hpp) and the DSL's freedom from
    # Hana: caught at compile time by dsl_hana_view and dsl_no_hana (and
    # their nvcc builds in a build with device code).
    ("hana-view-drops-node", "the Hana view leaves a graph's last node out",
     "dsl/cudag/dsl/hana.hpp",
     "    std::make_index_sequence<detail::graph_of<G>::node_count>{});\n\n/// The parameters",
     "    std::make_index_sequence<detail::graph_of<G>::node_count - 1>{});\n\n/// The parameters",
     "cpu"),
    ("hana-view-param-type", "the Hana view gives a parameter's type const-qualified",
     "dsl/cudag/dsl/hana.hpp",
     "boost::hana::type<T>>{};",
     "boost::hana::type<const T>>{};",
     "cpu"),
    ("hana-view-buffer-type", "the Hana view gives every buffer's element type as float",
     "dsl/cudag/dsl/hana.hpp",
     "boost::hana::type<alloc_element_t<body>>,",
     "boost::hana::type<float>,",
     "cpu"),
    ("hana-name-reversed", "a Hana string made a DSL name is written backwards",
     "dsl/cudag/dsl/hana.hpp",
     "  ((out.chars[i++] = C), ...);",
     "  ((out.chars[sizeof...(C) - 1 - i++] = C), ...);",
     "cpu"),
    ("dsl-reads-hana", "a header of the DSL includes a Boost.Hana header",
     "dsl/cudag/dsl/fixed_string.hpp",
     "#include <string_view>\n",
     "#include <string_view>\n#include <boost/hana/string.hpp>\n",
     "cpu"),
    ("attribute-carveout-unchecked", "the launch-attribute rules accept a carveout over 100 percent",
     "include/cudag/launch_attributes.hpp",
     "  if (a.shared_carveout < -1 || a.shared_carveout > 100) add(fault::carveout_out_of_range);",
     "  (void)fault::carveout_out_of_range;",
     "cpu"),
    ("attribute-window-not-sent", "lowering never sends a kernel's access-policy window",
     "src/native/native_nodes.cpp",
     "  if (const access_policy_window& w = a.access_policy; w.bytes != 0) {",
     "  if (const access_policy_window& w = a.access_policy; w.bytes == 1) {",
     "both"),
    ("attribute-window-update-blind", "exec::update takes a changed access-policy window as unchanged",
     "include/cudag/spec.hpp",
     "         a.shared_carveout == b.shared_carveout && a.access_policy == b.access_policy;",
     "         a.shared_carveout == b.shared_carveout;",
     "cpu"),
    ("attribute-window-cache-blind", "the exec cache's topology key leaves the window's hit ratio out",
     "src/lower/exec_cache.cpp",
     "    h.u64((std::uint64_t{ratio_bits} << 32) | (std::uint64_t(w.hit) << 8) | std::uint64_t(w.miss));",
     "    h.u64((std::uint64_t{ratio_bits} * 0) | (std::uint64_t(w.hit) << 8) | std::uint64_t(w.miss));",
     "cpu"),
    ("attribute-window-not-imported", "import leaves a kernel's access-policy window out",
     "src/extras/import.cpp",
     "    if (get(cudaLaunchAttributeAccessPolicyWindow) && v.accessPolicyWindow.num_bytes != 0) {",
     "    if (get(cudaLaunchAttributeAccessPolicyWindow) && v.accessPolicyWindow.num_bytes == 0) {",
     "cpu"),
    ("cooperative-one-too-many", "a cooperative grid one block larger than can be resident is accepted",
     "src/native/native_nodes.cpp",
     "  if (blocks <= resident) return;",
     "  if (blocks <= resident + 1) return;",
     "both"),
    ("cooperative-rebind-unjudged", "a rebind of a cooperative grid that follows a parameter is not judged",
     "src/lower/exec_state.hpp",
     "  if (p.cooperative && (p.grid_from || !p.shape_rules.empty()))",
     "  if (p.cooperative && false)",
     "cpu"),
    ("dsl-attributes-unchecked", "the DSL accepts any launch attributes where a node is declared",
     "dsl/cudag/dsl/kernel_node.hpp",
     "  const unsigned faults = launch_attribute_faults(grid, follows, a);\n  if (faults == 0) return;",
     "  const unsigned faults = launch_attribute_faults(grid, follows, a);\n  if (faults != 0) return;",
     "cpu"),
    ("dsl-attributes-not-sent", "the DSL lowers a kernel node without its launch attributes",
     "dsl/cudag/dsl/kernel_node.hpp",
     "      native::send_launch_attributes(h, function.priority, function.attributes, name);",
     "      native::send_launch_attributes(h, function.priority, cudag::launch_attributes{}, name);",
     "cpu"),
    ("retained-not-handed", "lower() does not hand what its graph points at to the CUDA graph",
     "src/native/native_nodes.cpp",
     "  (void)release_retained_objects();\n  if (objects.empty()) return;",
     "  (void)release_retained_objects();\n  if (true) return;",
     "both"),
    ("retained-released-on-cuda-thread", "a user object's destructor releases the objects on CUDA's thread",
     "src/native/native_nodes.cpp",
     "  const std::lock_guard lock(q.mutex);\n  q.pending.push_back(static_cast<std::vector<std::shared_ptr<const void>>*>(objects));",
     "  delete static_cast<std::vector<std::shared_ptr<const void>>*>(objects);",
     "cpu"),
    ("device-launch-flag-dropped", "an exec for device launch is instantiated without CUDA's flag",
     "src/core/exec_core.cpp",
     "  if (options.device_launch) params.flags |= cudaGraphInstantiateFlagDeviceLaunch;",
     "  (void)cudaGraphInstantiateFlagDeviceLaunch;",
     "both"),
    ("device-launch-not-reuploaded", "a change sent to an exec for device launch is not uploaded again",
     "src/core/rebind.cpp",
     "    core.upload_after_change();  // a device launch runs what was uploaded",
     "    (void)core;",
     "both"),
    ("device-launch-empty-accepted", "check_device_launchable accepts an empty node",
     "include/cudag/spec.hpp",
     "         kind == node_kind::child || kind == node_kind::captured;\n}",
     "         kind == node_kind::child || kind == node_kind::captured || kind == node_kind::empty;\n}",
     "cpu"),
    ("dsl-priority-dropped", "the DSL lowers a kernel node without its priority",
     "dsl/cudag/dsl/kernel_node.hpp",
     "      native::send_launch_attributes(h, function.priority, function.attributes, name);",
     "      native::send_launch_attributes(h, 0, function.attributes, name);",
     "cpu"),
    ("race-last-write-skipped", "the race check does not order an access after the last write",
     "src/check/races.cpp",
     "      if (last_write && accesses_conflict(mode_of(*last_write), mode)) require(*last_write, x);",
     "      (void)last_write;",
     "cpu"),
    ("race-readers-before-write-skipped", "the race check does not order a write after the reads since the last one",
     "src/check/races.cpp",
     "      after_conflicting(reads_since_, access_mode::read, x);",
     "      if (mode != access_mode::read_write) after_conflicting(reads_since_, access_mode::read, x);",
     "cpu"),
    ("race-const-ignored", "a kernel's const T* parameter counts as written",
     "src/check/races.cpp",
     "by_type && v.type.points_to_const ? access_mode::read : access_mode::read_write;",
     "access_mode::read_write;",
     "cpu"),
    ("race-extents-ignored", "accesses to disjoint bytes of one memory count as overlapping",
     "include/cudag/memory_access.hpp",
     "  if (a_extent == 0 || b_extent == 0) return false;",
     "  if (a_extent == 0 || b_extent == 0 || true) return a_extent != 0 && b_extent != 0;",
     "cpu"),
    ("race-concurrent-conflicts", "two declared concurrent updates count as a race",
     "include/cudag/memory_access.hpp",
     "  return a != b;  // read against concurrent",
     "  return a != b || a == access_mode::concurrent;",
     "cpu"),
    ("race-nested-not-lifted", "a nested node's access is not counted in the enclosing graphs",
     "src/check/races.cpp",
     "      rep = tree_.at(at).enclosing_node;\n      at = tree_.at(at).parent;",
     "      rep = tree_.at(at).enclosing_node;\n      at = no_frame;",
     "cpu"),
    ("race-search-stops-early", "the reachability search prunes nodes it must visit",
     "src/check/graph_view.cpp",
     "      if (marks_[u] == mark_stamp_ || rank_[u] <= min_rank) continue;",
     "      if (marks_[u] == mark_stamp_ || rank_[u] <= min_rank + 1) continue;",
     "cpu"),
    ("race-detail-dropped", "an access's frame, origin or view is not kept beside it",
     "src/check/races.cpp",
     "    details_.push_back({frame, origin, view});\n    return tail | static_cast<std::uint32_t>(details_.size()) << 2;",
     "    details_.push_back({frame, origin, view});\n    return tail;",
     "cpu"),
    ("race-bindings-ignored", "pointer parameters bound to one address stay two memories",
     "src/check/races.cpp",
     "    if (auto b = bound_.find(name); b != bound_.end()) return b->second;",
     "    (void)bound_;",
     "cpu"),
    ("race-alias-rebind-unchecked", "a rebind that aliases two pointer parameters is not judged again",
     "src/lower/exec.cpp",
     "    refuse_racing_alias(st);\n",
     "",
     "cpu"),
]


def run(cmd, log, **kw):
    with open(log, "a", encoding="utf-8") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        return subprocess.run(cmd, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT, **kw).returncode


def failed_tests(build):
    path = os.path.join(ROOT, build, "meson-logs", "testlog.json")
    out = []
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            t = json.loads(line)
            if t.get("result") not in ("OK", "SKIP", "EXPECTEDFAIL"):
                out.append(t["name"])
    return out


def test_targets(build, names):
    """The ninja targets of the executables that tests `names` run."""
    out = subprocess.run(["meson", "introspect", "--tests", build], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    build_dir = os.path.join(ROOT, build)
    targets = []
    for t in json.loads(out):
        if t["name"] not in names or not t.get("cmd"):
            continue
        rel = os.path.relpath(t["cmd"][0], build_dir)
        if not rel.startswith(".."):
            targets.append(rel)
    missing = set(names) - {t["name"] for t in json.loads(out)}
    if missing:
        raise SystemExit("no such tests: " + ", ".join(sorted(missing)))
    return targets


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build-mutation")
    ap.add_argument("--suite", default="cpu", choices=["cpu", "gpu"])
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--markdown", default="")
    ap.add_argument("--jobs", default=str(os.cpu_count() or 2))
    ap.add_argument("--tests", default="",
                    help="comma-separated test names: run only these (a quick recheck of known catchers)")
    ap.add_argument("--build-tests-only", action="store_true",
                    help="with --tests: rebuild only what those tests run, not every target (a fault "
                         "that breaks the build of another target then goes unseen)")
    args = ap.parse_args()

    faults = [f for f in FAULTS if not args.only or f[0] in args.only.split(",")]
    faults = [f for f in faults if f[5] in ("both", args.suite)]
    if args.list:
        for f in faults:
            print(f"{f[0]:30} {f[5]:5} {f[1]}")
        return 0

    build = args.build
    log = os.path.join(ROOT, build + ".log")
    if not os.path.exists(os.path.join(ROOT, build, "build.ninja")):
        setup = ["meson", "setup", build, "-Dexamples=false", "-Dtools=false", "-Dbenchmarks=false"]
        if args.suite == "cpu":
            setup.append("-Ddevice_code=false")
        if run(setup, log) != 0:
            print("meson setup failed; see " + log)
            return 2
    if run(["ninja", "-C", build, "-j", args.jobs], log) != 0:
        print("the unmutated tree does not build; see " + log)
        return 2
    # The subproject consumer (suite 'slow') builds a second project: it
    # detects packaging faults, not these.
    test = ["meson", "test", "-C", build, "--suite", args.suite, "--no-suite", "slow",
            "--no-rebuild", "--num-processes", args.jobs]
    targets = []
    if args.tests:
        test += args.tests.split(",")
        if args.build_tests_only:
            targets = test_targets(build, args.tests.split(","))

    results = []
    for fid, what, path, original, mutated, _ in faults:
        full = os.path.join(ROOT, path)
        with open(full, encoding="utf-8") as f:
            text = f.read()
        if text.count(original) != 1:
            results.append((fid, what, "NOT APPLIED: snippet found %d times" % text.count(original), []))
            print(f"{fid}: snippet found {text.count(original)} times in {path}")
            continue
        start = time.time()
        try:
            with open(full, "w", encoding="utf-8") as f:
                f.write(text.replace(original, mutated))
            built = run(["ninja", "-C", build, "-j", args.jobs, "-k", "0"] + targets, log) == 0
            tested = built and run(test, log) == 0
            failed = failed_tests(build) if built else ["(the build failed)"]
        finally:
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
        caught = not built or not tested
        verdict = "caught" if caught else "MISSED"
        results.append((fid, what, verdict, failed))
        print(f"{fid:30} {verdict:7} {time.time() - start:6.0f} s  {', '.join(failed)[:160]}", flush=True)
    run(["ninja", "-C", build, "-j", args.jobs] + targets, log)  # leave the build matching the tree

    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(f"| fault | what it does | {args.suite} suite | failing tests |\n|---|---|---|---|\n")
            for fid, what, verdict, failed in results:
                f.write(f"| {fid} | {what} | {verdict} | {', '.join(failed)} |\n")
    missed = [r for r in results if r[2] != "caught"]
    print(f"{len(results) - len(missed)} of {len(results)} faults caught")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
