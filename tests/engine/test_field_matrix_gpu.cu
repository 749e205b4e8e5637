// The field matrix on real data (issue 34, the GPU sample of every row):
// for each field of each node kind, a graph built with the run-time builder
// is run and read back, then exactly that field is changed through one path,
// the graph is run again, and the result is compared with a CPU reference of
// the new value (and what the change must not touch is checked untouched).
// Outputs are poisoned before every run, so a node that did not run, or ran
// with its old value, shows. The cpu suite's matrix asserts the native calls
// each cell makes; these rows assert their effect.
//
// Paths: rebind (the field follows a parameter), update (a changed spec of
// the same topology), update_or_reinstantiate (uor: "in place" where CUDA
// can make the change and the exec must not be instantiated again,
// "re-inst." where it cannot and must be), reshape (a launch dimension
// follows a parameter), the exec cache's exact hit (same shape, other
// bindings) and topology hit (other launch values: an update), instance
// (the new exec runs the new value, the old one still the old), add_to_capture
// (the spec added to a stream capture, the captured graph instantiated),
// run_eagerly, and import (the spec lowered, the graph read back by
// import_graph, the imported spec instantiated and run).
//
// Placements: top level; child graph; IF body (condition default 1); IF/ELSE
// (the node in both branches, each run taken once, chosen by a kernel);
// WHILE body (three rounds, counted); SWITCH body (case 1 of 3, by the
// condition's default); two levels deep: a child inside an IF body, or an IF
// inside a WHILE body. Host, event and alloc nodes are refused in
// conditional bodies (CUDA's rule), and eager runs and imports cannot hold a
// conditional node: those rows are at top level or in a child.
//
//   row                               path                   placement
//   --------------------------------  ---------------------  ------------------
//   kernel function                   update                 IF body
//   kernel grid x                     reshape (launch_over)  WHILE body
//   kernel grid y                     cache topology hit     SWITCH body
//   kernel grid z                     instance (shape rule)  IF/ELSE
//   kernel block x                    add_to_capture         IF inside WHILE
//   kernel block y                    reshape (shape rule)   child
//   kernel block z                    import                 top level
//   kernel dynamic shared bytes       rebind (shape rule)    child inside IF
//   kernel pointer argument           cache exact hit        IF/ELSE
//   kernel scalar argument            run_eagerly            child
//   kernel priority                   uor (re-inst.)         top level
//   kernel enabled                    exec::set_enabled      top level
//   memcpy source                     rebind                 SWITCH body
//   memcpy destination                instance               top level
//   memcpy bytes                      uor (in place)         WHILE body
//   memcpy kind                       uor (re-inst.)         IF/ELSE
//   memset destination                cache exact hit        WHILE body
//   memset value                      rebind                 IF body
//   memset element size (1, 2, 4)     add_to_capture         SWITCH body
//   memset width                      cache topology hit     IF inside WHILE
//   memset height (2-D)               uor (re-inst.)         child
//   memset pitch (2-D)                import                 child
//   host callable                     update                 top level
//   host arguments                    run_eagerly            child
//   event record: the event           rebind                 top level
//   event wait: the event             update                 child
//   mem alloc size                    uor (re-inst.)         child
//   condition value set by a kernel   instance               IF/ELSE at top level
//   condition default value           uor (re-inst.)         SWITCH at top level
//   conditional body                  update                 IF inside WHILE
//   child: a value inside it          update                 child
//   child: a value inside it          rebind                 child inside IF
//
// Every path appears in two rows at least (uor six times, update and rebind
// five), every placement twice at least.
//
// (field, path) pairs with no API, left out on purpose:
// - memcpy 2-D/3-D extents and pitches, every path: builder::memcpy and
//   memcpy_node describe a 1-D copy of `bytes` only.
// - kernel function, grid, block, shared bytes and priority given as
//   literals, by rebind, reshape, instance or an exact cache hit: those
//   paths change bindings only. Grid, block and shared bytes reach them
//   through a grid rule or shape rule (the rows above); a function or a
//   priority cannot follow a parameter (launch_dim has no priority), so
//   they change only with the spec.
// - memcpy bytes and kind, memset element size, width, height and pitch,
//   mem alloc size, host callable, condition default value: literals of
//   the spec, not values; no rebind, reshape, instance or exact hit can
//   change them. An exact cache hit cannot change any spec field (every
//   one is in the shape key: a changed one is a topology hit or a miss).
// - enabled: exec::set_enabled alone, for top-level kernel, memset and
//   memcpy nodes (CUDA's cudaGraphNodeSetEnabled); no spec field carries
//   it, so no other path and no nested placement has it.
// - run_eagerly and import at a conditional placement: refused by design
//   (a condition exists only in a graph; an imported conditional node is
//   opaque and its graph cannot be cloned).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/capture.hpp"
#include "cudag/eager.hpp"
#include "cudag/exec.hpp"
#include "cudag/exec_cache.hpp"
#include "cudag/import.hpp"
#include "gpu_support.hpp"
#include "test_buffers.hpp"
#include "test_kernels.cuh"

using namespace engine_test;

namespace {

// ------------------------------------------------------------------ kernels --

constexpr unsigned poison = 0xEEEEEEEEu;

/// out[i] = base + i below n.
__global__ void stamp_up(unsigned* out, unsigned base, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = base + static_cast<unsigned>(i);
}

/// stamp_up's signature, another result: out[i] = base - i below n.
__global__ void stamp_down(unsigned* out, unsigned base, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = base - static_cast<unsigned>(i);
}

__global__ void copy_words(unsigned* dst, const unsigned* src, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

/// Sets condition `h` to `value`: the branch follows a kernel argument.
__global__ void choose(cudaGraphConditionalHandle h, unsigned value) {
  cudaGraphSetConditional(h, value);
}

/// report_launch writes the launch's shape to out[0..5] (grid x, y, z,
/// block x, y, z) and 1 + t to out[launch_header + t] for every thread t
/// (linear over the whole launch), below `capacity`.
constexpr unsigned launch_header = 8;
constexpr unsigned launch_capacity = 512;
constexpr unsigned launch_slots = launch_header + launch_capacity;

__global__ void report_launch(unsigned* out, unsigned capacity) {
  const unsigned block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  const unsigned thread = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  const unsigned id = block * (blockDim.x * blockDim.y * blockDim.z) + thread;
  if (id == 0) {
    out[0] = gridDim.x;
    out[1] = gridDim.y;
    out[2] = gridDim.z;
    out[3] = blockDim.x;
    out[4] = blockDim.y;
    out[5] = blockDim.z;
  }
  if (id < capacity) out[launch_header + id] = id + 1;
}

/// One block: fills its dynamic shared memory (every word k = 3k + 1), then
/// writes how many words it had and their sum: both follow the launch's
/// dynamic shared bytes.
__global__ void report_shared(unsigned* out) {
  extern __shared__ unsigned words[];
  unsigned bytes = 0;
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
  const unsigned count = bytes / sizeof(unsigned);
  for (unsigned k = threadIdx.x; k < count; k += blockDim.x) words[k] = 3 * k + 1;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned sum = 0;
    for (unsigned k = 0; k < count; ++k) sum += words[k];
    out[0] = count;
    out[1] = sum;
  }
}

// -------------------------------------------------------- CPU references --

/// What stamp_up (or stamp_down) leaves in a poisoned buffer of `size`.
std::vector<unsigned> stamped(std::size_t size, unsigned base, int n, bool up = true) {
  std::vector<unsigned> v(size, poison);
  for (int i = 0; i < n && static_cast<std::size_t>(i) < size; ++i)
    v[static_cast<std::size_t>(i)] =
        up ? base + static_cast<unsigned>(i) : base - static_cast<unsigned>(i);
  return v;
}

/// What report_launch leaves in a poisoned buffer of launch_slots.
std::vector<unsigned> launch_reported(dim3 grid, dim3 block) {
  std::vector<unsigned> v(launch_slots, poison);
  v[0] = grid.x;
  v[1] = grid.y;
  v[2] = grid.z;
  v[3] = block.x;
  v[4] = block.y;
  v[5] = block.z;
  const unsigned long long threads = 1ull * grid.x * grid.y * grid.z * block.x * block.y * block.z;
  for (unsigned t = 0; t < threads && t < launch_capacity; ++t) v[launch_header + t] = t + 1;
  return v;
}

/// What report_shared leaves in a poisoned buffer of 4 with `bytes` of
/// dynamic shared memory.
std::vector<unsigned> shared_reported(unsigned bytes) {
  const unsigned count = bytes / 4;
  unsigned sum = 0;
  for (unsigned k = 0; k < count; ++k) sum += 3 * k + 1;
  return {count, sum, poison, poison};
}

/// `elements` 4-byte words after a memset of `width` x `height` words of
/// `fill`, rows `pitch_bytes` apart, over poison.
std::vector<unsigned> memset_reference(std::size_t elements, unsigned fill, std::size_t width,
                                       std::size_t height, std::size_t pitch_bytes) {
  std::vector<unsigned> v(elements, poison);
  for (std::size_t row = 0; row < height; ++row)
    for (std::size_t col = 0; col < width; ++col) v[row * pitch_bytes / 4 + col] = fill;
  return v;
}

/// A pattern no poison or fill looks like: tag + i.
std::vector<unsigned> pattern(std::size_t size, unsigned tag) {
  std::vector<unsigned> v(size);
  for (std::size_t i = 0; i < size; ++i) v[i] = tag + static_cast<unsigned>(i);
  return v;
}

// ------------------------------------------------------------ checks --

/// The device buffer read back equals `want`, element by element (exact).
template <class T>
void expect_buffer(const cudag::device_buffer<T>& d, const std::vector<T>& want,
                   const std::string& what) {
  const std::vector<T> got = read_back(d);
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(static_cast<unsigned long long>(got[i]), static_cast<unsigned long long>(want[i]))
        << what << ": element " << i;
}

void launch_and_wait(cudag::exec& e, cudaStream_t s) {
  e.launch(s);
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  e.synchronize(s);
  CUDAG_EXPECT_CUDA(cudaGetLastError());
}

void launch_native_and_wait(cudaGraphExec_t e, cudaStream_t s) {
  CUDAG_EXPECT_CUDA(cudaGraphLaunch(e, s));
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s));
  CUDAG_EXPECT_CUDA(cudaGetLastError());
}

