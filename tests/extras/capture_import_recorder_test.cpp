// Capture into a graph and import, run on the native recorder: every graph
// call they make goes through the seam, so a graph lowered by cudag can be
// read back without a GPU, and each call can be made to fail. A failure
// names what failed (the node, or the function of capture), the CUDA call
// and its error, and leaves nothing behind.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/capture.hpp"
#include "cudag/check.hpp"
#include "cudag/diff.hpp"
#include "cudag/exec.hpp"
#include "cudag/import.hpp"
#include "cudag/native_api.hpp"
#include "cudag/native_nodes.hpp"
#include "cudag/native_recorder.hpp"

namespace {

// Stand-ins for kernels: the recorder never runs them.
void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }
void axpy(const float* x, float* y, float a, int n) { (void)x, (void)y, (void)a, (void)n; }

// Above 4 GiB, as device addresses are.
float* const dev_x = reinterpret_cast<float*>(0x7f5a07000000);
float* const dev_y = reinterpret_cast<float*>(0x7f5a07100000);
const cudaEvent_t event_a = reinterpret_cast<cudaEvent_t>(0x7f00000);

std::string lines(const std::vector<std::string>& calls) {
  std::string out;
  for (const auto& c : calls) out += c + "\n";
  return out;
}

template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const cudag::error& e) {
    return e.what();
  }
  return "(no error)";
}

void name_everything(cudag::native::recorder& rec) {
  rec.name_kernel(&scale, "scale");
  rec.name_kernel(&axpy, "axpy");
  rec.name_pointer(dev_x, "x");
  rec.name_pointer(dev_y, "y");
  rec.name_pointer(event_a, "ev");
}

/// Every kind import reads back: kernels (one on a graph allocation), 1-D
/// and 2-D memsets, a copy, a host node, an empty node, events, an
/// allocation and its free, a child graph. The four nodes writing y run in
/// turn (rows, clear_y, axpy, copy), the 2-D memset first, with no
/// dependency.
cudag::graph_spec several_kinds(int* host_calls) {
  cudag::builder b("several");
  auto x = b.param<float*>("x");
  auto y = b.param<float*>("y");
  auto n = b.param<int>("n");
  auto ev = b.param<cudaEvent_t>("ev");
  b.kernel("axpy", &axpy, cudag::launch_over(n, 256), x, y, 3.0f, n);
  b.memset("clear_y", y, 0, 1024);
  b.memset_2d("rows", y, 512, std::uint16_t{7}, 64, 4);
  b.memcpy("copy", y, x, 4096);
  b.host("report", [](int* calls) { ++*calls; }, host_calls);
  b.empty("join");
  b.record("signal", ev);
  b.wait("await", ev);
  const cudag::buffer_handle<float> tmp = b.alloc<float>("tmp", 256).buffer;
  b.kernel("use_tmp", &scale, cudag::launch(1, 32), cudag::buffer_handle<float>{tmp.name, 16}, 1.0f, 240);
  b.free("free_tmp", tmp);
  cudag::builder inner("stage");
  inner.kernel("inner", &scale, cudag::launch(2, 64), inner.param<float*>("x"), 4.0f, 128);
  b.child("stage", inner.build());
  for (auto [from, to] : std::vector<std::pair<const char*, const char*>>{
           {"clear_y", "axpy"}, {"axpy", "join"}, {"rows", "join"}, {"copy", "report"},
           {"report", "join"}, {"join", "signal"}, {"await", "tmp"}, {"tmp", "use_tmp"},
           {"use_tmp", "free_tmp"}, {"free_tmp", "join"}, {"signal", "stage"},
           {"rows", "clear_y"}, {"axpy", "copy"}})
    b.edge(from, to);
  return b.build();
}

const cudag::binding several_binds[] = {cudag::bind("x", dev_x), cudag::bind("y", dev_y),
                                        cudag::bind("n", 1000), cudag::bind("ev", event_a)};

std::map<cudag::node_kind, std::size_t> kinds_of(const cudag::graph_spec& spec) {
  std::map<cudag::node_kind, std::size_t> kinds;
  for (const auto& n : spec.nodes) ++kinds[n.kind()];
  return kinds;
}

/// scale(x, 2, 64) on one block of 64 threads, as a graph made by hand
/// through the seam gives it (its arguments live as long as the test).
cudaKernelNodeParams scale_params() {
  static float* x = dev_x;
  static float a = 2.0f;
  static int n = 64;
  static void* args[] = {&x, &a, &n};
  cudaKernelNodeParams k{};
  k.func = reinterpret_cast<void*>(&scale);
  k.gridDim = dim3(1);
  k.blockDim = dim3(64);
  k.kernelParams = args;
  return k;
}

