// Valid DSL graphs of every node kind, used every way a program uses them,
// compiled with warnings as errors: by g++ (-Wall -Wextra -Werror) and by
// nvcc (-Werror all-warnings, the host compiler with -Wall -Wextra -Werror),
// with none of the project's own warning suppressions. No warning may come
// from cudag's headers into a user's translation unit. Compiled only (never
// run): tests/dsl/meson.build.
//
// Graphs with internal linkage (an anonymous namespace: nvcc warned #114-D
// "function was referenced but not defined" for each instantiate and to_spec
// of such a graph) and with external linkage; kernels are __global__
// functions under nvcc, host functions of the same signature under g++.
#include <cstddef>
#include <optional>
#include <utility>

#include "cudag/dsl.hpp"

#if defined(__CUDACC__)
#define CUDAG_TEST_KERNEL __global__
#else
#define CUDAG_TEST_KERNEL
#endif

CUDAG_TEST_KERNEL void scale_kernel(float* x, float a, int count) {
#if defined(__CUDA_ARCH__)
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) x[i] *= a;
#else
  for (int i = 0; i < count; ++i) x[i] *= a;
#endif
}
CUDAG_TEST_KERNEL void sum_kernel(const float* x, float* out, std::size_t count) {
  float s = 0.0f;
  for (std::size_t i = 0; i < count; ++i) s += x[i];
  *out = s;
}
CUDAG_TEST_KERNEL void set_condition(cudaGraphConditionalHandle h, const unsigned* value) {
#if defined(__CUDA_ARCH__)
  cudaGraphSetConditional(h, *value);
#else
  (void)h, (void)value;
#endif
}

// External linkage.
inline constexpr auto shared_graph =
    cudag::dsl::graph(cudag::dsl::kernel<"scale", scale_kernel>(1, 32, cudag::dsl::param<"x", float*>,
                                                                 2.0f, cudag::dsl::param<"n", int>));

namespace {

using namespace cudag::dsl;

constexpr int n = 64;
constexpr auto out = param<"out", float*>;
constexpr auto side = param<"side", float*>;
constexpr auto count = param<"count", int>;
constexpr auto event = param<"event", cudaEvent_t>;
constexpr auto choice = param<"choice", const unsigned*>;
constexpr auto runs = param<"runs", int*>;
constexpr auto tmp = buffer<"tmp", float>;
constexpr auto take = condition<"take">;
constexpr auto which = condition<"which">;
constexpr auto more = condition<"more", 1>;

constexpr auto inner = graph(kernel<"inner_double", scale_kernel>(1, n, out, 2.0f, n));
constexpr auto body = graph(kernel<"times_ten", scale_kernel>(1, n, out, 10.0f, n));
constexpr auto other = graph(memset<"clear_side">(side, 0.0f, n));

// Every node kind. inline: a class holding exec_of<g> needs g (and whatever
// g's type names: kernels, edge tables) of external linkage, or g++ warns
// -Wsubobject-linkage under nvcc (whose host pass turns an anonymous
// namespace into a named one).
// clang-format off
inline constexpr auto every_kind = graph(
    if_then<"maybe">(take, body),
    if_else<"either">(more, body, other),
    while_loop<"again">(condition<"again_c", 0>, body),
    switch_case<"pick">(which, body, other, inner),
    mem_alloc<"alloc">(tmp, n),
    memcpy<"drain">(out, tmp, n * sizeof(float)),
    memset<"set_tmp">(tmp, 1.5f, n),
    memset_2d<"set_rows">(side, 64, 0u, 8, 8),
    kernel<"work", scale_kernel>(blocks_for(count, 32), 32, tmp, 2.0f, count),
    kernel<"sum", sum_kernel>(1, 1, tmp, side, std::size_t{n}),
    mem_free<"release">(tmp),
    host<"note">([](int* c) { ++*c; }, runs),
    host<"bare">([] {}),  // no arguments
    child<"sub">(inner),
    captured<"lib", "scale">(
        [](cudaStream_t s, float* p) {
#if defined(__CUDACC__)
          scale_kernel<<<1, n, 0, s>>>(p, 3.0f, n);
#else
          (void)s, (void)p;
#endif
        }, side),
    empty<"join">(),
    record<"rec">(event),
    wait<"hold">(event),
    kernel<"decide", set_condition>(1, 1, take, choice),
    kernel<"decide_which", set_condition>(1, 1, which, choice),
    kernel<"decide_more", set_condition>(1, 1, more, choice),
    chain<"alloc", "set_tmp", "work", "sum", "drain", "release">,
    fan_out<"release", "either", "again">,
    fan_in<"pick", "either", "again">,
    edge<"set_rows", "pick">,
    edges<"drain -> sub -> maybe -> join -> note", "hold -> decide -> maybe",
          "decide_which -> pick", "decide_more -> either", "lib -> join -> rec">,
    // Nodes writing one memory (out, side) ordered: no race.
    edges<"either -> again", "pick -> sub", "sum -> set_rows -> lib -> either">);
// clang-format on

// Shape rules: launch dimensions that follow parameters (dims, scaled,
// blocks_for, shared_bytes), next to literals and a literal rule folded;
// programmatic and launch-completion edges into marked kernels.
constexpr auto rows = param<"rows", unsigned>;
inline constexpr auto family = graph(
    kernel<"attn", scale_kernel>(dims(blocks_for(count, 128), rows), dims(scaled(count, 1, 4)),
                                 shared_bytes(scaled(count, 4)), out, 2.0f, count),
    synchronizes_grid_dependencies(
        kernel<"tile", scale_kernel>(dims(scaled(64, 1, 16), 2, 1), dims(32, rows, 1), out, 1.0f, count)),
    synchronizes_grid_dependencies(
        kernel<"plain", scale_kernel>(blocks_for(count, 256), dims(256), shared_bytes(128), out, 1.0f,
                                      count)),
    kernel<"bare", scale_kernel>(count, scaled(count, 1, 8), out, 1.0f, count),
    edge<"attn", "tile", edge_kind::programmatic>, edge<"tile", "plain", edge_kind::launch_completion>,
    chain<"plain", "bare">);

inline constexpr name_pair small_edges[] = {{"first", "second"}};
inline constexpr auto from_table = graph(kernel<"first", scale_kernel>(1, n, out, 1.0f, count),
                                  kernel<"second", scale_kernel>(1, n, out, 1.0f, count),
                                  edges_from<small_edges>);

// Internal linkage through its kernel and its edge table: every entry point.
CUDAG_TEST_KERNEL void local_kernel(float* x, int count) {
  for (int i = 0; i < count; ++i) x[i] = 0.0f;
}
constexpr name_pair local_edges[] = {{"zero", "zero_again"}};
constexpr auto local_graph = graph(kernel<"zero", local_kernel>(1, 1, out, count),
                                   kernel<"zero_again", local_kernel>(1, 1, out, count),
                                   edges_from<local_edges>);

/// An exec stored as a class member, named by the graph object.
struct holds_exec {
  exec_of<from_table> ex;
  std::optional<exec_of<every_kind>> all{};
  int launches = 0;
};

}  // namespace