void expect_cache(const cudag::exec_cache& cache, std::uint64_t exact_hits, std::uint64_t hits,
                  std::uint64_t misses) {
  const cudag::exec_cache_stats& st = cache.stats();
  EXPECT_EQ(st.exact_hits, exact_hits);
  EXPECT_EQ(st.hits, hits);
  EXPECT_EQ(st.misses, misses);
  EXPECT_EQ(st.refused_updates, 0u) << cache.last_refusal();
}

// ------------------------------------------------------------ placements --

enum class placement {
  top, child, if_body, if_else, while_body, switch_body, child_in_if, if_in_while
};

constexpr int loop_rounds = 3;
constexpr int if_mark = 11, then_mark = 21, else_mark = 22, case_mark = 100, nested_mark = 31;

/// The graph around the nodes under test at one placement, and what shows
/// that the body holding them ran: a marker kernel beside them (IF, IF/ELSE
/// each branch its own, SWITCH each case its own, child inside IF), or the
/// WHILE loop's round counter.
class frame {
 public:
  explicit frame(placement where) : where_(where) {}

  /// Adds to `b` the nodes `add` makes, at this placement.
  void build(cudag::builder& b, const std::function<void(cudag::builder&)>& add) const {
    int* marker = marker_.data();
    switch (where_) {
      case placement::top: add(b); return;
      case placement::child: {
        cudag::builder inner("inner");
        add(inner);
        b.child("stage", inner.build());
        return;
      }
      case placement::if_body: {
        auto take = b.condition("take", 1);
        cudag::builder body("then");
        add(body);
        body.kernel("mark", CUDAG_KERNEL(write_value), cudag::launch(1, 1), marker, if_mark);
        b.if_then("when", take, body.build());
        return;
      }
      case placement::if_else: {
        auto pick = b.condition("pick");  // set at every launch by "decide"
        cudag::builder then_body("then"), else_body("else");
        add(then_body);
        add(else_body);
        then_body.kernel("mark", CUDAG_KERNEL(write_value), cudag::launch(1, 1), marker, then_mark);
        else_body.kernel("mark", CUDAG_KERNEL(write_value), cudag::launch(1, 1), marker, else_mark);
        auto decide = b.kernel("decide", CUDAG_KERNEL(set_condition), cudag::launch(1, 1), pick,
                               static_cast<const unsigned*>(choice_.data()));
        auto branch = b.if_else("branch", pick, then_body.build(), else_body.build());
        b.edge(decide, branch);
        return;
      }
      case placement::while_body: {
        auto again = b.condition("again", 1);
        cudag::builder body("loop_body");
        add(body);
        body.kernel("count", CUDAG_KERNEL(count_and_continue), cudag::launch(1, 1), again, marker,
                    loop_rounds);
        b.while_loop("loop", again, body.build());
        return;
      }
      case placement::switch_body: {
        auto which = b.condition("which", 1);  // case 1 at every launch
        std::vector<cudag::graph_spec> cases;
        for (int k = 0; k < 3; ++k) {
          cudag::builder body("case" + std::to_string(k));
          if (k == 1) add(body);
          body.kernel("mark", CUDAG_KERNEL(write_value), cudag::launch(1, 1), marker,
                      case_mark + k);
          cases.push_back(body.build());
        }
        b.switch_case("cases", which, std::move(cases));
        return;
      }
      case placement::child_in_if: {
        auto take = b.condition("take", 1);
        cudag::builder inner("inner");
        add(inner);
        inner.kernel("mark", CUDAG_KERNEL(write_value), cudag::launch(1, 1), marker, nested_mark);
        cudag::builder body("then");
        body.child("stage", inner.build());
        b.if_then("when", take, body.build());
        return;
      }
      case placement::if_in_while: {
        auto again = b.condition("again", 1);
        cudag::builder body("loop_body");
        // Declared in the graph that holds the IF node.
        auto take = body.condition("take", 1);
        cudag::builder inner("then");
        add(inner);
        body.if_then("when", take, inner.build());
        body.kernel("count", CUDAG_KERNEL(count_and_continue), cudag::launch(1, 1), again, marker,
                    loop_rounds);
        b.while_loop("loop", again, body.build());
        return;
      }
    }
  }

  /// The branches each check runs: both for IF/ELSE (1: then, 0: else).
  [[nodiscard]] std::vector<unsigned> branches() const {
    if (where_ == placement::if_else) return {1u, 0u};
    return {1u};
  }

  /// Before a launch: chooses `branch` (IF/ELSE), resets the marker.
  void prepare(unsigned branch) const {
    switch (where_) {
      case placement::top:
      case placement::child: return;
      case placement::if_else: ASSERT_NO_FATAL_FAILURE(fill(choice_, branch)); break;
      default: break;
    }
    const bool counts = where_ == placement::while_body || where_ == placement::if_in_while;
    ASSERT_NO_FATAL_FAILURE(fill(marker_, counts ? 0 : -1));  // a counter starts at 0
  }

  /// After a launch: the body holding the nodes ran (the chosen branch, every round).
  void expect_ran(unsigned branch) const {
    int want = 0;
    switch (where_) {
      case placement::top:
      case placement::child: return;
      case placement::if_body: want = if_mark; break;
      case placement::if_else: want = branch ? then_mark : else_mark; break;
      case placement::while_body:
      case placement::if_in_while: want = loop_rounds; break;
      case placement::switch_body: want = case_mark + 1; break;
      case placement::child_in_if: want = nested_mark; break;
    }
    EXPECT_EQ(read_back(marker_)[0], want)
        << "the body holding the nodes under test did not run as chosen";
  }

  [[nodiscard]] std::string describe(unsigned branch) const {
    switch (where_) {
      case placement::top: return "top level";
      case placement::child: return "child graph";
      case placement::if_body: return "IF body";
      case placement::if_else: return branch ? "IF/ELSE, then branch" : "IF/ELSE, else branch";
      case placement::while_body: return "WHILE body";
      case placement::switch_body: return "SWITCH body, case 1";
      case placement::child_in_if: return "child inside an IF body";
      case placement::if_in_while: return "IF inside a WHILE body";
    }
    return "?";
  }

 private:
  placement where_;
  cudag::device_buffer<unsigned> choice_{1};
  cudag::device_buffer<int> marker_{1};
};

