#pragma once
// cuBLAS GEMMs as graph nodes. cuBLAS has no graph-node API: its calls are
// recorded by stream capture into a child graph (a captured node), recorded
// again when a matrix pointer or alpha/beta is rebound, and the exec swaps
// the new child graph in place (no re-instantiation).
//
//   auto a = b.param<const float*>("a");
//   auto alpha = b.param<float>("alpha");
//   cudag::blas::gemm(b, "project", {.m = 64, .n = 32, .k = 16,
//                                    .order = cudag::blas::layout::row_major},
//                     a, d_b, c, alpha, 0.0f);
//   ... exec.rebind("alpha", 0.5f);   // re-records this node only
//
// Computes C = alpha * op(A) * op(B) + beta * C with float accumulation
// (CUBLAS_COMPUTE_32F): float inputs, or __half / __nv_bfloat16 inputs with
// a float or same-typed output (cublasGemmEx, cublasGemmStridedBatchedEx).
// Row-major matrices are passed to cuBLAS as the transposed column-major
// problem (C^T = op(B)^T op(A)^T), so no data moves.
//
// Each node owns a cuBLAS handle and a workspace (cublasSetWorkspace, as
// capture requires: cuBLAS must not allocate while captured). Both are
// created at the first recording, i.e. when the spec is lowered on a GPU,
// and live as long as any spec or exec holding the node.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "cudag/arguments.hpp"
#include "cudag/builder.hpp"
#include "cudag/error.hpp"

namespace cudag::blas {

enum class layout { column_major, row_major };
enum class transpose { no, yes };
enum class element { f32, f16, bf16 };

struct gemm_desc {
  int m = 0;  ///< rows of op(A) and C
  int n = 0;  ///< columns of op(B) and C
  int k = 0;  ///< columns of op(A), rows of op(B)
  transpose trans_a = transpose::no;
  transpose trans_b = transpose::no;
  layout order = layout::column_major;
  element input = element::f32;   ///< type of A and B
  element output = element::f32;  ///< type of C
  /// Leading dimensions as stored in `order`; 0: tightly packed.
  int lda = 0, ldb = 0, ldc = 0;
  /// More than 1: `batch` GEMMs, matrices `stride_*` elements apart.
  int batch = 1;
  /// 0: one matrix right after the other.
  long long stride_a = 0, stride_b = 0, stride_c = 0;
  /// cuBLAS recommends 32 MiB on Hopper.
  std::size_t workspace_bytes = std::size_t(32) << 20;
};

/// "gemm f32->f32 row-major 64x32x16 NT batch 4", for pictures and messages.
[[nodiscard]] std::string describe(const gemm_desc& desc);

/// The column-major cuBLAS problem that computes `desc`.
struct cublas_gemm_arguments {
  cublasOperation_t trans_a, trans_b;  ///< of cuBLAS's first and second operand
  int m, n, k;
  int lda, ldb, ldc;
  long long stride_a, stride_b, stride_c;
  bool operands_swapped;  ///< row-major: cuBLAS's first operand is B
};
/// Validates `desc` (throws cudag::error naming the field) and maps it to cuBLAS.
[[nodiscard]] cublas_gemm_arguments to_cublas(const gemm_desc& desc);

/// A cuBLAS handle for use inside stream capture, with its own workspace,
/// created at first use. Created in relaxed capture mode, so that the
/// allocations cuBLAS makes while a capture is in progress are allowed.
class capture_handle {
 public:
  explicit capture_handle(std::size_t workspace_bytes = std::size_t(32) << 20);
  ~capture_handle();
  capture_handle(const capture_handle&) = delete;
  capture_handle& operator=(const capture_handle&) = delete;

  /// The handle, set to `stream` and this workspace. Hold `lock()` while
  /// the returned handle is in use: one handle serves one call at a time.
  [[nodiscard]] cublasHandle_t bind(cudaStream_t stream, std::string_view what);
  [[nodiscard]] std::unique_lock<std::mutex> lock() { return std::unique_lock(mutex_); }