/// The same at namespace scope, as a class of external linkage.
struct pipeline {
  cudag::dsl::exec_of<shared_graph> ex;
  void run(cudaStream_t stream) { ex.launch(stream); }
};

void use_shared(float* d_x, const cudag::kernel_ref<void(float*, float, int)>& k, cudaStream_t stream) {
  using namespace cudag::dsl;
  auto ex = instantiate(shared_graph, param<"x", float*> = d_x, param<"n", int> = 32);
  ex.launch(stream);
  (void)to_spec(shared_graph);
  // A run-time (NVRTC) kernel: the graph is not a constant.
  const auto rtc = graph(kernel<"rtc_scale">(k, dim3(1), dim3(32), param<"x", float*>, 2.0f, 32));
  auto rex = instantiate(rtc, param<"x", float*> = d_x);
  rex.launch(stream);
  // Its launch following a parameter, with shared bytes that do.
  const auto rtc_family = graph(kernel<"rtc_rows">(
      k, dims(4, param<"n", int>), dims(scaled(param<"n", int>, 2)),
      shared_bytes(scaled(param<"n", int>, 4, 8)), param<"x", float*>, 2.0f, param<"n", int>));
  auto fex = instantiate(rtc_family, param<"x", float*> = d_x, param<"n", int> = 32);
  (void)fex.rebind(param<"n", int> = 64);
  fex.launch(stream);
}

void use_every_kind(float* d_out, float* d_side, cudaEvent_t ev, const unsigned* d_choice,
                    int* host_runs, cudaStream_t stream) {
  auto ex = instantiate(every_kind, out = d_out, side = d_side, count = n, event = ev,
                        choice = d_choice, runs = host_runs);
  ex.launch(stream);
  (void)ex.rebind(out = d_side, count = 2 * n);
  ex.set_enabled<"work">(false);
  (void)ex.enabled<"work">();
  (void)ex.node_handle<"sub">();
  ex.synchronize(stream);
  const cudag::graph_spec spec = to_spec(every_kind, "every_kind");
  (void)spec;
  auto fam = instantiate(family, out = d_out, count = n, rows = 4u);
  (void)fam.rebind(count = 2 * n, rows = 8u);
  fam.launch(stream);
  (void)to_spec(family);
  (void)to_spec(local_graph);
  auto local = instantiate(local_graph, out = d_out, count = n);
  auto local_lowered = lower(local_graph, out = d_out, count = n);
  auto local_with = instantiate_with(local_graph, cudag::instantiate_options{}, out = d_out, count = n);
  auto built = lower(from_table, out = d_out, count = n);
  auto later = instantiate(std::move(built));
  later.launch(stream);
  const cudag::instantiate_options options{};
  auto with = instantiate_with(from_table, options, out = d_out, count = n);
  holds_exec h{instantiate(from_table, out = d_out, count = n)};
  h.ex.launch(stream);
  h.all.reset();
  ++h.launches;
  pipeline p{instantiate(shared_graph, cudag::dsl::param<"x", float*> = d_out,
                         cudag::dsl::param<"n", int> = n)};
  p.run(stream);
}
