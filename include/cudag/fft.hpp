#pragma once
// cuFFT transforms as graph nodes, through the op customization point
// (cudag/op.hpp). cuFFT has no graph-node API: its execution is recorded by
// stream capture into a child graph (a captured node), recorded again when
// a pointer or the batch count is rebound.
//
//   auto signal = b.param<const float*>("signal");
//   auto spectrum = b.param<cufftComplex*>("spectrum");
//   auto batch = b.param<int>("batch");
//   cudag::add_op(b, "spectrum", cudag::fft::transform{{.shape = {1024}, .batch = 8}},
//                 signal, spectrum, batch);
//   ... exec.rebind("signal", d_other);   // re-records this node only
//   ... exec.rebind("batch", 16);         // a second plan, made at the re-recording
//
// Real-to-complex (forward, unnormalised) and complex-to-real (inverse,
// unnormalised: a forward then an inverse transform scales by the product
// of the shape), single or double precision, 1-D to 3-D, batched, out of
// place, packed layout: a real transform of shape n0 x ... x nk holds
// n0 * ... * nk reals, its spectrum n0 * ... * (nk / 2 + 1) complex
// values; the transforms of a batch follow each other. cuFFT's
// complex-to-real transform overwrites its input, so that input is a
// pointer to non-const.
//
// Each node owns its plans (one per batch count it was recorded with) and
// destroys them when the last spec or exec holding the node goes. A plan
// is made at the first recording with a new batch count, i.e. when the
// spec is lowered on a GPU or the batch is rebound; the transform shape is
// fixed by the descriptor.
#include <cuda_runtime_api.h>
#include <cufft.h>

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "cudag/arguments.hpp"
#include "cudag/builder.hpp"
#include "cudag/error.hpp"
#include "cudag/op.hpp"  // cudag::add_op(b, name, op, args...) calls this header's ops

namespace cudag::fft {

enum class direction { real_to_complex, complex_to_real };
enum class precision { f32, f64 };

struct transform_desc {
  /// Real (logical) sizes, outermost first; the rank is the number of
  /// leading non-zero entries: {1024} is 1-D, {64, 128} is 2-D.
  std::array<long long, 3> shape{};
  direction dir = direction::real_to_complex;
  precision prec = precision::f32;
  /// Transforms of one execution when the node is given no batch argument.
  int batch = 1;
};

/// What a descriptor means for cuFFT, after validation.
struct plan_geometry {
  int rank = 0;
  std::array<long long, 3> n{};
  long long real_elements = 0;     ///< reals of one transform
  long long complex_elements = 0;  ///< complex values of one transform's spectrum
  cufftType type = CUFFT_R2C;
};

/// "fft r2c f32 64x128 batch 8", for pictures and messages.
[[nodiscard]] std::string describe(const transform_desc& desc);

/// Validates `desc` and maps it to cuFFT; throws cudag::error naming
/// `node` and the field at fault.
[[nodiscard]] plan_geometry geometry(const transform_desc& desc, std::string_view node);

/// Throws cudag::error "call failed for node 'node': CUFFT_..." .
void cufft_check(cufftResult result, const char* call, std::string_view node);

/// CUFFT_SUCCESS, CUFFT_INVALID_PLAN, ... ("cufftResult N" for others).
[[nodiscard]] const char* result_name(cufftResult result);

/// The callable form of a transform, for captured nodes of any front end:
/// call(stream, in, out, batch) issues the transform on `stream`. Copies
/// share the plans.
class transform_call {
 public:
  /// `node`: the node's name, for messages. Validates the descriptor.
  transform_call(const transform_desc& desc, std::string node);
  void operator()(cudaStream_t stream, const void* in, void* out, long long batch) const;
  [[nodiscard]] const transform_desc& desc() const noexcept;
  /// Plans made so far (one per batch count recorded).
  [[nodiscard]] std::size_t plans() const;

  struct state;