/// For each branch the placement runs: poison the outputs, choose the
/// branch, run, check that the body ran, check the outputs.
template <class Poison, class Run, class Check>
void for_each_branch(const frame& where, Poison&& poison_outputs, Run&& run, Check&& check) {
  for (const unsigned branch : where.branches()) {
    SCOPED_TRACE(where.describe(branch));
    ASSERT_NO_FATAL_FAILURE(poison_outputs());
    ASSERT_NO_FATAL_FAILURE(where.prepare(branch));
    ASSERT_NO_FATAL_FAILURE(run());
    ASSERT_NO_FATAL_FAILURE(where.expect_ran(branch));
    ASSERT_NO_FATAL_FAILURE(check());
  }
}

// --------------------------------------------------------------- paths --

/// A spec added to a stream capture on `s`, the captured graph and its
/// executable graph. `inserted` keeps what the captured nodes point at.
struct captured_graph {
  cudag::graph_in_capture inserted;
  cudag::unique_graph graph;
  cudag::unique_graph_exec exec;
};

captured_graph capture(const cudag::graph_spec& spec, std::span<const cudag::binding> binds,
                       cudaStream_t s) {
  cudag::capture_guard guard(s);
  captured_graph out{cudag::add_to_capture(s, spec, binds), nullptr, nullptr};
  out.graph = guard.end();
  out.exec = cudag::instantiate_native(out.graph.get(), {});
  return out;
}

/// The import round trip: `spec` lowered, its graph read back by
/// import_graph, the imported spec instantiated. `lowered` outlives the
/// exec (the imported literals are its pointers and handles).
struct imported_graph {
  cudag::lowered_graph lowered;
  cudag::graph_spec spec;
  cudag::exec exec;
};

imported_graph round_trip(const cudag::graph_spec& spec, std::span<const cudag::binding> binds) {
  cudag::lowered_graph lowered = cudag::lower(spec, binds);
  cudag::graph_spec imported =
      cudag::import_graph(lowered.graph.get(), {.name = spec.name + "_imported"});
  cudag::exec e = cudag::instantiate(imported, {});
  return {std::move(lowered), std::move(imported), std::move(e)};
}

constexpr int stamp_count = 100;  // stamp_up/down over 100 of 128 threads and words
constexpr std::size_t stamp_words = 128;
const cudag::launch_config stamp_launch = cudag::launch(2, 64);

}  // namespace

// ================================================================ kernel ==

TEST(FieldMatrixGpu, KernelFunctionByUpdateInIfBody) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::if_body);
  cudag::device_buffer<unsigned> out(stamp_words);
  auto make = [&](bool up) {
    cudag::builder b("function");
    where.build(b, [&](cudag::builder& g) {
      if (up)
        g.kernel("stamp", CUDAG_KERNEL(stamp_up), stamp_launch, out.data(), 5000u, stamp_count);
      else
        g.kernel("stamp", CUDAG_KERNEL(stamp_down), stamp_launch, out.data(), 5000u, stamp_count);
    });
    return b.build();
  };
  auto s = cudag::make_stream();
  auto e = cudag::instantiate(make(true), {});
  auto poison_out = [&] { fill(out, poison); };
  auto run = [&] { launch_and_wait(e, s.get()); };
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_out, run, [&] {
    expect_buffer(out, stamped(stamp_words, 5000u, stamp_count, true), "stamp_up");
  }));
  e.update(make(false), {});
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_out, run, [&] {
    expect_buffer(out, stamped(stamp_words, 5000u, stamp_count, false),
                  "stamp_down after the update");
  }));
}

TEST(FieldMatrixGpu, KernelGridXByReshapeInWhileBody) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::while_body);
  cudag::device_buffer<unsigned> out(launch_slots);
  cudag::builder b("grid_x");
  auto count = b.param<int>("n");
  where.build(b, [&](cudag::builder& g) {
    g.kernel("report", CUDAG_KERNEL(report_launch), cudag::launch_over(count, 32), out.data(),
             launch_capacity);
  });
  const cudag::binding binds[] = {cudag::bind("n", 64)};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  auto poison_out = [&] { fill(out, poison); };
  auto run = [&] { launch_and_wait(e, s.get()); };
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_out, run, [&] {
    expect_buffer(out, launch_reported(dim3(2), dim3(32)), "n = 64");
  }));
  // Nested nodes change through the template graph.
  EXPECT_EQ(e.reshape(cudag::bind("n", 160)), cudag::rebind_path::whole_graph_update);
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_out, run, [&] {
    expect_buffer(out, launch_reported(dim3(5), dim3(32)), "reshaped to n = 160");
  }));
}

TEST(FieldMatrixGpu, KernelGridYByExecCacheTopologyHitInSwitchBody) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::switch_body);
  cudag::device_buffer<unsigned> out(launch_slots);
  auto make = [&](unsigned grid_y) {
    cudag::builder b("grid_y");
    auto po = b.param<unsigned*>("out");
    where.build(b, [&](cudag::builder& g) {
      g.kernel("report", CUDAG_KERNEL(report_launch),
               cudag::launch(dim3(2, grid_y, 1), dim3(4, 2, 1)), po, launch_capacity);
    });
    return b.build();
  };
  auto s = cudag::make_stream();
  cudag::exec_cache_options options;
  options.stream = s.get();
  cudag::exec_cache cache(options);
  const cudag::binding binds[] = {cudag::bind("out", out.data())};
  auto poison_out = [&] { fill(out, poison); };

  cudag::exec& first = cache.acquire(make(2), binds);
  expect_cache(cache, 0, 0, 1);
  ASSERT_NO_FATAL_FAILURE(for_each_branch(
      where, poison_out, [&] { launch_and_wait(first, s.get()); },
      [&] { expect_buffer(out, launch_reported(dim3(2, 2, 1), dim3(4, 2, 1)), "grid y = 2"); }));
  // Another grid: another shape of the same topology, the cached exec updated.
  cudag::exec& second = cache.acquire(make(3), binds);
  EXPECT_EQ(&second, &first);
  expect_cache(cache, 0, 1, 1);
  ASSERT_NO_FATAL_FAILURE(for_each_branch(
      where, poison_out, [&] { launch_and_wait(second, s.get()); },
      [&] {
        expect_buffer(out, launch_reported(dim3(2, 3, 1), dim3(4, 2, 1)),
                      "grid y = 3 after the topology hit");
      }));
}

TEST(FieldMatrixGpu, KernelGridZByInstanceInIfElse) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::if_else);
  cudag::device_buffer<unsigned> out(launch_slots);
  cudag::builder b("grid_z");
  auto depth = b.param<int>("depth");
  where.build(b, [&](cudag::builder& g) {
    g.kernel("report", CUDAG_KERNEL(report_launch),
             cudag::launch(dim3(2, 1, 1), dim3(4, 1, 1)).follow(cudag::launch_dim::grid_z, depth),
             out.data(), launch_capacity);
  });
  const cudag::binding binds[] = {cudag::bind("depth", 2)};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  auto poison_out = [&] { fill(out, poison); };
  auto expect_depth = [&](cudag::exec& x, unsigned z, const char* what) {
    ASSERT_NO_FATAL_FAILURE(for_each_branch(
        where, poison_out, [&] { launch_and_wait(x, s.get()); },
        [&] { expect_buffer(out, launch_reported(dim3(2, 1, z), dim3(4, 1, 1)), what); }));
  };
  ASSERT_NO_FATAL_FAILURE(expect_depth(e, 2, "the first exec, depth 2"));
  const cudag::binding other[] = {cudag::bind("depth", 3)};
  auto deeper = e.instance(other);
  ASSERT_NO_FATAL_FAILURE(expect_depth(deeper, 3, "the instance, depth 3"));
  ASSERT_NO_FATAL_FAILURE(expect_depth(e, 2, "the first exec after the instance, still depth 2"));
}

TEST(FieldMatrixGpu, KernelBlockXByAddToCaptureInIfInsideWhile) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::if_in_while);
  cudag::device_buffer<unsigned> out(launch_slots);
  auto make = [&](unsigned block_x) {
    cudag::builder b("block_x");
    where.build(b, [&](cudag::builder& g) {
      g.kernel("report", CUDAG_KERNEL(report_launch), cudag::launch(dim3(2), dim3(block_x)),
               out.data(), launch_capacity);
    });
    return b.build();
  };
  auto s = cudag::make_stream();
  auto poison_out = [&] { fill(out, poison); };
  for (const unsigned block_x : {8u, 32u}) {
    SCOPED_TRACE("block x = " + std::to_string(block_x));
    captured_graph c = capture(make(block_x), {}, s.get());
    ASSERT_NO_FATAL_FAILURE(for_each_branch(
        where, poison_out, [&] { launch_native_and_wait(c.exec.get(), s.get()); },
        [&] { expect_buffer(out, launch_reported(dim3(2), dim3(block_x)), "captured"); }));
  }
}