 private:
  std::mutex mutex_;
  std::size_t workspace_bytes_;
  cublasHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  int device_ = -1;
};

/// Throws cudag::error "call failed for node 'what': CUBLAS_STATUS_..." .
void cublas_check(cublasStatus_t status, const char* call, std::string_view what);

/// The callable form of a GEMM, for captured nodes of any front end:
/// record(stream, A, B, C, alpha, beta) issues the GEMM on `stream`.
/// Copies share one handle and workspace.
class gemm_call {
 public:
  /// `label`: the node's name, for messages.
  explicit gemm_call(const gemm_desc& desc, std::string label = "gemm");
  void operator()(cudaStream_t stream, const void* a, const void* b, void* c, float alpha,
                  float beta) const;
  [[nodiscard]] const gemm_desc& desc() const noexcept;

  struct state;

 private:
  std::shared_ptr<state> state_;
};

/// The element code of a matrix pointer type; none for void pointers
/// (unchecked).
template <class Pointer>
[[nodiscard]] constexpr std::optional<element> element_of() {
  using T = std::remove_cv_t<std::remove_pointer_t<Pointer>>;
  static_assert(std::is_pointer_v<Pointer>, "cudag::blas::gemm: matrices are passed as pointers");
  // Only for a pointer: one mistake, one error.
  static_assert(!std::is_pointer_v<Pointer> || std::is_void_v<T> || std::is_same_v<T, float> ||
                    std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>,
                "cudag::blas::gemm: matrices hold float, __half or __nv_bfloat16");
  if constexpr (std::is_same_v<T, float>) return element::f32;
  else if constexpr (std::is_same_v<T, __half>) return element::f16;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return element::bf16;
  else return std::nullopt;
}

/// Throws cudag::error naming the node when a pointer's element type
/// contradicts the descriptor.
void check_element(std::string_view node, char matrix, std::optional<element> actual,
                   element expected);

/// Adds a GEMM node: C = alpha * op(A) * op(B) + beta * C. A, B: pointers,
/// pointer parameters or buffers (const or not); C: non-const; alpha, beta:
/// float literals or float parameters. Rebinding any of them re-records
/// this node only.
template <class A, class B, class C, class Alpha = float, class Beta = float>
node_ref gemm(builder& b, std::string name, const gemm_desc& desc, A&& a, B&& bm, C&& c,
              Alpha&& alpha = 1.0f, Beta&& beta = 0.0f) {
  static_assert(passes_as<const void*, A> && passes_as<const void*, B>,
                "cudag::blas::gemm: A and B must be device pointers, pointer parameters or buffers");
  static_assert(passes_as<void*, C>,
                "cudag::blas::gemm: C must be a pointer to non-const (it is written)");
  static_assert(passes_as<float, Alpha> && passes_as<float, Beta>,
                "cudag::blas::gemm: alpha and beta are float (a float literal or param<float>)");
  // Nothing more is instantiated once an operand is refused: one error.
  if constexpr (!(passes_as<const void*, A> && passes_as<const void*, B> && passes_as<void*, C> &&
                  passes_as<float, Alpha> && passes_as<float, Beta>)) {
    detail::refused_call();
  } else {
    (void)to_cublas(desc);  // refuse a bad descriptor where the node is declared
    check_element(name, 'A', element_of<argument_type<A>>(), desc.input);
    check_element(name, 'B', element_of<argument_type<B>>(), desc.input);
    check_element(name, 'C', element_of<argument_type<C>>(), desc.output);
    gemm_call call(desc, name);
    std::string what = describe(desc);
    node_ref node = b.captured(
        std::move(name), std::move(what),
        [call](cudaStream_t s, const auto& pa, const auto& pb, const auto& pc, const auto& al,
               const auto& be) { call(s, pa, pb, pc, float(al), float(be)); },
        std::forward<A>(a), std::forward<B>(bm), std::forward<C>(c), std::forward<Alpha>(alpha),
        std::forward<Beta>(beta));
    // The race check: A and B are only read (C is read and written).
    node.access(0, access_mode::read).access(1, access_mode::read);
    return node;
  }
}

}  // namespace cudag::blas
