// The graph allocates "staging", not "stage".
// expect-error: graph_allocates_no_buffer<.*"stage"
// expect-name: stage
// expect-error clang: '~graph_allocates_no_buffer' has been explicitly marked deleted
#include "common.hpp"
constexpr auto staging = buffer<"staging", float>;
constexpr auto stage = buffer<"stage", float>;
constexpr auto g = graph(mem_alloc<"make">(staging, 64),
                         kernel<"fill", cf::scale>(1, 32, staging, 2.0f, 64), edge<"make", "fill">);
void read_back() {
  auto e = instantiate(g);
  (void)e.buffer(stage);
}