TEST(FieldMatrixGpu, KernelBlockYByReshapeInChild) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::child);
  cudag::device_buffer<unsigned> out(launch_slots);
  cudag::builder b("block_y");
  auto rows = b.param<unsigned>("rows");
  where.build(b, [&](cudag::builder& g) {
    g.kernel("report", CUDAG_KERNEL(report_launch),
             cudag::launch(dim3(2), dim3(4, 1, 1)).follow(cudag::launch_dim::block_y, rows),
             out.data(), launch_capacity);
  });
  const cudag::binding binds[] = {cudag::bind("rows", 2u)};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  auto poison_out = [&] { fill(out, poison); };
  auto run = [&] { launch_and_wait(e, s.get()); };
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_out, run, [&] {
    expect_buffer(out, launch_reported(dim3(2), dim3(4, 2, 1)), "rows = 2");
  }));
  EXPECT_EQ(e.reshape(cudag::bind("rows", 4u)), cudag::rebind_path::whole_graph_update);
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_out, run, [&] {
    expect_buffer(out, launch_reported(dim3(2), dim3(4, 4, 1)), "reshaped to rows = 4");
  }));
}

TEST(FieldMatrixGpu, KernelBlockZByImportAtTopLevel) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::top);
  cudag::device_buffer<unsigned> out(launch_slots);
  auto make = [&](unsigned block_z) {
    cudag::builder b("block_z");
    where.build(b, [&](cudag::builder& g) {
      g.kernel("report", CUDAG_KERNEL(report_launch), cudag::launch(dim3(2), dim3(4, 2, block_z)),
               out.data(), launch_capacity);
    });
    return b.build();
  };
  auto s = cudag::make_stream();
  auto poison_out = [&] { fill(out, poison); };
  for (const unsigned block_z : {1u, 4u}) {
    SCOPED_TRACE("block z = " + std::to_string(block_z));
    imported_graph r = round_trip(make(block_z), {});
    const cudag::node* kernel = r.spec.find("kernel_0");
    ASSERT_NE(kernel, nullptr);
    EXPECT_EQ(std::get<cudag::kernel_node>(kernel->params).block.z, block_z)
        << "read back by import";
    ASSERT_NO_FATAL_FAILURE(for_each_branch(
        where, poison_out, [&] { launch_and_wait(r.exec, s.get()); },
        [&] {
          expect_buffer(out, launch_reported(dim3(2), dim3(4, 2, block_z)), "the imported graph");
        }));
  }
}

TEST(FieldMatrixGpu, KernelSharedBytesByRebindInChildInsideIf) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::child_in_if);
  cudag::device_buffer<unsigned> out(4);
  cudag::builder b("shared");
  auto bytes = b.param<unsigned>("shared_bytes");
  where.build(b, [&](cudag::builder& g) {
    g.kernel("report", CUDAG_KERNEL(report_shared),
             cudag::launch(dim3(1), dim3(64)).follow(cudag::launch_dim::shared_bytes, bytes),
             out.data());
  });
  const cudag::binding binds[] = {cudag::bind("shared_bytes", 256u)};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  auto poison_out = [&] { fill(out, poison); };
  auto run = [&] { launch_and_wait(e, s.get()); };
  ASSERT_NO_FATAL_FAILURE(for_each_branch(
      where, poison_out, run, [&] { expect_buffer(out, shared_reported(256), "256 bytes"); }));
  EXPECT_EQ(e.rebind("shared_bytes", 4096u), cudag::rebind_path::whole_graph_update);
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_out, run, [&] {
    expect_buffer(out, shared_reported(4096), "rebound to 4096 bytes");
  }));
}

TEST(FieldMatrixGpu, KernelPointerArgumentByExecCacheExactHitInIfElse) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::if_else);
  cudag::device_buffer<unsigned> first_out(stamp_words), second_out(stamp_words);
  cudag::builder b("pointer");
  auto po = b.param<unsigned*>("out");
  where.build(b, [&](cudag::builder& g) {
    g.kernel("stamp", CUDAG_KERNEL(stamp_up), stamp_launch, po, 700u, stamp_count);
  });
  const cudag::graph_spec spec = b.build();
  auto s = cudag::make_stream();
  cudag::exec_cache_options options;
  options.stream = s.get();
  cudag::exec_cache cache(options);
  auto poison_both = [&] {
    fill(first_out, poison);
    fill(second_out, poison);
  };
  const std::vector<unsigned> untouched(stamp_words, poison);
  const std::vector<unsigned> written = stamped(stamp_words, 700u, stamp_count);

  const cudag::binding first[] = {cudag::bind("out", first_out.data())};
  cudag::exec& e = cache.acquire(spec, first);
  expect_cache(cache, 0, 0, 1);
  ASSERT_NO_FATAL_FAILURE(for_each_branch(
      where, poison_both, [&] { launch_and_wait(e, s.get()); },
      [&] {
        expect_buffer(first_out, written, "the first output");
        expect_buffer(second_out, untouched, "the second output, not yet bound");
      }));
  // Same spec, same shape, another output: the cached exec rebound.
  const cudag::binding second[] = {cudag::bind("out", second_out.data())};
  cudag::exec& again = cache.acquire(spec, second);
  EXPECT_EQ(&again, &e);
  expect_cache(cache, 1, 0, 1);
  ASSERT_NO_FATAL_FAILURE(for_each_branch(
      where, poison_both, [&] { launch_and_wait(again, s.get()); },
      [&] {
        expect_buffer(first_out, untouched, "the first output after the exact hit");
        expect_buffer(second_out, written, "the second output after the exact hit");
      }));
}

TEST(FieldMatrixGpu, KernelScalarArgumentByEagerRunInChild) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::child);
  cudag::device_buffer<unsigned> out(stamp_words);
  cudag::builder b("scalar");
  auto base = b.param<unsigned>("base");
  where.build(b, [&](cudag::builder& g) {
    g.kernel("stamp", CUDAG_KERNEL(stamp_up), stamp_launch, out.data(), base, stamp_count);
  });
  const cudag::graph_spec spec = b.build();
  auto s = cudag::make_stream();
  auto poison_out = [&] { fill(out, poison); };
  for (const unsigned value : {100u, 900u}) {
    SCOPED_TRACE("base = " + std::to_string(value));
    const cudag::binding binds[] = {cudag::bind("base", value)};
    ASSERT_NO_FATAL_FAILURE(for_each_branch(
        where, poison_out,
        [&] {
          cudag::eager_run run = cudag::run_eagerly(spec, binds, s.get());
          CUDAG_EXPECT_CUDA(cudaGetLastError());
          run.synchronize();
          CUDAG_EXPECT_CUDA(cudaGetLastError());
        },
        [&] { expect_buffer(out, stamped(stamp_words, value, stamp_count), "eager run"); }));
  }
}

// A priority is not observable on data: the row checks that the path keeps
// the result and the node running, and that the re-instantiated graph's
// node carries the new priority.
TEST(FieldMatrixGpu, KernelPriorityByUpdateOrReinstantiateAtTopLevel) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::top);
  cudag::device_buffer<unsigned> out(stamp_words);
  int least = 0, greatest = 0;
  CUDAG_EXPECT_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  const int before = least;
  const int after = greatest != least ? greatest : least - 1;  // requested, clamped by the device
  auto make = [&](int priority) {
    cudag::builder b("priority");
    cudag::launch_config config = stamp_launch;
    config.priority = priority;
    where.build(b, [&](cudag::builder& g) {
      g.kernel("stamp", CUDAG_KERNEL(stamp_up), config, out.data(), 42u, stamp_count);
    });
    return b.build();
  };
  cudag::instantiate_options options;
  options.use_node_priority = true;
  auto e = cudag::instantiate(make(before), {}, options);
  auto s = cudag::make_stream();
  auto poison_out = [&] { fill(out, poison); };
  auto run = [&] { launch_and_wait(e, s.get()); };
  auto check = [&] { expect_buffer(out, stamped(stamp_words, 42u, stamp_count), "stamp"); };
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_out, run, check));
  // Under cudaGraphInstantiateFlagUseNodePriority CUDA cannot update a priority.
  EXPECT_TRUE(e.update_or_reinstantiate(make(after), {}))
      << "a priority change must instantiate again";
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_out, run, check));
  if (greatest != least) {
    cudaLaunchAttributeValue value{};
    CUDAG_EXPECT_CUDA(cudaGraphKernelNodeGetAttribute(e.node_handle("stamp"),
                                                      cudaLaunchAttributePriority, &value));
    EXPECT_EQ(value.priority, after);
  }
}

