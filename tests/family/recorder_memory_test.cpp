// The recorder's device memory model and the seam entries behind it:
// mem_get_info, device_graph_mem_trim, device_get_graph_mem_attribute,
// event_create and event_destroy, each recorded as one line; free memory
// consistent as execs are made, uploaded, destroyed and trimmed.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "cudag/handles.hpp"
#include "cudag/native_api.hpp"
#include "cudag/native_nodes.hpp"
#include "cudag/native_recorder.hpp"
#include "engine/recorder_support.hpp"

namespace {

using cudag::native::api;
using engine_test::lines;

std::size_t free_now() {
  std::size_t free = 0, total = 0;
  EXPECT_EQ(api().mem_get_info(&free, &total), cudaSuccess);
  return free;
}

std::uint64_t attribute(cudaGraphMemAttributeType a) {
  std::uint64_t v = 0;
  EXPECT_EQ(api().device_get_graph_mem_attribute(0, a, &v), cudaSuccess);
  return v;
}

TEST(RecorderMemory, EachNewEntryWritesOneLine) {
  cudag::native::recorder rec;
  rec.set_device_memory(1000000, 1000);
  std::size_t free = 0, total = 0;
  ASSERT_EQ(api().mem_get_info(&free, &total), cudaSuccess);
  ASSERT_EQ(api().device_graph_mem_trim(0), cudaSuccess);
  std::uint64_t v = 7;
  ASSERT_EQ(api().device_get_graph_mem_attribute(0, cudaGraphMemAttrUsedMemHigh, &v), cudaSuccess);
  cudaEvent_t e = nullptr;
  ASSERT_EQ(api().event_create(&e, cudaEventDisableTiming), cudaSuccess);
  ASSERT_EQ(api().event_destroy(e), cudaSuccess);
  EXPECT_EQ(lines(rec.calls()),
            "mem_get_info -> free=999000 total=1000000\n"
            "device_graph_mem_trim device=0 -> released=0\n"
            "device_get_graph_mem_attribute device=0 used_high -> 0\n"
            "event_create e1 flags=2\n"
            "event_destroy e1\n");
  EXPECT_EQ(free, 999000u);
  EXPECT_EQ(total, 1000000u);
  EXPECT_EQ(v, 0u);
  // Destroying it again is misuse; an injected failure is recorded.
  EXPECT_EQ(api().event_destroy(e), cudaErrorInvalidValue);
  EXPECT_EQ(rec.misuse().size(), 1u);
  rec.fail_next("mem_get_info", cudaErrorUnknown);
  EXPECT_EQ(api().mem_get_info(&free, &total), cudaErrorUnknown);
  EXPECT_EQ(rec.calls().back(), "mem_get_info -> cudaErrorUnknown");
  rec.fail_next("device_graph_mem_trim", cudaErrorInvalidDevice);
  EXPECT_EQ(api().device_graph_mem_trim(3), cudaErrorInvalidDevice);
}

TEST(RecorderMemory, FreeMemoryFollowsExecsUploadsDestroysAndTrims) {
  cudag::native::recorder rec;
  rec.set_device_memory(1 << 30);
  rec.set_exec_memory(4000, 100);
  rec.set_node_memory("add_empty_node", 10);
  const std::size_t total = 1 << 30;
  // g: alloc(1000) -> empty -> child{empty, empty} (cloned) -> free
  cudag::unique_graph g = cudag::make_graph();
  const cudag::native::allocation a = cudag::native::add_mem_alloc(g.get(), {}, 1000, 0, "a");
  const cudaGraphNode_t after_alloc[] = {a.node};
  const cudaGraphNode_t e = cudag::native::add_empty(g.get(), after_alloc, "e");
  cudag::unique_graph child = cudag::make_graph();
  (void)cudag::native::add_empty(child.get(), {}, "c1");
  (void)cudag::native::add_empty(child.get(), {}, "c2");
  const cudaGraphNode_t after_e[] = {e};
  const cudaGraphNode_t c =
      cudag::native::add_child(g.get(), after_e, child.get(), cudag::native::child_ownership::clone, "c");
  const cudaGraphNode_t after_c[] = {c};
  (void)cudag::native::add_mem_free(g.get(), after_c, a.pointer, "f");
  child.reset();  // the clone's nodes stay counted

  cudaGraphExec_t x = nullptr;
  cudaGraphInstantiateParams p{};
  ASSERT_EQ(api().instantiate(&x, g.get(), &p), cudaSuccess);
  // 6 nodes: alloc, free, child at 100; three empties at 10.
  EXPECT_EQ(rec.exec_nodes(x), 6u);
  EXPECT_EQ(rec.exec_memory(x), 4000u + 3 * 100u + 3 * 10u);
  EXPECT_EQ(free_now(), total - 4330u);
  EXPECT_EQ(attribute(cudaGraphMemAttrReservedMemCurrent), 0u);  // mapped at upload, not before
  ASSERT_EQ(api().upload(x, nullptr), cudaSuccess);
  EXPECT_EQ(attribute(cudaGraphMemAttrReservedMemCurrent), 1000u);
  EXPECT_EQ(attribute(cudaGraphMemAttrUsedMemCurrent), 1000u);
  EXPECT_EQ(free_now(), total - 4330u - 1000u);
  ASSERT_EQ(api().launch(x, nullptr), cudaSuccess);  // already mapped
  EXPECT_EQ(free_now(), total - 5330u);
  EXPECT_EQ(rec.device_memory_lowest_free(), total - 5330u);
  // A trim unmaps what no running graph uses; the next launch maps again.
  ASSERT_EQ(api().device_graph_mem_trim(0), cudaSuccess);
  EXPECT_EQ(rec.calls().back(), "device_graph_mem_trim device=0 -> released=1000");
  EXPECT_EQ(free_now(), total - 4330u);
  ASSERT_EQ(api().launch(x, nullptr), cudaSuccess);
  EXPECT_EQ(free_now(), total - 5330u);
  // Destroyed: the exec's bytes come back; its graph memory stays reserved
  // (unused) until a trim.
  ASSERT_EQ(api().exec_destroy(x), cudaSuccess);
  EXPECT_EQ(rec.exec_memory_in_use(), 0u);
  EXPECT_EQ(attribute(cudaGraphMemAttrUsedMemCurrent), 0u);
  EXPECT_EQ(attribute(cudaGraphMemAttrReservedMemCurrent), 1000u);
  EXPECT_EQ(attribute(cudaGraphMemAttrReservedMemHigh), 1000u);
  EXPECT_EQ(free_now(), total - 1000u);
  ASSERT_EQ(api().device_graph_mem_trim(0), cudaSuccess);
  EXPECT_EQ(free_now(), total);
  EXPECT_EQ(attribute(cudaGraphMemAttrUsedMemHigh), 1000u);
  EXPECT_TRUE(rec.misuse().empty()) << rec.misuse().front();
}

TEST(RecorderMemory, ADestroyedNodeAndAMovedChildAndBodiesCount) {
  cudag::native::recorder rec;
  rec.set_exec_memory(0, 1);
  cudag::unique_graph g = cudag::make_graph();
  const cudaGraphNode_t gone = cudag::native::add_empty(g.get(), {}, "gone");
  cudag::native::destroy_node(gone);
  cudag::unique_graph inner = cudag::make_graph();
  (void)cudag::native::add_empty(inner.get(), {}, "i1");
  (void)cudag::native::add_child(g.get(), {}, inner.get(), cudag::native::child_ownership::move, "moved");
  (void)inner.release();
  const cudaGraphConditionalHandle h = cudag::native::create_condition(g.get(), 0, true, "go");
  cudaGraph_t bodies[2] = {};
  (void)cudag::native::add_conditional(g.get(), {}, h, cudag::conditional_kind::if_else, 2, bodies, "if");
  (void)cudag::native::add_empty(bodies[0], {}, "b0");
  (void)cudag::native::add_empty(bodies[1], {}, "b1");
  cudaGraphExec_t x = nullptr;
  cudaGraphInstantiateParams p{};
  ASSERT_EQ(api().instantiate(&x, g.get(), &p), cudaSuccess);
  // moved child + i1, conditional + b0 + b1; not the destroyed node.
  EXPECT_EQ(rec.exec_nodes(x), 5u);
  EXPECT_EQ(rec.exec_memory(x), 5u);
  ASSERT_EQ(api().exec_destroy(x), cudaSuccess);
  EXPECT_EQ(rec.exec_memory(x), 0u);
}

}  // namespace
