#pragma once
// A user-defined op for the tests, written as a user would write one in
// their own code: y = alpha * x + y through cublasSaxpy, recorded by stream
// capture. It is added to a spec with cudag::add_op.
#include <cublas_v2.h>

#include <memory>
#include <string>

#include "cudag/blas.hpp"
#include "cudag/builder.hpp"
#include "cudag/op.hpp"

namespace user_ops {

struct saxpy {
  int n = 0;
};

/// The recording: one handle (with its workspace) per node, shared by the
/// node's copies, created at the first recording.
struct record_saxpy {
  int n;
  std::string node;
  std::shared_ptr<cudag::blas::capture_handle> handle =
      std::make_shared<cudag::blas::capture_handle>(std::size_t(4) << 20);

  void operator()(cudaStream_t stream, float alpha, const float* x, float* y) const {
    auto lock = handle->lock();
    cublasHandle_t h = handle->bind(stream, node);
    cudag::blas::cublas_check(cublasSaxpy(h, n, &alpha, x, 1, y, 1), "cublasSaxpy", node);
  }
};

template <class Alpha, class X, class Y>
  requires cudag::passes_as<float, Alpha> && cudag::passes_as<const float*, X> &&
           cudag::passes_as<float*, Y>
cudag::node_ref cudag_add_op(cudag::builder& b, std::string name, const saxpy& op, Alpha&& alpha,
                             X&& x, Y&& y) {
  std::string what = "cublasSaxpy n=" + std::to_string(op.n);
  record_saxpy record{op.n, name};
  return b.captured(std::move(name), std::move(what), std::move(record), std::forward<Alpha>(alpha),
                    std::forward<X>(x), std::forward<Y>(y));
}

}  // namespace user_ops
