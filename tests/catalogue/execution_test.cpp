// Bad-input catalogue, execution: what CUDA refuses while lowering,
// instantiating, rebinding, updating and launching, and host-node failures.
// The recorder stands in for CUDA, so every refusal is injected where CUDA
// would give it; the message is cudag's.
#include <exception>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include "catalogue.hpp"
#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/exec.hpp"
#include "cudag/handles.hpp"
#include "cudag/import.hpp"
#include "cudag/native_nodes.hpp"

namespace {

using catalogue::dev_x;
using catalogue::dev_x2;
using catalogue::refusal;
using catalogue::scale;

/// Two kernels reading x, a host node after them.
cudag::graph_spec pipeline(cudag::host_function report = {}) {
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  auto first = b.kernel("first", CUDAG_KERNEL(scale), cudag::launch(1, 32), x, 1.0f, 32);
  auto second = b.kernel("second", CUDAG_KERNEL(scale), cudag::launch(1, 32), x, 2.0f, 32);
  auto host = b.host("report", [] {});
  b.chain(first, second, host);
  cudag::graph_spec spec = b.build();
  if (report) {
    std::get<cudag::host_node>(spec.nodes[2].params).function =
        std::make_shared<const cudag::host_function>(std::move(report));
  }
  return spec;
}

const cudag::binding pipeline_binds[] = {cudag::bind("x", dev_x)};

TEST(Catalogue, LoweringFailureNamesTheNodeAndTheCall) {
  cudag::native::recorder rec;
  cudag::builder inner("inner");
  inner.kernel("inner_k", CUDAG_KERNEL(scale), cudag::launch(1, 32), inner.param<float*>("x"),
               3.0f, 32);
  cudag::builder b("g");
  b.child("stage", inner.build());
  rec.fail_next("add_kernel_node", cudaErrorInvalidValue);
  auto e = refusal<cudag::error>([&] { (void)cudag::instantiate(b.build(), pipeline_binds); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "cudaGraphAddKernelNode failed for node 'stage/inner_k': cudaErrorInvalidValue "
            "(invalid argument)");
  EXPECT_EQ(e->node(), "stage/inner_k");
  EXPECT_EQ(e->call(), "cudaGraphAddKernelNode");
  EXPECT_EQ(e->code(), cudaErrorInvalidValue);
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, ZeroSizedGridIsRefusedNamingTheNode) {
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  auto n = b.param<int>("n");
  b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch(dim3(0, 1, 1), dim3(256, 1, 1)), x, 2.0f, n);
  b.kernel("over", CUDAG_KERNEL(scale), cudag::launch_over(n, 256), x, 2.0f, n);
  const cudag::graph_spec spec = b.build();
  auto e = refusal<cudag::check_error>([&] { cudag::check(spec); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "kernel node 'scale' has a grid of 0x1x1 blocks; every dimension must be at least 1");
  EXPECT_EQ(e->nodes(), catalogue::strings{"scale"});
  // A grid computed from a count of 0 is one block, not zero: accepted.
  cudag::builder ok("g");
  ok.kernel("over", CUDAG_KERNEL(scale), cudag::launch_over(ok.param<int>("n"), 256),
            ok.param<float*>("x"), 2.0f, 0);
  const cudag::binding binds[] = {cudag::bind("x", dev_x), cudag::bind("n", 0)};
  cudag::native::recorder rec;
  {
    auto exec = cudag::instantiate(ok.build(), binds);
    const auto adds = rec.calls_starting("add_kernel_node");
    ASSERT_EQ(adds.size(), 1u);
    EXPECT_NE(adds[0].find("grid=(1,1,1)"), std::string::npos) << adds[0];
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, ZeroSizedBlockIsRefusedNamingTheNode) {
  cudag::builder b("g");
  b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch(dim3(4, 1, 1), dim3(256, 0, 1)),
           b.param<float*>("x"), 2.0f, 32);
  auto e = refusal<cudag::check_error>([&] { cudag::check(b.build()); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "kernel node 'scale' has a block of 256x0x1 threads; every dimension must be at "
            "least 1");
  EXPECT_EQ(e->nodes(), catalogue::strings{"scale"});
}

TEST(Catalogue, InstantiateFailureNamesTheGraph) {
  cudag::native::recorder rec;
  rec.fail_next("instantiate", cudaErrorInvalidValue);
  auto e = refusal<cudag::error>([&] { (void)cudag::instantiate(pipeline(), pipeline_binds); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "cudaGraphInstantiateWithParams failed: cudaErrorInvalidValue (invalid argument) "
            "(graph 'g')");
  EXPECT_EQ(e->call(), "cudaGraphInstantiateWithParams");
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, RefusedUpdateNamesTheNodeAndWhy) {
  cudag::native::recorder rec;
  {
    auto exec = cudag::instantiate(pipeline(), pipeline_binds);
    exec.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
    rec.refuse_next_update(exec.node_handle("second"), cudaGraphExecUpdateErrorParametersChanged);
    auto e = refusal<cudag::error>([&] { exec.rebind("x", dev_x2); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()),
              "cudaGraphExecUpdate refused the update at node 'second': its parameters changed in "
              "a way CUDA cannot update (cudaErrorGraphExecUpdateFailure)");
    EXPECT_EQ(e->node(), "second");
    EXPECT_EQ(e->call(), "cudaGraphExecUpdate");
    EXPECT_EQ(e->code(), cudaErrorGraphExecUpdateFailure);
    EXPECT_NO_THROW(exec.launch(nullptr));  // the exec still runs
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, RefusedExecSetterNamesTheNode) {
  cudag::native::recorder rec;
  {
    auto exec = cudag::instantiate(pipeline(), pipeline_binds);
    exec.set_rebind_policy(cudag::rebind_policy::node_setters);
    rec.fail_next("exec_kernel_node_set_params", cudaErrorInvalidValue);
    auto e = refusal<cudag::error>([&] { exec.rebind("x", dev_x2); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()),
              "cudaGraphExecKernelNodeSetParams failed for node 'first': cudaErrorInvalidValue "
              "(invalid argument)");
    EXPECT_EQ(e->node(), "first");
    EXPECT_NO_THROW(exec.launch(nullptr));
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, HostNodeExceptionNamesTheNode) {
  cudag::native::recorder rec;
  {
    auto exec = cudag::instantiate(
        pipeline([](std::span<const void* const>) { throw std::runtime_error("disk full"); }),
        pipeline_binds);
    exec.launch(nullptr);  // the recorder runs the host node here
    auto e = refusal<cudag::error>([&] { exec.synchronize(nullptr); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()), "host node 'report' threw: disk full");
    EXPECT_EQ(e->node(), "report");
    EXPECT_NO_THROW(exec.synchronize(nullptr));  // reported once
  }
  {
    // Something that is not a std::exception.
    auto exec = cudag::instantiate(pipeline([](std::span<const void* const>) { throw 42; }),
                                   pipeline_binds);
    exec.launch(nullptr);
    auto e = refusal<cudag::error>([&] { exec.launch(nullptr); });  // launch() rethrows too
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()), "host node 'report' threw: unknown exception");
    EXPECT_EQ(e->node(), "report");
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, LaunchOnADestroyedStreamNamesTheCall) {
  cudag::native::recorder rec;
  {
    auto exec = cudag::instantiate(pipeline(), pipeline_binds);
    const auto destroyed = reinterpret_cast<cudaStream_t>(0x5d00000);
    // CUDA answers a launch on a stream that no longer exists with an invalid handle.
    rec.fail_next("launch", cudaErrorInvalidResourceHandle);
    auto e = refusal<cudag::error>([&] { exec.launch(destroyed); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()),
              "cudaGraphLaunch failed: cudaErrorInvalidResourceHandle (invalid resource handle) "
              "(graph 'g')");
    EXPECT_EQ(e->call(), "cudaGraphLaunch");
    EXPECT_EQ(exec.replay_count(), 0u);
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, ExecUsedAfterItWasMovedFromIsRefused) {
  cudag::native::recorder rec;
  {
    auto exec = cudag::instantiate(pipeline(), pipeline_binds);
    auto moved = std::move(exec);
    const std::string said =
        "exec: used after it was moved from (it holds no executable graph)";
    auto launched = refusal<cudag::error>([&] { exec.launch(nullptr); });
    ASSERT_TRUE(launched);
    EXPECT_EQ(std::string(launched->what()), said);
    auto rebound = refusal<cudag::error>([&] { exec.rebind("x", dev_x2); });
    ASSERT_TRUE(rebound);
    EXPECT_EQ(std::string(rebound->what()), said);
    EXPECT_EQ(exec.native_exec(), nullptr);
    EXPECT_EQ(exec.replay_count(), 0u);
    EXPECT_NO_THROW(moved.launch(nullptr));  // the exec it moved to runs
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, DisablingAHostNodeIsRefused) {
  cudag::native::recorder rec;
  {
    auto exec = cudag::instantiate(pipeline(), pipeline_binds);
    auto e = refusal<cudag::error>([&] { exec.set_enabled("report", false); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()),
              "node 'report' is a host node: only kernel, memset and memcpy nodes can be disabled");
    EXPECT_EQ(e->node(), "report");
    EXPECT_EQ(e->code(), cudaErrorNotSupported);
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, UnknownNodeOfAnExecIsNamed) {
  cudag::native::recorder rec;
  {
    auto exec = cudag::instantiate(pipeline(), pipeline_binds);
    auto e = refusal<cudag::error>([&] { exec.set_enabled("scael", false); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()), "graph 'g' has no top-level node 'scael'");
    EXPECT_EQ(e->node(), "scael");
    EXPECT_EQ(e->code(), cudaErrorInvalidValue);
    for (auto* call : {+[](cudag::exec& x) { (void)x.enabled("scael"); },
                       +[](cudag::exec& x) { (void)x.node_handle("scael"); }}) {
      auto same = refusal<cudag::error>([&] { call(exec); });
      ASSERT_TRUE(same);
      EXPECT_EQ(std::string(same->what()), "graph 'g' has no top-level node 'scael'");
    }
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, NestedCapturedNodeCannotBeRerecordedInPlace) {
  cudag::native::recorder rec;
  {
    cudag::builder inner("inner");
    inner.captured("library", "a library call", [](cudaStream_t, float* v) { (void)v; },
                   inner.param<float*>("x"));
    cudag::builder b("g");
    b.child("stage", inner.build());
    auto exec = cudag::instantiate(b.build(), pipeline_binds);
    auto e = refusal<cudag::error>([&] { exec.rebind("x", dev_x2); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()),
              "rebind: parameter 'x' is read by captured node 'stage/library' inside a child graph "
              "or conditional body, which cannot be re-recorded in place; use "
              "update_or_reinstantiate()");
    EXPECT_EQ(e->node(), "stage/library");
    EXPECT_EQ(e->code(), cudaErrorNotSupported);
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, CapturedRecordingFailureNamesTheNode) {
  cudag::native::recorder rec;
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  b.captured("library", "a library call",
             [](cudaStream_t, float* v) {
               (void)v;
               throw cudag::error("cublasSgemm failed: CUBLAS_STATUS_NOT_INITIALIZED");
             },
             x);
  auto e = refusal<cudag::error>([&] { (void)cudag::instantiate(b.build(), pipeline_binds); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "captured node 'library': cublasSgemm failed: CUBLAS_STATUS_NOT_INITIALIZED");
  EXPECT_EQ(e->node(), "library");
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, ImportedOpaqueNodeOfAGraphThatCannotBeClonedIsRefusedWhenLowered) {
  cudag::native::recorder rec;
  {
    // A 2-D copy beside an allocation and its free: import keeps the copy
    // as a clone of its graph, which CUDA cannot make for such a graph.
    cudag::unique_graph g = cudag::make_graph();
    const cudag::native::allocation scratch = cudag::native::add_mem_alloc(g.get(), {}, 1024, 0, "a");
    (void)cudag::native::add_mem_free(g.get(), {&scratch.node, 1}, scratch.pointer, "f");
    cudaMemcpy3DParms rows{};
    rows.srcPtr = cudaPitchedPtr{dev_x, 256, 256, 4};
    rows.dstPtr = cudaPitchedPtr{dev_x2, 512, 256, 4};
    rows.extent = cudaExtent{256, 4, 1};
    rows.kind = cudaMemcpyDeviceToDevice;
    (void)cudag::native::add_memcpy(g.get(), {}, rows, "c");
    const cudag::graph_spec spec = cudag::import_graph(g.get());
    auto e = refusal<cudag::error>([&] { (void)cudag::instantiate(spec, {}); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()),
              "imported node 'memcpy_0' is opaque (2-D/3-D or array copy) and its graph cannot be "
              "cloned (cudaGraphClone failed: cudaErrorNotSupported), so it cannot be lowered");
    EXPECT_EQ(e->node(), "memcpy_0");
    EXPECT_EQ(e->call(), "cudaGraphClone");
    EXPECT_EQ(e->code(), cudaErrorNotSupported);
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, CapturedRecordingThrowingItsOwnExceptionNamesTheNode) {
  cudag::native::recorder rec;
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  b.captured("library", "a library call",
             [](cudaStream_t, float* v) {
               (void)v;
               throw std::out_of_range("workspace too small");
             },
             x);
  // A cudag::error (of a type derived from it that std::throw_with_nested
  // makes) holding the user's exception, its type kept.
  bool refused = false, nested_kept = false;
  try {
    (void)cudag::instantiate(b.build(), pipeline_binds);
  } catch (const cudag::error& e) {
    refused = true;
    EXPECT_EQ(std::string(e.what()), "captured node 'library': workspace too small");
    EXPECT_EQ(e.node(), "library");
    try {
      std::rethrow_if_nested(e);
    } catch (const std::out_of_range& inner) {
      nested_kept = std::string(inner.what()) == "workspace too small";
    }
  }
  EXPECT_TRUE(refused);
  EXPECT_TRUE(nested_kept);
  catalogue::expect_no_leak(rec);
}

}  // namespace
