#include "cudag/blas.hpp"

#include "cudag/capture.hpp"

namespace cudag::blas {
namespace {

const char* element_name(element e) {
  switch (e) {
    case element::f32: return "f32";
    case element::f16: return "f16";
    case element::bf16: return "bf16";
  }
  return "?";
}

cudaDataType data_type(element e) {
  switch (e) {
    case element::f32: return CUDA_R_32F;
    case element::f16: return CUDA_R_16F;
    case element::bf16: return CUDA_R_16BF;
  }
  return CUDA_R_32F;
}

[[noreturn]] void refuse(const gemm_desc& desc, const std::string& why) {
  throw error("blas::gemm (" + describe(desc) + "): " + why, cudaErrorInvalidValue);
}

// Rows and columns of a matrix as stored, before op().
struct shape {
  int rows, cols;
};

}  // namespace

std::string describe(const gemm_desc& d) {
  std::string text = "gemm ";
  text += element_name(d.input);
  text += "->";
  text += element_name(d.output);
  text += d.order == layout::row_major ? " row-major " : " col-major ";
  text += std::to_string(d.m) + "x" + std::to_string(d.n) + "x" + std::to_string(d.k) + " ";
  text += d.trans_a == transpose::yes ? 'T' : 'N';
  text += d.trans_b == transpose::yes ? 'T' : 'N';
  if (d.batch > 1) text += " batch " + std::to_string(d.batch);
  return text;
}

cublas_gemm_arguments to_cublas(const gemm_desc& d) {
  if (d.m <= 0 || d.n <= 0 || d.k <= 0) refuse(d, "m, n and k must be positive");
  if (d.batch <= 0) refuse(d, "batch must be positive");
  const bool supported = d.input == d.output ||
                         (d.output == element::f32 && d.input != element::f32);
  if (!supported)
    refuse(d, std::string("inputs ") + element_name(d.input) + " with output " +
                  element_name(d.output) + " is not a float-accumulating cuBLAS GEMM");

  const bool ta = d.trans_a == transpose::yes, tb = d.trans_b == transpose::yes;
  const shape a{ta ? d.k : d.m, ta ? d.m : d.k};
  const shape b{tb ? d.n : d.k, tb ? d.k : d.n};
  const shape c{d.m, d.n};
  const bool row = d.order == layout::row_major;
  // The leading dimension spans a column (column-major) or a row (row-major).
  auto leading = [&](int given, shape s, char matrix) {
    const int minimum = row ? s.cols : s.rows;
    if (given == 0) return minimum;
    if (given < minimum)
      refuse(d, std::string("ld") + char(matrix + 32) + " = " + std::to_string(given) +
                    " is less than " + std::to_string(minimum));
    return given;
  };
  const int lda = leading(d.lda, a, 'A'), ldb = leading(d.ldb, b, 'B'), ldc = leading(d.ldc, c, 'C');
  auto stride = [&](long long given, int ld, shape s) {
    return given != 0 ? given : static_cast<long long>(ld) * (row ? s.rows : s.cols);
  };
  const long long sa = stride(d.stride_a, lda, a), sb = stride(d.stride_b, ldb, b),
                  sc = stride(d.stride_c, ldc, c);

  const cublasOperation_t op_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (!row) return {op_a, op_b, d.m, d.n, d.k, lda, ldb, ldc, sa, sb, sc, false};
  // Row-major X seen as column-major is X^T: C^T = op(B)^T op(A)^T.
  return {op_b, op_a, d.n, d.m, d.k, ldb, lda, ldc, sb, sa, sc, true};
}

void check_element(std::string_view node, char matrix, std::optional<element> actual,
                   element expected) {
  if (!actual || *actual == expected) return;
  throw error("blas::gemm node '" + std::string(node) + "': matrix " + matrix + " holds " +
                  element_name(*actual) + " but the descriptor says " + element_name(expected),
              cudaErrorInvalidValue, {}, std::string(node));
}

void cublas_check(cublasStatus_t status, const char* call, std::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  (void)cudaGetLastError();
  throw error(std::string(call) + " failed for node '" + std::string(what) +
                  "': " + cublasGetStatusName(status) + " (" + cublasGetStatusString(status) + ")",
              cudaErrorUnknown, call, std::string(what));
}

// ---------------------------------------------------------- capture_handle --
capture_handle::capture_handle(std::size_t workspace_bytes) : workspace_bytes_(workspace_bytes) {}

capture_handle::~capture_handle() {
  if (handle_) (void)cublasDestroy(handle_);
  if (workspace_) (void)cudaFree(workspace_);
}

cublasHandle_t capture_handle::bind(cudaStream_t stream, std::string_view what) {
  int device = 0;
  CUDAG_CUDA_NODE(cudaGetDevice(&device), what);
  if (handle_ == nullptr) {
    // Creating a handle and its workspace allocates: allowed inside a
    // capture only in relaxed mode, and not recorded into the graph.
    capture_mode_scope relaxed(cudaStreamCaptureModeRelaxed);
    if (workspace_bytes_ > 0) CUDAG_CUDA_NODE(cudaMalloc(&workspace_, workspace_bytes_), what);
    cublas_check(cublasCreate(&handle_), "cublasCreate", what);
    device_ = device;
  } else if (device != device_) {
    throw error("cuBLAS node '" + std::string(what) + "' was first recorded on device " +
                    std::to_string(device_) + ", now on device " + std::to_string(device) +
                    "; a node's handle and workspace belong to one device",
                cudaErrorInvalidDevice, {}, std::string(what));
  }
  cublas_check(cublasSetStream(handle_, stream), "cublasSetStream", what);
  cublas_check(cublasSetWorkspace(handle_, workspace_, workspace_bytes_), "cublasSetWorkspace", what);
  cublas_check(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode", what);
  return handle_;
}

// --------------------------------------------------------------- gemm_call --
struct gemm_call::state {
  gemm_desc desc;
  cublas_gemm_arguments args;
  std::string label;
  capture_handle handle;

  state(const gemm_desc& d, std::string l)
      : desc(d), args(to_cublas(d)), label(std::move(l)), handle(d.workspace_bytes) {}
};

gemm_call::gemm_call(const gemm_desc& desc, std::string label)
    : state_(std::make_shared<state>(desc, std::move(label))) {}

const gemm_desc& gemm_call::desc() const noexcept { return state_->desc; }

void gemm_call::operator()(cudaStream_t stream, const void* a, const void* b, void* c, float alpha,
                           float beta) const {
  state& s = *state_;
  const cublas_gemm_arguments& g = s.args;
  const void* first = g.operands_swapped ? b : a;
  const void* second = g.operands_swapped ? a : b;
  const cudaDataType in = data_type(s.desc.input), out = data_type(s.desc.output);
  auto lock = s.handle.lock();
  cublasHandle_t h = s.handle.bind(stream, s.label);
  if (s.desc.batch == 1) {
    cublas_check(cublasGemmEx(h, g.trans_a, g.trans_b, g.m, g.n, g.k, &alpha, first, in, g.lda,
                              second, in, g.ldb, &beta, c, out, g.ldc, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx", s.label);
  } else {
    cublas_check(cublasGemmStridedBatchedEx(h, g.trans_a, g.trans_b, g.m, g.n, g.k, &alpha, first,
                                            in, g.lda, g.stride_a, second, in, g.ldb, g.stride_b,
                                            &beta, c, out, g.ldc, g.stride_c, s.desc.batch,
                                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmStridedBatchedEx", s.label);
  }
}

}  // namespace cudag::blas