TEST(FieldMatrixGpu, KernelEnabledBySetEnabledAtTopLevel) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::top);
  cudag::device_buffer<unsigned> out(stamp_words), witness(stamp_words);
  cudag::builder b("enabled");
  where.build(b, [&](cudag::builder& g) {
    g.kernel("stamp", CUDAG_KERNEL(stamp_up), stamp_launch, out.data(), 300u, stamp_count);
    g.kernel("witness", CUDAG_KERNEL(stamp_up), stamp_launch, witness.data(), 600u, stamp_count);
  });
  auto e = cudag::instantiate(b.build(), {});
  auto s = cudag::make_stream();
  auto poison_both = [&] {
    fill(out, poison);
    fill(witness, poison);
  };
  auto run = [&] { launch_and_wait(e, s.get()); };
  auto expect_stamp = [&](bool present) {
    expect_buffer(out,
                  present ? stamped(stamp_words, 300u, stamp_count)
                          : std::vector<unsigned>(stamp_words, poison),
                  present ? "enabled" : "disabled");
    expect_buffer(witness, stamped(stamp_words, 600u, stamp_count), "the other node");
  };
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_both, run, [&] { expect_stamp(true); }));
  e.set_enabled("stamp", false);
  EXPECT_FALSE(e.enabled("stamp"));
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_both, run, [&] { expect_stamp(false); }));
  e.set_enabled("stamp", true);
  EXPECT_TRUE(e.enabled("stamp"));
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_both, run, [&] { expect_stamp(true); }));
}

// ================================================================ memcpy ==
// builder::memcpy is a 1-D copy of `bytes`: no 2-D/3-D extent or pitch rows.

constexpr std::size_t copy_words_total = 128;

TEST(FieldMatrixGpu, MemcpySourceByRebindInSwitchBody) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::switch_body);
  cudag::device_buffer<unsigned> first_src(copy_words_total), second_src(copy_words_total),
      dst(copy_words_total);
  upload(first_src, pattern(copy_words_total, 0x10000u));
  upload(second_src, pattern(copy_words_total, 0x20000u));
  constexpr std::size_t copied = 100;
  cudag::builder b("source");
  auto src = b.param<const unsigned*>("src");
  where.build(
      b, [&](cudag::builder& g) { g.memcpy("copy", dst.data(), src, copied * sizeof(unsigned)); });
  const cudag::binding binds[] = {
      cudag::bind("src", static_cast<const unsigned*>(first_src.data()))};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  auto poison_dst = [&] { fill(dst, poison); };
  auto run = [&] { launch_and_wait(e, s.get()); };
  auto copied_from = [&](unsigned tag) {
    std::vector<unsigned> v(copy_words_total, poison);
    for (std::size_t i = 0; i < copied; ++i) v[i] = tag + static_cast<unsigned>(i);
    return v;
  };
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_dst, run, [&] {
    expect_buffer(dst, copied_from(0x10000u), "from the first source");
  }));
  EXPECT_EQ(e.rebind("src", static_cast<const unsigned*>(second_src.data())),
            cudag::rebind_path::whole_graph_update);
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_dst, run, [&] {
    expect_buffer(dst, copied_from(0x20000u), "from the second source");
    expect_buffer(first_src, pattern(copy_words_total, 0x10000u), "the first source, unchanged");
  }));
}

TEST(FieldMatrixGpu, MemcpyDestinationByInstanceAtTopLevel) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::top);
  cudag::device_buffer<unsigned> src(copy_words_total), first_dst(copy_words_total),
      second_dst(copy_words_total);
  upload(src, pattern(copy_words_total, 0x30000u));
  cudag::builder b("destination");
  auto dst = b.param<unsigned*>("dst");
  where.build(b, [&](cudag::builder& g) {
    g.memcpy("copy", dst, src.data(), copy_words_total * sizeof(unsigned));
  });
  const cudag::binding binds[] = {cudag::bind("dst", first_dst.data())};
  auto e = cudag::instantiate(b.build(), binds);
  const cudag::binding other[] = {cudag::bind("dst", second_dst.data())};
  auto moved = e.instance(other);
  auto s = cudag::make_stream();
  auto poison_both = [&] {
    fill(first_dst, poison);
    fill(second_dst, poison);
  };
  const std::vector<unsigned> copied = pattern(copy_words_total, 0x30000u);
  const std::vector<unsigned> untouched(copy_words_total, poison);
  ASSERT_NO_FATAL_FAILURE(for_each_branch(
      where, poison_both, [&] { launch_and_wait(moved, s.get()); },
      [&] {
        expect_buffer(second_dst, copied, "the instance's destination");
        expect_buffer(first_dst, untouched, "the first exec's destination, under the instance");
      }));
  ASSERT_NO_FATAL_FAILURE(for_each_branch(
      where, poison_both, [&] { launch_and_wait(e, s.get()); },
      [&] {
        expect_buffer(first_dst, copied, "the first exec's destination");
        expect_buffer(second_dst, untouched, "the instance's destination, under the first exec");
      }));
}

TEST(FieldMatrixGpu, MemcpyBytesByUpdateOrReinstantiateInWhileBody) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::while_body);
  cudag::device_buffer<unsigned> src(copy_words_total), dst(copy_words_total);
  upload(src, pattern(copy_words_total, 0x40000u));
  auto make = [&](std::size_t words) {
    cudag::builder b("bytes");
    where.build(b, [&](cudag::builder& g) {
      g.memcpy("copy", dst.data(), src.data(), words * sizeof(unsigned));
    });
    return b.build();
  };
  auto copied = [&](std::size_t words) {
    std::vector<unsigned> v(copy_words_total, poison);
    for (std::size_t i = 0; i < words; ++i) v[i] = 0x40000u + static_cast<unsigned>(i);
    return v;
  };
  auto e = cudag::instantiate(make(40), {});
  auto s = cudag::make_stream();
  auto poison_dst = [&] { fill(dst, poison); };
  auto run = [&] { launch_and_wait(e, s.get()); };
  ASSERT_NO_FATAL_FAILURE(
      for_each_branch(where, poison_dst, run, [&] { expect_buffer(dst, copied(40), "40 words"); }));
  // A 1-D copy's size is updated in place.
  EXPECT_FALSE(e.update_or_reinstantiate(make(100), {}))
      << "a 1-D copy's size must not instantiate again";
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_dst, run,
                                          [&] { expect_buffer(dst, copied(100), "100 words"); }));
}

// CUDA does not update a copy whose kind changes between device-to-device
// and default in place (seen with CUDA 13.0 on an H200: cudaGraphExecUpdate
// refuses it, likely because a default copy's operands count as unified
// memory and an update may not change an operand's memory type). update() refuses,
// naming the node, and leaves the exec as it was; update_or_reinstantiate
// instantiates again.
TEST(FieldMatrixGpu, MemcpyKindByUpdateOrReinstantiateInIfElse) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::if_else);
  cudag::device_buffer<unsigned> src(copy_words_total), dst(copy_words_total);
  upload(src, pattern(copy_words_total, 0x50000u));
  auto make = [&](cudaMemcpyKind kind) {
    cudag::builder b("kind");
    where.build(b, [&](cudag::builder& g) {
      g.memcpy("copy", dst.data(), src.data(), copy_words_total * sizeof(unsigned), kind);
    });
    return b.build();
  };
  auto kind_in_exec = [](const cudag::exec& x, std::size_t body) {
    const auto& branch = std::get<cudag::conditional_node>(x.spec().find("branch")->params);
    return std::get<cudag::memcpy_node>(branch.bodies[body].find("copy")->params).kind;
  };
  auto e = cudag::instantiate(make(cudaMemcpyDeviceToDevice), {});
  auto s = cudag::make_stream();
  auto poison_dst = [&] { fill(dst, poison); };
  auto run = [&] { launch_and_wait(e, s.get()); };
  auto check = [&] { expect_buffer(dst, pattern(copy_words_total, 0x50000u), "copied"); };
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_dst, run, check));
  try {
    e.update(make(cudaMemcpyDefault), {});
    ADD_FAILURE() << "update took a copy's change of kind in place";
  } catch (const cudag::error& refusal) {
    EXPECT_NE(refusal.node().find("copy"), std::string::npos) << refusal.what();
  }
  EXPECT_EQ(kind_in_exec(e, 0), cudaMemcpyDeviceToDevice)
      << "the refused update left the exec as it was";
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_dst, run, check));
  EXPECT_TRUE(e.update_or_reinstantiate(make(cudaMemcpyDefault), {}))
      << "a copy's kind must instantiate again";
  EXPECT_EQ(kind_in_exec(e, 0), cudaMemcpyDefault);
  EXPECT_EQ(kind_in_exec(e, 1), cudaMemcpyDefault);
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_dst, run, check));
}