 private:
  std::shared_ptr<state> state_;
};

/// The element a pointer type holds, as cuFFT sees it; none for void
/// pointers (unchecked).
enum class element { f32, f64, c32, c64 };
template <class Pointer>
[[nodiscard]] constexpr std::optional<element> element_of() {
  static_assert(std::is_pointer_v<Pointer>, "cudag::fft: data are passed as pointers");
  using T = std::remove_cv_t<std::remove_pointer_t<Pointer>>;
  // Only for a pointer: one mistake, one error.
  static_assert(!std::is_pointer_v<Pointer> || std::is_void_v<T> || std::is_same_v<T, float> ||
                    std::is_same_v<T, double> || std::is_same_v<T, cufftComplex> ||
                    std::is_same_v<T, cufftDoubleComplex>,
                "cudag::fft: data are float, double, cufftComplex (float2) or "
                "cufftDoubleComplex (double2)");
  if constexpr (std::is_same_v<T, float>) return element::f32;
  else if constexpr (std::is_same_v<T, double>) return element::f64;
  else if constexpr (std::is_same_v<T, cufftComplex>) return element::c32;
  else if constexpr (std::is_same_v<T, cufftDoubleComplex>) return element::c64;
  else return std::nullopt;
}

/// Throws cudag::error naming the node when the input's or the output's
/// element type contradicts the descriptor.
void check_elements(const transform_desc& desc, std::string_view node, std::optional<element> in,
                    std::optional<element> out);

/// The op: cudag::add_op(b, name, transform{desc}, in, out[, batch]).
struct transform {
  transform_desc desc;
};

/// A transform node. `in`, `out`: pointers, pointer parameters or buffers
/// (the real-to-complex input may be const); `batch`: an integer literal or
/// parameter. Rebinding any of them re-records this node only; a batch
/// below 1 is refused naming the node.
template <class In, class Out, class Batch>
node_ref cudag_add_op(builder& b, std::string name, const transform& op, In&& in, Out&& out,
                      Batch&& batch) {
  static_assert(passes_as<const void*, In> && passes_as<void*, Out>,
                "cudag::fft::transform: input and output are device pointers, pointer parameters "
                "or buffers; the output is non-const");
  static_assert(std::is_integral_v<argument_type<Batch>>,
                "cudag::fft::transform: the batch is an integer literal or parameter");
  // Nothing more is instantiated once an operand is refused: one error.
  if constexpr (!(passes_as<const void*, In> && passes_as<void*, Out> &&
                  std::is_integral_v<argument_type<Batch>>)) {
    detail::refused_call();
  } else {
    if (op.desc.dir == direction::complex_to_real && !passes_as<void*, In>)
      throw error("fft node '" + name +
                      "': a complex-to-real transform overwrites its input, which must be a "
                      "pointer to non-const",
                  cudaErrorInvalidValue, {}, name);
    check_elements(op.desc, name, element_of<argument_type<In>>(), element_of<argument_type<Out>>());
    transform_call call(op.desc, name);
    std::string what = describe(op.desc);
    const bool overwrites_input = op.desc.dir == direction::complex_to_real;
    node_ref node = b.captured(
        std::move(name), std::move(what),
        [call](cudaStream_t s, const auto& i, const auto& o, const auto& n) {
          call(s, i, o, static_cast<long long>(n));
        },
        std::forward<In>(in), std::forward<Out>(out), std::forward<Batch>(batch));
    // The race check: the input is only read, but by a complex-to-real
    // transform, which overwrites it (a captured node is read and written
    // through every pointer unless it says less).
    if (!overwrites_input) node.access(0, access_mode::read);
    return node;
  }
}

/// A transform node of the descriptor's batch.
template <class In, class Out>
node_ref cudag_add_op(builder& b, std::string name, const transform& op, In&& in, Out&& out) {
  return cudag_add_op(b, std::move(name), op, std::forward<In>(in), std::forward<Out>(out),
                      op.desc.batch);
}

}  // namespace cudag::fft
