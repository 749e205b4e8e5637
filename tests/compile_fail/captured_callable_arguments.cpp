// A captured callable takes the capture stream first; this one does not.
// expect-error: callable_does_not_accept_arguments<.*"record_gemm"\}, .*, CUstream_st\*, float\*, int>
// expect-error gcc: callable_does_not_accept_arguments<.*Node = .*"record_gemm"\}; .*ArgumentTypes = \{CUstream_st\*, float\*, int\}\]
// expect-name: record_gemm
// expect-error clang: callable_does_not_accept_arguments<\{"record_gem\.\.\."\}
#include "common.hpp"
constexpr auto g =
    graph(captured<"record_gemm", "gemm">([](float* p, int count) { (void)p, (void)count; }, x, n));
void use(float* d) { use_graph(g, x = d, n = 4); }