// ================================================================ memset ==

constexpr std::size_t set_words = 128;

TEST(FieldMatrixGpu, MemsetDestinationByExecCacheExactHitInWhileBody) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::while_body);
  cudag::device_buffer<unsigned> first_dst(set_words), second_dst(set_words);
  constexpr std::size_t width = 100;
  cudag::builder b("set_destination");
  auto dst = b.param<unsigned*>("dst");
  where.build(b, [&](cudag::builder& g) { g.memset("set", dst, 0xA1A1A1A1u, width); });
  const cudag::graph_spec spec = b.build();
  auto s = cudag::make_stream();
  cudag::exec_cache_options options;
  options.stream = s.get();
  cudag::exec_cache cache(options);
  auto poison_both = [&] {
    fill(first_dst, poison);
    fill(second_dst, poison);
  };
  const std::vector<unsigned> set = memset_reference(set_words, 0xA1A1A1A1u, width, 1, 0);
  const std::vector<unsigned> untouched(set_words, poison);

  const cudag::binding first[] = {cudag::bind("dst", first_dst.data())};
  cudag::exec& e = cache.acquire(spec, first);
  ASSERT_NO_FATAL_FAILURE(for_each_branch(
      where, poison_both, [&] { launch_and_wait(e, s.get()); },
      [&] {
        expect_buffer(first_dst, set, "the first destination");
        expect_buffer(second_dst, untouched, "the second destination, not yet bound");
      }));
  const cudag::binding second[] = {cudag::bind("dst", second_dst.data())};
  cudag::exec& again = cache.acquire(spec, second);
  EXPECT_EQ(&again, &e);
  expect_cache(cache, 1, 0, 1);
  ASSERT_NO_FATAL_FAILURE(for_each_branch(
      where, poison_both, [&] { launch_and_wait(again, s.get()); },
      [&] {
        expect_buffer(second_dst, set, "the second destination after the exact hit");
        expect_buffer(first_dst, untouched, "the first destination after the exact hit");
      }));
}

TEST(FieldMatrixGpu, MemsetValueByRebindInIfBody) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::if_body);
  cudag::device_buffer<unsigned> dst(set_words);
  constexpr std::size_t width = 90;
  cudag::builder b("set_value");
  auto value = b.param<unsigned>("value");
  where.build(b, [&](cudag::builder& g) { g.memset("set", dst.data(), value, width); });
  const cudag::binding binds[] = {cudag::bind("value", 0x11223344u)};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  auto poison_dst = [&] { fill(dst, poison); };
  auto run = [&] { launch_and_wait(e, s.get()); };
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_dst, run, [&] {
    expect_buffer(dst, memset_reference(set_words, 0x11223344u, width, 1, 0), "the first value");
  }));
  EXPECT_EQ(e.rebind("value", 0x55667788u), cudag::rebind_path::whole_graph_update);
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_dst, run, [&] {
    expect_buffer(dst, memset_reference(set_words, 0x55667788u, width, 1, 0), "the rebound value");
  }));
}

// The element size is the fill value's size: the same byte (0xA5) in fills
// of 1, 2 and 4 bytes, the same width in elements, covers 1, 2 and 4 times
// as many bytes.
TEST(FieldMatrixGpu, MemsetElementSizeByAddToCaptureInSwitchBody) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::switch_body);
  constexpr std::size_t total = 128, width = 24;
  cudag::device_buffer<std::uint8_t> bytes(total);
  auto make = [&](unsigned element_size) {
    cudag::builder b("element_size");
    where.build(b, [&](cudag::builder& g) {
      if (element_size == 1)
        g.memset("set", bytes.data(), std::uint8_t{0xA5}, width);
      else if (element_size == 2)
        g.memset("set", bytes.data(), std::uint16_t{0xA5A5}, width);
      else
        g.memset("set", bytes.data(), 0xA5A5A5A5u, width);
    });
    return b.build();
  };
  auto s = cudag::make_stream();
  auto poison_bytes = [&] { fill(bytes, std::uint8_t{0xEE}); };
  for (const unsigned element_size : {1u, 2u, 4u}) {
    SCOPED_TRACE("element size " + std::to_string(element_size));
    captured_graph c = capture(make(element_size), {}, s.get());
    std::vector<std::uint8_t> want(total, 0xEE);
    for (std::size_t i = 0; i < width * element_size; ++i) want[i] = 0xA5;
    ASSERT_NO_FATAL_FAILURE(for_each_branch(
        where, poison_bytes, [&] { launch_native_and_wait(c.exec.get(), s.get()); },
        [&] { expect_buffer(bytes, want, "captured memset"); }));
  }
}

TEST(FieldMatrixGpu, MemsetWidthByExecCacheTopologyHitInIfInsideWhile) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::if_in_while);
  cudag::device_buffer<unsigned> dst(set_words);
  auto make = [&](std::size_t width) {
    cudag::builder b("set_width");
    auto po = b.param<unsigned*>("dst");
    where.build(b, [&](cudag::builder& g) { g.memset("set", po, 0xB4B4B4B4u, width); });
    return b.build();
  };
  auto s = cudag::make_stream();
  cudag::exec_cache_options options;
  options.stream = s.get();
  cudag::exec_cache cache(options);
  const cudag::binding binds[] = {cudag::bind("dst", dst.data())};
  auto poison_dst = [&] { fill(dst, poison); };

  cudag::exec& e = cache.acquire(make(16), binds);
  ASSERT_NO_FATAL_FAILURE(for_each_branch(
      where, poison_dst, [&] { launch_and_wait(e, s.get()); },
      [&] { expect_buffer(dst, memset_reference(set_words, 0xB4B4B4B4u, 16, 1, 0), "16 words"); }));
  cudag::exec& wider = cache.acquire(make(40), binds);
  EXPECT_EQ(&wider, &e);
  const cudag::exec_cache_stats& st = cache.stats();
  EXPECT_EQ(st.exact_hits, 0u);
  // CUDA updates a 1-D memset's width where the new work fits the node's
  // resources, and refuses otherwise: the cache then instantiates in place.
  EXPECT_EQ(st.hits + st.refused_updates, 1u) << cache.last_refusal();
  EXPECT_EQ(st.misses, 1u + st.refused_updates);
  std::printf("memset width 16 -> 40 words in a nested body: %s\n",
              st.hits ? "updated in place" : "refused by CUDA, instantiated again");
  ASSERT_NO_FATAL_FAILURE(for_each_branch(
      where, poison_dst, [&] { launch_and_wait(wider, s.get()); },
      [&] {
        expect_buffer(dst, memset_reference(set_words, 0xB4B4B4B4u, 40, 1, 0),
                      "40 words after the topology hit");
      }));
}

TEST(FieldMatrixGpu, MemsetHeightByUpdateOrReinstantiateInChild) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::child);
  constexpr std::size_t pitch = 64, width = 8, total = pitch / 4 * 5;
  cudag::device_buffer<unsigned> dst(total);
  auto make = [&](std::size_t height) {
    cudag::builder b("set_height");
    where.build(b, [&](cudag::builder& g) {
      g.memset_2d("set", dst.data(), pitch, 0xC5C5C5C5u, width, height);
    });
    return b.build();
  };
  auto e = cudag::instantiate(make(2), {});
  auto s = cudag::make_stream();
  auto poison_dst = [&] { fill(dst, poison); };
  auto run = [&] { launch_and_wait(e, s.get()); };
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_dst, run, [&] {
    expect_buffer(dst, memset_reference(total, 0xC5C5C5C5u, width, 2, pitch), "2 rows");
  }));
  // CUDA changes no dimension of a 2-D memset in place.
  EXPECT_TRUE(e.update_or_reinstantiate(make(4), {}))
      << "a 2-D memset's height must instantiate again";
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_dst, run, [&] {
    expect_buffer(dst, memset_reference(total, 0xC5C5C5C5u, width, 4, pitch), "4 rows");
  }));
}