/// A graph made through the seam: a 2-D copy (import keeps it opaque)
/// after a kernel, and, if asked, an allocation (CUDA then cannot clone the
/// graph, so the opaque copy cannot be lowered).
cudag::unique_graph graph_with_a_2d_copy(bool with_allocation) {
  cudag::unique_graph g = cudag::make_graph();
  const cudaKernelNodeParams k = scale_params();
  const cudaGraphNode_t kernel = cudag::native::add_kernel(g.get(), {}, k, "k");
  cudaMemcpy3DParms p{};
  p.srcPtr = cudaPitchedPtr{dev_x, 256, 64, 4};
  p.dstPtr = cudaPitchedPtr{dev_y, 512, 64, 4};
  p.extent = cudaExtent{64, 4, 1};
  p.kind = cudaMemcpyDeviceToDevice;
  (void)cudag::native::add_memcpy(g.get(), {&kernel, 1}, p, "rows");
  if (with_allocation) {
    const cudag::native::allocation scratch = cudag::native::add_mem_alloc(g.get(), {}, 1024, 0, "scratch");
    (void)cudag::native::add_mem_free(g.get(), {&scratch.node, 1}, scratch.pointer, "release");
  }
  return g;
}

void expect_nothing_left(const cudag::native::recorder& rec) {
  EXPECT_EQ(rec.live_graphs(), 0u);
  EXPECT_EQ(rec.live_execs(), 0u);
  EXPECT_EQ(rec.live_streams(), 0u);
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

// ------------------------------------------------------------ import --

TEST(ImportOnRecorder, ALoweredSpecImportedAndLoweredAgainIsTheSameGraph) {
  int host_calls = 0;
  cudag::native::recorder rec;
  name_everything(rec);
  {
    cudag::lowered_graph original = cudag::lower(several_kinds(&host_calls), several_binds);
    rec.clear();
    const cudag::graph_spec imported = cudag::import_graph(original.graph.get());
    if (std::getenv("CUDAG_SHOW_CALLS")) std::printf("%s", rec.transcript().c_str());

    using k = cudag::node_kind;
    const std::map<k, std::size_t> expected{
        {k::kernel, 2},     {k::memset, 2},       {k::memcpy, 1},     {k::host, 1},
        {k::empty, 1},      {k::event_record, 1}, {k::event_wait, 1}, {k::mem_alloc, 1},
        {k::mem_free, 1},   {k::child, 1}};
    EXPECT_EQ(kinds_of(imported), expected);
    const auto& use_tmp = std::get<cudag::kernel_node>(imported.find("kernel_1")->params);
    EXPECT_EQ(use_tmp.function_name, "scale");
    const auto& tmp_use = std::get<cudag::buffer_ref>(use_tmp.args.at(0).source);
    EXPECT_EQ(tmp_use.name, "mem_alloc_0");
    EXPECT_EQ(tmp_use.offset_bytes, 16 * sizeof(float));
    const auto& stage = *std::get<cudag::child_node>(imported.find("child_0")->params).graph;
    ASSERT_EQ(stage.nodes.size(), 1u);
    EXPECT_EQ(std::get<cudag::kernel_node>(stage.nodes[0].params).function_name, "scale");

    // Lowered again, the imported spec makes the same graph: same kinds,
    // order, dependencies and parameters, nested graphs included.
    cudag::lowered_graph again = cudag::lower(imported, {});
    EXPECT_EQ(rec.graph_state(again.graph.get()), rec.graph_state(original.graph.get()));
    EXPECT_NE(rec.graph_state(original.graph.get()).find("add_memset_node deps=[] dst=y value=0x7 element=2 width=64 height=4 pitch=512"),
              std::string::npos)
        << rec.graph_state(original.graph.get());

    // The imported host node calls the original's callable.
    cudag::unique_stream s = cudag::make_stream();
    cudag::exec e = cudag::instantiate(imported, {});
    e.launch(s.get());
    e.synchronize(s.get());
    EXPECT_EQ(host_calls, 1);
  }
  expect_nothing_left(rec);
}

TEST(ImportOnRecorder, AKernelsLaunchAttributesAreReadBack) {
  cudag::native::recorder rec;
  name_everything(rec);
  {
    cudag::builder b("attributes");
    auto x = b.param<float*>("x");
    cudag::launch_config config =
        cudag::launch(4, 64).cluster(2).cooperative().mem_sync_domain(cudaLaunchMemSyncDomainRemote)
            .access_policy(dev_y, 4096, 0.5f);
    config.priority = 3;
    auto first = b.kernel("with", cudag::kernel_of(&scale, "scale"), config, x, 1.0f, 256);
    b.kernel("without", cudag::kernel_of(&scale, "scale"), cudag::launch(4, 64), x, 2.0f, 256)
        .after(first);  // both write x
    const cudag::binding binds[] = {cudag::bind("x", dev_x)};
    cudag::lowered_graph original = cudag::lower(b.build(), binds);
    const cudag::graph_spec imported = cudag::import_graph(original.graph.get());
    ASSERT_EQ(imported.nodes.size(), 2u);
    const auto& with = std::get<cudag::kernel_node>(imported.nodes[0].params);
    EXPECT_EQ(with.priority, 3);
    EXPECT_EQ(cudag::describe_launch_attributes(with),
              "cluster 2x1x1, cooperative, memory-sync domain remote, access-policy window " +
                  cudag::describe_access_policy({dev_y, 4096, 0.5f}));
    const auto& without = std::get<cudag::kernel_node>(imported.nodes[1].params);
    EXPECT_EQ(without.priority, 0);
    EXPECT_EQ(cudag::describe_launch_attributes(without), "none");
    // Lowered again, the imported spec sends the same attributes.
    cudag::lowered_graph again = cudag::lower(imported, {});
    EXPECT_EQ(rec.graph_state(again.graph.get()), rec.graph_state(original.graph.get()));
    EXPECT_NE(rec.graph_state(again.graph.get()).find("cluster=2,1,1"), std::string::npos)
        << rec.graph_state(again.graph.get());
  }
  expect_nothing_left(rec);
}

/// first -> second (programmatic), second -> third (full), first -> third
/// (launch completion); second and third synchronize their grid dependencies.
cudag::graph_spec launched_early() {
  cudag::builder b("early");
  auto x = b.param<float*>("x");
  const auto marked = cudag::synchronizes_grid_dependencies(cudag::kernel_of(&scale, "scale"));
  auto first = b.kernel("first", cudag::kernel_of(&scale, "scale"), cudag::launch(2, 64), x, 1.0f, 128);
  auto second = b.kernel("second", marked, cudag::launch(2, 64), x, 2.0f, 128);
  auto third = b.kernel("third", marked, cudag::launch(2, 64), x, 3.0f, 128);
  b.edge(first, second, cudag::edge_kind::programmatic);
  b.edge(second, third);
  b.edge(first, third, cudag::edge_kind::launch_completion);
  return b.build();
}

TEST(ImportOnRecorder, EachEdgesDataBecomesTheKindOfItsDependency) {
  cudag::native::recorder rec;
  name_everything(rec);
  {
    const cudag::binding binds[] = {cudag::bind("x", dev_x)};
    cudag::lowered_graph original = cudag::lower(launched_early(), binds);
    rec.clear();
    const cudag::graph_spec imported = cudag::import_graph(original.graph.get());
    ASSERT_EQ(imported.nodes.size(), 3u);
    using kind = cudag::edge_kind;
    EXPECT_EQ(imported.nodes[0].name, "kernel_0");
    EXPECT_TRUE(imported.nodes[0].dependency_kinds.empty());
    EXPECT_EQ(imported.nodes[1].deps, std::vector<std::string>{"kernel_0"});
    EXPECT_EQ(imported.nodes[1].dependency_kinds, std::vector<kind>{kind::programmatic});
    EXPECT_EQ(imported.nodes[2].deps, (std::vector<std::string>{"kernel_1", "kernel_0"}));
    EXPECT_EQ(imported.nodes[2].dependency_kinds,
              (std::vector<kind>{kind::full, kind::launch_completion}));
    // A kernel CUDA launches early is taken to synchronize its grid
    // dependencies; the others are not marked.
    const auto marked = [&](std::size_t i) {
      return std::get<cudag::kernel_node>(imported.nodes[i].params).synchronizes_grid_dependencies;
    };
    EXPECT_FALSE(marked(0));
    EXPECT_TRUE(marked(1));
    EXPECT_TRUE(marked(2));
    EXPECT_NO_THROW(cudag::check(imported));

    // The spec as it was, but for the node names: renamed back, no change.
    cudag::graph_spec renamed = imported;
    const std::map<std::string, std::string> names{
        {"kernel_0", "first"}, {"kernel_1", "second"}, {"kernel_2", "third"}};
    for (cudag::node& n : renamed.nodes) {
      n.name = names.at(n.name);
      for (std::string& d : n.deps) d = names.at(d);
    }
    cudag::graph_spec original_spec = launched_early();
    // Import reads arguments as bytes and declares no parameters.
    for (std::size_t i = 0; i < 3; ++i) {
      std::get<cudag::kernel_node>(renamed.nodes[i].params).args.clear();
      std::get<cudag::kernel_node>(original_spec.nodes[i].params).args.clear();
    }
    original_spec.params.clear();
    EXPECT_TRUE(cudag::diff(original_spec, renamed).empty()) << cudag::diff(original_spec, renamed).text();

    // Lowered again: the same graph, edge data and all.
    cudag::lowered_graph again = cudag::lower(imported, {});
    EXPECT_EQ(rec.graph_state(again.graph.get()), rec.graph_state(original.graph.get()));
    EXPECT_NE(rec.graph_state(again.graph.get()).find("deps=[1,0:launch_completion]"),
              std::string::npos)
        << rec.graph_state(again.graph.get());
  }
  expect_nothing_left(rec);
}

/// A graph made by hand through the seam: two kernels, the second after
/// the first with edge data `data` (no marker anywhere: cudag did not build it).
cudag::unique_graph kernels_joined_by(const cudaGraphEdgeData& data) {
  cudag::unique_graph g = cudag::make_graph();
  const cudaKernelNodeParams k = scale_params();
  const cudaGraphNode_t first = cudag::native::add_kernel(g.get(), {}, k, "first");
  (void)cudag::native::add_kernel(g.get(), {&first, 1}, {&data, 1}, k, "second");
  return g;
}

TEST(ImportOnRecorder, AKernelLaunchedEarlyByAGraphBuiltByHandIsImportedMarked) {
  cudag::native::recorder rec;
  name_everything(rec);
  {
    cudag::unique_graph g =
        kernels_joined_by(cudag::native::edge_data_of(cudag::edge_kind::programmatic));
    const cudag::graph_spec imported = cudag::import_graph(g.get());
    ASSERT_EQ(imported.nodes.size(), 2u);
    EXPECT_EQ(imported.nodes[1].dependency_kinds,
              std::vector<cudag::edge_kind>{cudag::edge_kind::programmatic});
    EXPECT_TRUE(std::get<cudag::kernel_node>(imported.nodes[1].params).synchronizes_grid_dependencies);
    EXPECT_NO_THROW(cudag::check(imported));
    // A full edge: nothing kept, nothing marked.
    cudag::unique_graph plain = kernels_joined_by(cudaGraphEdgeData{});
    const cudag::graph_spec full = cudag::import_graph(plain.get());
    EXPECT_TRUE(full.nodes[1].dependency_kinds.empty());
    EXPECT_FALSE(std::get<cudag::kernel_node>(full.nodes[1].params).synchronizes_grid_dependencies);
  }
  expect_nothing_left(rec);
}

TEST(ImportOnRecorder, EdgeDataCudagDoesNotKnowIsRefusedNamingBothNodes) {
  cudag::native::recorder rec;
  name_everything(rec);
  {
    // Programmatic, from the kernel's default port: CUDA takes it, cudag
    // writes no such edge.
    cudaGraphEdgeData data{};
    data.type = cudaGraphDependencyTypeProgrammatic;
    data.from_port = cudaGraphKernelNodePortDefault;
    cudag::unique_graph g = kernels_joined_by(data);
    try {
      (void)cudag::import_graph(g.get(), {.name = "by_hand"});
      FAIL() << "unknown edge data was imported";
    } catch (const cudag::error& e) {
      EXPECT_EQ(std::string(e.what()),
                "import of graph 'by_hand': the edge 'kernel_0' -> 'kernel_1' has edge data cudag "
                "does not know (type 1, from port 0, to port 0); cudag reads full, programmatic "
                "and launch-completion edges only");
      EXPECT_EQ(e.node(), "kernel_1");
    }
  }
  expect_nothing_left(rec);
}

TEST(ImportOnRecorder, EdgesAreListedWithTheirDataOrCudaRefusesTheQuery) {
  // What import relies on: without room for the edge data, CUDA refuses to
  // list edges that are not full (a lossy query); counting them is allowed.
  cudag::native::recorder rec;
  name_everything(rec);
  {
    cudag::unique_graph g =
        kernels_joined_by(cudag::native::edge_data_of(cudag::edge_kind::launch_completion));
    std::size_t count = 0;
    EXPECT_EQ(cudag::native::api().graph_get_edges(g.get(), nullptr, nullptr, nullptr, &count),
              cudaSuccess);
    EXPECT_EQ(count, 1u);
    cudaGraphNode_t from = nullptr, to = nullptr;
    EXPECT_EQ(cudag::native::api().graph_get_edges(g.get(), &from, &to, nullptr, &count),
              cudaErrorLossyQuery);
    cudaGraphEdgeData data{};
    EXPECT_EQ(cudag::native::api().graph_get_edges(g.get(), &from, &to, &data, &count), cudaSuccess);
    EXPECT_EQ(cudag::native::edge_kind_of(data), cudag::edge_kind::launch_completion);
    cudag::unique_graph plain = kernels_joined_by(cudaGraphEdgeData{});
    EXPECT_EQ(cudag::native::api().graph_get_edges(plain.get(), &from, &to, nullptr, &count),
              cudaSuccess);
  }
  expect_nothing_left(rec);
}

/// Imports the graph of several_kinds() with `entry`'s next call failing;
/// returns the message ("(no error)" when import went on).
std::string import_failing(const char* entry, std::size_t skip = 0) {
  int host_calls = 0;
  std::string message;
  cudag::native::recorder rec;
  name_everything(rec);
  {
    cudag::lowered_graph original = cudag::lower(several_kinds(&host_calls), several_binds);
    rec.clear();
    if (skip == 0) {
      rec.fail_next(entry, cudaErrorMemoryAllocation);
    } else {
      // The (skip+1)-th call of `entry`: its position in a run without failures.
      (void)cudag::import_graph(original.graph.get());
      std::size_t seen = 0, index = 0;
      for (; index < rec.calls().size(); ++index)
        if (rec.calls()[index].starts_with(std::string(entry) + " ") && seen++ == skip) break;
      EXPECT_LT(index, rec.calls().size()) << entry << " is called " << seen << " times";
      rec.clear();
      rec.fail_call(index, cudaErrorMemoryAllocation);
    }
    message = message_of([&] { (void)cudag::import_graph(original.graph.get()); });
    EXPECT_NE(lines(rec.calls_starting(entry)).find(" -> cudaErrorMemoryAllocation"), std::string::npos)
        << entry << " did not fail:\n" << rec.transcript();
  }
  expect_nothing_left(rec);
  return message;
}

TEST(ImportOnRecorder, AFailedCallNamesTheNodeTheCallAndItsError) {
  const std::string oom = "cudaErrorMemoryAllocation (out of memory)";
  const std::pair<const char*, std::string> cases[] = {
      {"graph_get_nodes", "import of graph 'imported': cudaGraphGetNodes failed: " + oom},
      {"graph_get_edges", "import of graph 'imported': cudaGraphGetEdges failed: " + oom},
      {"node_get_type", "import of graph 'imported': cudaGraphNodeGetType failed for its node 0 of 12: " + oom},
      {"memcpy_node_get_params", "cudaGraphMemcpyNodeGetParams failed for node 'memcpy_0': " + oom},
      {"memset_node_get_params", "cudaGraphMemsetNodeGetParams failed for node 'memset_0': " + oom},
      {"host_node_get_params", "cudaGraphHostNodeGetParams failed for node 'host_0': " + oom},
      {"child_graph_node_get_graph", "cudaGraphChildGraphNodeGetGraph failed for node 'child_0': " + oom},
      {"event_record_node_get_event",
       "cudaGraphEventRecordNodeGetEvent failed for node 'event_record_0': " + oom},
      {"event_wait_node_get_event", "cudaGraphEventWaitNodeGetEvent failed for node 'event_wait_0': " + oom},
      {"mem_alloc_node_get_params", "cudaGraphMemAllocNodeGetParams failed for node 'mem_alloc_0': " + oom},
      {"mem_free_node_get_params", "cudaGraphMemFreeNodeGetParams failed for node 'mem_free_0': " + oom},
  };
  for (const auto& [entry, expected] : cases) {
    SCOPED_TRACE(entry);
    EXPECT_EQ(import_failing(entry), expected);
  }
}

TEST(ImportOnRecorder, AFailureInsideAChildGraphNamesItsPath) {
  const std::string oom = "cudaErrorMemoryAllocation (out of memory)";
  // The second listing of nodes is the child's.
  EXPECT_EQ(import_failing("graph_get_nodes", 2),
            "import of graph 'child_0': cudaGraphGetNodes failed: " + oom);
  EXPECT_EQ(import_failing("node_get_type", 12),
            "import of graph 'child_0': cudaGraphNodeGetType failed for its node 0 of 1: " + oom);
}

/// The spec imported from several_kinds() with `entry`'s next call failing.
template <class Check>
void import_with_failure(const char* entry, Check&& check) {
  int host_calls = 0;
  cudag::native::recorder rec;
  name_everything(rec);
  {
    cudag::lowered_graph original = cudag::lower(several_kinds(&host_calls), several_binds);
    rec.fail_next(entry, cudaErrorMemoryAllocation);
    const cudag::graph_spec imported = cudag::import_graph(original.graph.get());
    check(imported);
    EXPECT_NE(rec.transcript().find(std::string(entry) + " "), std::string::npos);
    EXPECT_NE(lines(rec.calls_starting(entry)).find(" -> cudaErrorMemoryAllocation"), std::string::npos)
        << rec.transcript();
  }
  expect_nothing_left(rec);
}

TEST(ImportOnRecorder, AKernelWhoseArgumentsCannotBeReadIsKeptOpaqueSayingWhy) {
  // The driver's view of the node fails: no argument sizes.
  import_with_failure("kernel_node_get_driver_params", [](const cudag::graph_spec& spec) {
    const auto* kept = std::get_if<cudag::captured_node>(&spec.find("kernel_0")->params);
    ASSERT_NE(kept, nullptr);
    EXPECT_EQ(kept->what,
              "opaque kernel_0 (kernel: argument sizes unavailable (cuGraphKernelNodeGetParams "
              "failed: cudaErrorMemoryAllocation))");
  });
  // An argument's size cannot be read: the arguments would be cut short.
  import_with_failure("function_get_param_info", [](const cudag::graph_spec& spec) {
    const auto* kept = std::get_if<cudag::captured_node>(&spec.find("kernel_0")->params);
    ASSERT_NE(kept, nullptr);
    EXPECT_EQ(kept->what,
              "opaque kernel_0 (axpy: argument sizes unavailable (cuFuncGetParamInfo failed: "
              "cudaErrorMemoryAllocation for argument 0))");
  });
}

TEST(ImportOnRecorder, WhatTheRuntimeOrTheDriverAloneTellsIsEnough) {
  // The runtime's parameters fail: the driver's stand in (a library kernel's case).
  import_with_failure("kernel_node_get_params", [](const cudag::graph_spec& spec) {
    const auto& k = std::get<cudag::kernel_node>(spec.find("kernel_0")->params);
    EXPECT_EQ(k.function, reinterpret_cast<const void*>(&axpy));
    EXPECT_EQ(k.args.size(), 4u);
    EXPECT_EQ(k.grid.x, 4u);
  });
  // The name is for people: without it the kernel is read all the same.
  import_with_failure("function_get_name", [](const cudag::graph_spec& spec) {
    const auto& k = std::get<cudag::kernel_node>(spec.find("kernel_0")->params);
    EXPECT_EQ(k.function_name, "");
    EXPECT_EQ(k.args.size(), 4u);
  });
}

TEST(ImportOnRecorder, AKernelTheRuntimeCannotReadAndTheDriverCannotSizeIsRefusedByName) {
  cudag::native::recorder rec;  // scale not named: the driver's view is unavailable
  {
    cudag::unique_graph g = graph_with_a_2d_copy(false);
    rec.fail_next("kernel_node_get_params", cudaErrorInvalidDeviceFunction);
    EXPECT_EQ(message_of([&] { (void)cudag::import_graph(g.get()); }),
              "cudaGraphKernelNodeGetParams failed for node 'kernel_0': cudaErrorInvalidDeviceFunction "
              "(invalid device function)");
  }
  expect_nothing_left(rec);
}

TEST(ImportOnRecorder, AnOpaqueNodeIsLoweredAsAOneNodeCloneOfIt) {
  cudag::native::recorder rec;
  name_everything(rec);
  {
    cudag::unique_graph g = graph_with_a_2d_copy(false);
    const cudag::graph_spec spec = cudag::import_graph(g.get());
    const auto* kept = std::get_if<cudag::captured_node>(&spec.find("memcpy_0")->params);
    ASSERT_NE(kept, nullptr);
    EXPECT_EQ(kept->what, "opaque memcpy_0 (2-D/3-D or array copy)");
    EXPECT_EQ(rec.live_graphs(), 2u);  // the original and the opaque node's clone
    cudag::lowered_graph again = cudag::lower(spec, {});
    const std::string state = rec.graph_state(again.graph.get());
    // kernel, then the captured clone holding a clone of the one-node graph.
    EXPECT_NE(state.find("0 add_kernel_node deps=[] scale grid=(1,1,1) block=(64,1,1) shared=0 args=[x, 0x40000000, 0x40]"),
              std::string::npos)
        << state;
    EXPECT_NE(state.find("1/c/0/c/0 add_memcpy_node deps=[] dst=y src=x extent=64x4x1 pitch=512/256 kind=3"),
              std::string::npos)
        << state;
  }
  expect_nothing_left(rec);
}

TEST(ImportOnRecorder, AFailedCloneIsReportedWhenTheOpaqueNodeIsLowered) {
  const std::pair<bool, std::string> cases[] = {
      {false, "cudaGraphClone failed: cudaErrorMemoryAllocation"},  // injected
      {true, "cudaGraphClone failed: cudaErrorNotSupported"},       // a graph holding an allocation
  };
  for (const auto& [with_allocation, why] : cases) {
    SCOPED_TRACE(why);
    cudag::native::recorder rec;
    name_everything(rec);
    {
      cudag::unique_graph g = graph_with_a_2d_copy(with_allocation);
      if (!with_allocation) rec.fail_next("graph_clone", cudaErrorMemoryAllocation);
      const cudag::graph_spec spec = cudag::import_graph(g.get());
      EXPECT_EQ(rec.live_graphs(), 1u);
      try {
        (void)cudag::lower(spec, {});
        ADD_FAILURE() << "an opaque node without a clone was lowered";
      } catch (const cudag::error& e) {
        EXPECT_STREQ(e.what(), ("imported node 'memcpy_0' is opaque (2-D/3-D or array copy) and its "
                                "graph cannot be cloned (" + why + "), so it cannot be lowered")
                                   .c_str());
        EXPECT_EQ(e.node(), "memcpy_0");
        EXPECT_EQ(e.call(), "cudaGraphClone");
      }
    }
    expect_nothing_left(rec);
  }
}

TEST(ImportOnRecorder, AFailureWhileCuttingTheCloneDownDestroysIt) {
  const std::string oom = "cudaErrorMemoryAllocation (out of memory)";
  const std::pair<const char*, std::string> cases[] = {
      {"node_find_in_clone", "cudaGraphNodeFindInClone failed for node 'memcpy_0': " + oom},
      {"graph_destroy_node", "cudaGraphDestroyNode failed for node 'memcpy_0': " + oom},
  };
  for (const auto& [entry, expected] : cases) {
    SCOPED_TRACE(entry);
    cudag::native::recorder rec;
    name_everything(rec);
    {
      cudag::unique_graph g = graph_with_a_2d_copy(false);
      rec.fail_next(entry, cudaErrorMemoryAllocation);
      EXPECT_EQ(message_of([&] { (void)cudag::import_graph(g.get()); }), expected);
      EXPECT_EQ(rec.live_graphs(), 1u);  // the clone is gone
    }
    expect_nothing_left(rec);
  }
}

// ----------------------------------------------------------- capture --

/// A graph of one empty node, "a", made through the seam.
cudag::unique_graph graph_of_one(cudaGraphNode_t& a) {
  cudag::unique_graph g = cudag::make_graph();
  a = cudag::native::add_empty(g.get(), {}, "a");
  return g;
}

TEST(CaptureOnRecorder, CaptureIntoAGraphAddsAfterTheGivenNodesAndEndsWithItsLeaves) {
  cudag::native::recorder rec;
  {
    cudaGraphNode_t a = nullptr;
    cudag::unique_graph g = graph_of_one(a);
    cudag::unique_graph child = cudag::make_graph();
    (void)cudag::native::add_empty(child.get(), {}, "inner");
    cudag::unique_stream s = cudag::make_stream();
    cudag::capture_guard guard(g.get(), s.get(), {&a, 1});
    EXPECT_TRUE(cudag::is_capturing(s.get()));
    const cudaGraphNode_t added = cudag::append_child_to_capture(s.get(), child.get());
    const std::vector<cudaGraphNode_t> leaves = guard.end_into();
    ASSERT_EQ(leaves.size(), 1u);
    EXPECT_EQ(leaves[0], added);
    EXPECT_FALSE(cudag::is_capturing(s.get()));
    EXPECT_EQ(rec.graph_state(g.get()),
              "0 add_empty_node deps=[] \n1 add_child_graph_node deps=[0] clone\n"
              "1/c/0 add_empty_node deps=[] \n");
  }
  expect_nothing_left(rec);
}

TEST(CaptureOnRecorder, AnAbandonedCaptureIntoAGraphTakesBackWhatItAdded) {
  cudag::native::recorder rec;
  {
    cudaGraphNode_t a = nullptr;
    cudag::unique_graph g = graph_of_one(a);
    const std::string before = rec.graph_state(g.get());
    cudag::unique_graph child = cudag::make_graph();
    cudag::unique_stream s = cudag::make_stream();
    {
      cudag::capture_guard guard(g.get(), s.get(), {&a, 1});
      (void)cudag::append_child_to_capture(s.get(), child.get());
      (void)cudag::append_child_to_capture(s.get(), child.get());
    }
    EXPECT_EQ(rec.graph_state(g.get()), before);
    EXPECT_EQ(rec.calls_starting("graph_destroy_node").size(), 2u) << rec.transcript();
    EXPECT_FALSE(cudag::is_capturing(s.get()));
  }
  expect_nothing_left(rec);
}

TEST(CaptureOnRecorder, AFailedCallNamesWhatFailedTheCallAndItsError) {
  const std::string oom = "cudaErrorMemoryAllocation (out of memory)";
  struct failure {
    const char* entry;
    std::size_t skip;  ///< calls of the entry that succeed first
    std::string expected;
  };
  const failure cases[] = {
      {"graph_get_nodes", 0, "capture_guard (into a graph): cudaGraphGetNodes failed: " + oom},
      {"stream_begin_capture_to_graph", 0,
       "capture_guard (into a graph): cudaStreamBeginCaptureToGraph failed: " + oom},
      {"stream_is_capturing", 0, "is_capturing: cudaStreamIsCapturing failed: " + oom},
      {"stream_get_capture_info", 0,
       "append_child_to_capture: cudaStreamGetCaptureInfo failed: " + oom},
      {"stream_update_capture_dependencies", 0,
       "cudaStreamUpdateCaptureDependencies failed: " + oom},
      {"stream_get_capture_info", 1, "capture_guard::end_into: cudaStreamGetCaptureInfo failed: " + oom},
      {"stream_end_capture", 0, "capture_guard::end_into: cudaStreamEndCapture failed: " + oom},
  };
  for (const failure& f : cases) {
    SCOPED_TRACE(std::string(f.entry) + " after " + std::to_string(f.skip));
    cudag::native::recorder rec;
    {
      cudaGraphNode_t a = nullptr;
      cudag::unique_graph g = graph_of_one(a);
      const std::string before = rec.graph_state(g.get());
      cudag::unique_graph child = cudag::make_graph();
      cudag::unique_stream s = cudag::make_stream();
      std::size_t seen = 0;
      auto arm = [&](const char* now) {  // fails the (skip+1)-th call of the entry
        if (std::string(now) == f.entry && seen++ == f.skip)
          rec.fail_next(f.entry, cudaErrorMemoryAllocation);
      };
      const std::string message = message_of([&] {
        arm("graph_get_nodes");
        arm("stream_begin_capture_to_graph");
        cudag::capture_guard guard(g.get(), s.get(), {&a, 1});
        arm("stream_is_capturing");
        if (!cudag::is_capturing(s.get())) return;
        arm("stream_get_capture_info");
        arm("stream_update_capture_dependencies");
        (void)cudag::append_child_to_capture(s.get(), child.get());
        arm("stream_get_capture_info");
        arm("stream_end_capture");
        (void)guard.end_into();
      });
      EXPECT_EQ(message, f.expected);
      EXPECT_NE(lines(rec.calls_starting(f.entry)).find(" -> cudaErrorMemoryAllocation"),
                std::string::npos)
          << rec.transcript();
      // The capture is over either way, and a failure before the end took
      // back what it had added.
      EXPECT_FALSE(cudag::is_capturing(s.get()));
      if (f.entry != std::string("stream_end_capture") && f.skip == 0) {
        EXPECT_EQ(rec.graph_state(g.get()), before);
      }
    }
    expect_nothing_left(rec);
  }
}

TEST(CaptureOnRecorder, AChildWhoseDependenciesCannotBeSetIsTakenBackFromTheCapture) {
  cudag::native::recorder rec;
  {
    cudag::unique_graph child = cudag::make_graph();
    cudag::unique_stream s = cudag::make_stream();
    cudag::native::begin_capture(s.get(), cudaStreamCaptureModeThreadLocal, "test");
    rec.fail_next("stream_update_capture_dependencies", cudaErrorIllegalState);
    EXPECT_EQ(message_of([&] { (void)cudag::append_child_to_capture(s.get(), child.get()); }),
              "cudaStreamUpdateCaptureDependencies failed: cudaErrorIllegalState (the operation "
              "cannot be performed in the present state)");
    cudag::unique_graph captured = cudag::native::end_capture(s.get(), "test");
    EXPECT_EQ(rec.graph_state(captured.get()), "");  // the capture as it was before the call
  }
  expect_nothing_left(rec);
}

TEST(CaptureOnRecorder, TheThreadsCaptureModeIsSetForAScopeAndAFailureNamed) {
  cudag::native::recorder rec;
  {
    cudag::capture_mode_scope relaxed(cudaStreamCaptureModeRelaxed);
    EXPECT_EQ(rec.calls().back(), "thread_exchange_stream_capture_mode relaxed -> global");
  }
  EXPECT_EQ(rec.calls().back(), "thread_exchange_stream_capture_mode global -> relaxed");
  rec.fail_next("thread_exchange_stream_capture_mode", cudaErrorMemoryAllocation);
  EXPECT_EQ(message_of([] { cudag::capture_mode_scope scope(cudaStreamCaptureModeRelaxed); }),
            "capture_mode_scope: cudaThreadExchangeStreamCaptureMode failed: "
            "cudaErrorMemoryAllocation (out of memory)");
  expect_nothing_left(rec);
}

}  // namespace