TEST(FieldMatrixGpu, MemsetPitchByImportInChild) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::child);
  constexpr std::size_t width = 8, height = 3, total = 96 / 4 * height;
  cudag::device_buffer<unsigned> dst(total);
  auto make = [&](std::size_t pitch) {
    cudag::builder b("set_pitch");
    where.build(b, [&](cudag::builder& g) {
      g.memset_2d("set", dst.data(), pitch, 0xD6D6D6D6u, width, height);
    });
    return b.build();
  };
  auto s = cudag::make_stream();
  auto poison_dst = [&] { fill(dst, poison); };
  for (const std::size_t pitch : {std::size_t{64}, std::size_t{96}}) {
    SCOPED_TRACE("pitch " + std::to_string(pitch));
    imported_graph r = round_trip(make(pitch), {});
    const cudag::node* child = r.spec.find("child_0");
    ASSERT_NE(child, nullptr);
    const cudag::node* set = std::get<cudag::child_node>(child->params).graph->find("memset_0");
    ASSERT_NE(set, nullptr);
    EXPECT_EQ(std::get<cudag::memset_node>(set->params).pitch_bytes, pitch)
        << "read back by import";
    ASSERT_NO_FATAL_FAILURE(for_each_branch(
        where, poison_dst, [&] { launch_and_wait(r.exec, s.get()); },
        [&] {
          expect_buffer(dst, memset_reference(total, 0xD6D6D6D6u, width, height, pitch),
                        "the imported graph");
        }));
  }
}

// ================================================================== host ==

TEST(FieldMatrixGpu, HostCallableByUpdateAtTopLevel) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::top);
  std::atomic<unsigned> seen{poison};
  auto make = [&](bool first) {
    cudag::builder b("host_callable");
    auto value = b.param<unsigned>("value");
    where.build(b, [&](cudag::builder& g) {
      auto plus_1000 = [&seen](unsigned v) { seen = 1000 + v; };
      auto plus_2000 = [&seen](unsigned v) { seen = 2000 + v; };
      if (first) {
        g.host("note", plus_1000, value);
      } else {
        g.host("note", plus_2000, value);
      }
    });
    return b.build();
  };
  const cudag::binding binds[] = {cudag::bind("value", 7u)};
  auto e = cudag::instantiate(make(true), binds);
  auto s = cudag::make_stream();
  auto poison_seen = [&] { seen = poison; };
  auto run = [&] { launch_and_wait(e, s.get()); };
  ASSERT_NO_FATAL_FAILURE(
      for_each_branch(where, poison_seen, run, [&] { EXPECT_EQ(seen.load(), 1007u); }));
  e.update(make(false), binds);
  ASSERT_NO_FATAL_FAILURE(for_each_branch(
      where, poison_seen, run, [&] { EXPECT_EQ(seen.load(), 2007u) << "the updated callable"; }));
}

TEST(FieldMatrixGpu, HostArgumentsByEagerRunInChild) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::child);
  std::atomic<unsigned> seen{poison};
  cudag::builder b("host_arguments");
  auto value = b.param<unsigned>("value");
  where.build(b, [&](cudag::builder& g) {
    auto note = [&seen](unsigned v, unsigned bias) { seen = v + bias; };
    g.host("note", note, value, 3000u);
  });
  const cudag::graph_spec spec = b.build();
  auto s = cudag::make_stream();
  auto poison_seen = [&] { seen = poison; };
  for (const unsigned v : {5u, 9u}) {
    SCOPED_TRACE("value = " + std::to_string(v));
    const cudag::binding binds[] = {cudag::bind("value", v)};
    ASSERT_NO_FATAL_FAILURE(for_each_branch(
        where, poison_seen,
        [&] {
          cudag::eager_run run = cudag::run_eagerly(spec, binds, s.get());
          CUDAG_EXPECT_CUDA(cudaGetLastError());
          run.synchronize();
          CUDAG_EXPECT_CUDA(cudaGetLastError());
        },
        [&] { EXPECT_EQ(seen.load(), 3000u + v); }));
  }
}

// ================================================================ events ==
// An event never recorded is "complete" too: every check is a race the new
// event must win. A producer busy-waits `slow_ms` before it writes; waiting
// on an event that the graph did not record (or that the graph does not
// wait on) returns before that write, and the poison is read.

constexpr int produced = 8191;
constexpr int slow_ms = 30;

TEST(FieldMatrixGpu, EventRecordByRebindAtTopLevel) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::top);
  cudag::device_buffer<int> slot(1);
  auto first = cudag::make_event(), second = cudag::make_event();
  cudag::builder b("record");
  auto ev = b.param<cudaEvent_t>("event");
  where.build(b, [&](cudag::builder& g) {
    auto write = g.kernel("slow_write", CUDAG_KERNEL(spin_then_write), cudag::launch(1, 1),
                          slot.data(), produced, slow_ms);
    auto rec = g.record("ready", ev);
    g.edge(write, rec);
  });
  const cudag::binding binds[] = {cudag::bind("event", first.get())};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  auto poison_slot = [&] { fill(slot, -1); };
  // Launches, waits on the host for `recorded` alone, reads the slot, then
  // waits for the graph.
  auto run_waiting_for = [&](cudaEvent_t recorded) {
    return [&, recorded] {
      e.launch(s.get());
      CUDAG_EXPECT_CUDA(cudaGetLastError());
      CUDAG_EXPECT_CUDA(cudaEventSynchronize(recorded));
      const int seen = read_back(slot)[0];  // the launch stream is not waited for
      e.synchronize(s.get());
      CUDAG_EXPECT_CUDA(cudaGetLastError());
      EXPECT_EQ(seen, produced) << "the event was not recorded after the write";
    };
  };
  auto check_slot = [&] { EXPECT_EQ(read_back(slot)[0], produced); };
  ASSERT_NO_FATAL_FAILURE(
      for_each_branch(where, poison_slot, run_waiting_for(first.get()), check_slot));
  EXPECT_EQ(e.rebind("event", second.get()), cudag::rebind_path::node_setters);
  ASSERT_NO_FATAL_FAILURE(
      for_each_branch(where, poison_slot, run_waiting_for(second.get()), check_slot));
}

TEST(FieldMatrixGpu, EventWaitByUpdateInChild) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::child);
  cudag::device_buffer<int> slot(1), observed(1);
  auto first = cudag::make_event(), second = cudag::make_event();
  auto make = [&](cudaEvent_t event) {
    cudag::builder b("wait");
    where.build(b, [&](cudag::builder& g) {
      auto hold = g.wait("hold", event);
      auto copy = g.memcpy("copy", observed.data(), slot.data(), sizeof(int));
      g.edge(hold, copy);
    });
    return b.build();
  };
  auto e = cudag::instantiate(make(first.get()), {});
  auto producer = cudag::make_stream(), consumer = cudag::make_stream();
  auto poison_both = [&] {
    fill(slot, -1);
    fill(observed, -1);
  };
  // The producer, by hand: a slow write, then `event` recorded; the graph
  // waits on its event, then copies the slot.
  auto run_producing = [&](cudaEvent_t event) {
    return [&, event] {
      spin_then_write<<<1, 1, 0, producer.get()>>>(slot.data(), produced, slow_ms);
      CUDAG_EXPECT_CUDA(cudaGetLastError());
      CUDAG_EXPECT_CUDA(cudaEventRecord(event, producer.get()));
      launch_and_wait(e, consumer.get());
      CUDAG_EXPECT_CUDA(cudaStreamSynchronize(producer.get()));
    };
  };
  auto check_observed = [&] {
    EXPECT_EQ(read_back(observed)[0], produced) << "the copy did not wait for the producer's event";
  };
  ASSERT_NO_FATAL_FAILURE(
      for_each_branch(where, poison_both, run_producing(first.get()), check_observed));
  // `first` stays complete from the run above: a wait left on it passes at once.
  e.update(make(second.get()), {});
  ASSERT_NO_FATAL_FAILURE(
      for_each_branch(where, poison_both, run_producing(second.get()), check_observed));
}

// ============================================================= mem alloc ==

// The size is the field changed; the count the kernels use follows
// parameter `n` (a binding, not a field of the spec), so that the new size
// is used whole.
TEST(FieldMatrixGpu, AllocSizeByUpdateOrReinstantiateInChild) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::child);
  constexpr int small = 64, large = 384;
  constexpr std::size_t total = 512;
  cudag::device_buffer<unsigned> out(total);
  auto make = [&](int count) {
    cudag::builder b("alloc_size");
    auto n = b.param<int>("n");
    where.build(b, [&](cudag::builder& g) {
      auto [alloc, scratch] = g.alloc<unsigned>("scratch", static_cast<std::size_t>(count));
      auto stamp =
          g.kernel("stamp", CUDAG_KERNEL(stamp_up), cudag::launch_over(n, 64), scratch, 4000u, n);
      auto copy = g.kernel("copy", CUDAG_KERNEL(copy_words), cudag::launch_over(n, 64), out.data(),
                           scratch, n);
      auto release = g.free("release", scratch);
      g.chain(alloc, stamp, copy, release);
    });
    return b.build();
  };
  const cudag::binding small_binds[] = {cudag::bind("n", small)};
  auto e = cudag::instantiate(make(small), small_binds);
  EXPECT_THROW((void)e.buffer_view("stage/scratch", large, sizeof(unsigned)), cudag::error)
      << "past the end of a " << small << "-word allocation";
  auto s = cudag::make_stream();
  auto poison_out = [&] { fill(out, poison); };
  auto run = [&] { launch_and_wait(e, s.get()); };
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_out, run, [&] {
    expect_buffer(out, stamped(total, 4000u, small), "64 words");
  }));
  const cudag::binding large_binds[] = {cudag::bind("n", large)};
  EXPECT_TRUE(e.update_or_reinstantiate(make(large), large_binds))
      << "CUDA cannot resize an allocation";
  EXPECT_NO_THROW((void)e.buffer_view("stage/scratch", large, sizeof(unsigned)));
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_out, run, [&] {
    expect_buffer(out, stamped(total, 4000u, large), "384 words");
  }));
}

// =========================================================== conditional ==

TEST(FieldMatrixGpu, ConditionValueSetByAKernelByInstanceAtTopLevel) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::top);
  cudag::device_buffer<int> out(1);
  cudag::builder b("chosen");
  auto choice = b.param<unsigned>("choice");
  auto branch = b.condition("branch");
  where.build(b, [&](cudag::builder& g) {
    cudag::builder then_body("then"), else_body("else");
    then_body.kernel("write", CUDAG_KERNEL(write_value), cudag::launch(1, 1), out.data(), 111);
    else_body.kernel("write", CUDAG_KERNEL(write_value), cudag::launch(1, 1), out.data(), 222);
    auto decide = g.kernel("decide", CUDAG_KERNEL(choose), cudag::launch(1, 1), branch, choice);
    auto pick = g.if_else("pick", branch, then_body.build(), else_body.build());
    g.edge(decide, pick);
  });
  const cudag::binding binds[] = {cudag::bind("choice", 1u)};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  auto poison_out = [&] { fill(out, -1); };
  auto expect_taken = [&](cudag::exec& x, int want, const char* what) {
    ASSERT_NO_FATAL_FAILURE(for_each_branch(
        where, poison_out, [&] { launch_and_wait(x, s.get()); },
        [&] { EXPECT_EQ(read_back(out)[0], want) << what; }));
  };
  ASSERT_NO_FATAL_FAILURE(expect_taken(e, 111, "choice 1: the then branch"));
  const cudag::binding other[] = {cudag::bind("choice", 0u)};
  auto elsewise = e.instance(other);
  ASSERT_NO_FATAL_FAILURE(expect_taken(elsewise, 222, "the instance, choice 0: the else branch"));
  ASSERT_NO_FATAL_FAILURE(
      expect_taken(e, 111, "the first exec after the instance: still the then branch"));
}

// A condition's default is given to its handle when the graph is made;
// CUDA has no call that changes it on an existing handle.
TEST(FieldMatrixGpu, ConditionDefaultByUpdateOrReinstantiateAtTopLevel) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::top);
  cudag::device_buffer<int> out(1);
  auto make = [&](unsigned default_case) {
    cudag::builder b("default");
    auto which = b.condition("which", default_case);
    where.build(b, [&](cudag::builder& g) {
      std::vector<cudag::graph_spec> cases;
      for (int k = 0; k < 3; ++k) {
        cudag::builder body("case" + std::to_string(k));
        body.kernel("write", CUDAG_KERNEL(write_value), cudag::launch(1, 1), out.data(), 1000 + k);
        cases.push_back(body.build());
      }
      g.switch_case("pick", which, std::move(cases));
    });
    return b.build();
  };
  auto e = cudag::instantiate(make(1), {});
  auto s = cudag::make_stream();
  auto poison_out = [&] { fill(out, -1); };
  auto run = [&] { launch_and_wait(e, s.get()); };
  ASSERT_NO_FATAL_FAILURE(
      for_each_branch(where, poison_out, run, [&] { EXPECT_EQ(read_back(out)[0], 1001); }));
  EXPECT_TRUE(e.update_or_reinstantiate(make(2), {}))
      << "a condition's default must instantiate again";
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_out, run, [&] {
    EXPECT_EQ(read_back(out)[0], 1002) << "case 2, the new default";
  }));
}

TEST(FieldMatrixGpu, ConditionalBodyByUpdateInIfInsideWhile) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::if_in_while);
  cudag::device_buffer<int> out(1);
  auto make = [&](int value) {
    cudag::builder b("body");
    where.build(b, [&](cudag::builder& g) {
      g.kernel("write", CUDAG_KERNEL(write_value), cudag::launch(1, 1), out.data(), value);
    });
    return b.build();
  };
  auto e = cudag::instantiate(make(111), {});
  auto s = cudag::make_stream();
  auto poison_out = [&] { fill(out, -1); };
  auto run = [&] { launch_and_wait(e, s.get()); };
  ASSERT_NO_FATAL_FAILURE(
      for_each_branch(where, poison_out, run, [&] { EXPECT_EQ(read_back(out)[0], 111); }));
  e.update(make(222), {});
  ASSERT_NO_FATAL_FAILURE(for_each_branch(
      where, poison_out, run, [&] { EXPECT_EQ(read_back(out)[0], 222) << "the updated body"; }));
}

// ================================================================= child ==

TEST(FieldMatrixGpu, ChildValueByUpdateInChild) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::child);
  cudag::device_buffer<unsigned> out(stamp_words);
  auto make = [&](unsigned base) {
    cudag::builder b("child_update");
    where.build(b, [&](cudag::builder& g) {
      g.kernel("stamp", CUDAG_KERNEL(stamp_up), stamp_launch, out.data(), base, stamp_count);
    });
    return b.build();
  };
  auto e = cudag::instantiate(make(100u), {});
  auto s = cudag::make_stream();
  auto poison_out = [&] { fill(out, poison); };
  auto run = [&] { launch_and_wait(e, s.get()); };
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_out, run, [&] {
    expect_buffer(out, stamped(stamp_words, 100u, stamp_count), "base 100");
  }));
  e.update(make(300u), {});
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_out, run, [&] {
    expect_buffer(out, stamped(stamp_words, 300u, stamp_count), "base 300 after the update");
  }));
}

TEST(FieldMatrixGpu, ChildValueByRebindInChildInsideIf) {
  CUDAG_REQUIRE_GPU();
  const frame where(placement::child_in_if);
  cudag::device_buffer<unsigned> out(stamp_words);
  cudag::builder b("child_rebind");
  auto base = b.param<unsigned>("base");
  where.build(b, [&](cudag::builder& g) {
    g.kernel("stamp", CUDAG_KERNEL(stamp_up), stamp_launch, out.data(), base, stamp_count);
  });
  const cudag::binding binds[] = {cudag::bind("base", 100u)};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  auto poison_out = [&] { fill(out, poison); };
  auto run = [&] { launch_and_wait(e, s.get()); };
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_out, run, [&] {
    expect_buffer(out, stamped(stamp_words, 100u, stamp_count), "base 100");
  }));
  EXPECT_EQ(e.rebind("base", 300u), cudag::rebind_path::whole_graph_update);
  ASSERT_NO_FATAL_FAILURE(for_each_branch(where, poison_out, run, [&] {
    expect_buffer(out, stamped(stamp_words, 300u, stamp_count), "base 300 after the rebind");
  }));
}
