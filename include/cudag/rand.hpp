#pragma once
// cuRAND fills as graph nodes, through the op customization point
// (cudag/op.hpp). cuRAND's generation is recorded by stream capture into a
// child graph (a captured node), recorded again when an argument is rebound.
//
//   auto noise = b.param<float*>("noise");
//   cudag::add_op(b, "noise",
//                 cudag::rand::fill{{.dist = cudag::rand::distribution::normal,
//                                    .stddev = 0.1, .seed = 42}},
//                 noise, 1 << 20);
//   ... exec.rebind("noise", d_other);   // re-records this node only
//
// Arguments: out (float* or double*, or a parameter or buffer of one) and
// count (an integer literal or parameter: values written), both rebindable.
//
// Each node owns a cuRAND generator, its state in device memory. Every
// replay continues the generator's sequence: the first replay writes the
// first `count` values of the sequence of (generator, seed, offset), the
// next replay the following ones, exactly as consecutive cuRAND calls on
// the same generator would. A node declared again with the same descriptor
// starts the same sequence again (a fixed seed reproduces a run). A
// re-recording (a rebind) continues from where the state is. The execs
// made from one spec share the node's generator, so their replays draw from
// one sequence.
//
// cuRAND cannot seed a generator while a stream of the device is being
// captured, and lowering records this node by capture: the generator is
// made and seeded where the node is declared (cudag::add_op), when a CUDA
// device is usable then; declare rand nodes outside any capture. Without a
// device at declaration (a spec built on a machine without one) the node
// refuses to be recorded, naming itself.
//
// Seed and offset are therefore fixed by the descriptor; for another
// sequence, declare another node. Normal values come in pairs (cuRAND's
// rule for its pseudo-random generators): an odd count is refused naming
// the node.
#include <cuda_runtime_api.h>
#include <curand.h>

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

namespace cudag::rand {

enum class distribution { uniform, normal };
/// Pseudo-random generators whose replays were checked to continue cuRAND's
/// own sequence (MRG32k3a's do not, after the first: left out).
enum class generator { philox, xorwow };
enum class precision { f32, f64 };

struct fill_desc {
  distribution dist = distribution::uniform;  ///< uniform: (0, 1]
  precision prec = precision::f32;
  generator gen = generator::philox;
  double mean = 0.0;    ///< normal
  double stddev = 1.0;  ///< normal
  unsigned long long seed = 0;
  unsigned long long offset = 0;  ///< values of the sequence skipped
};

/// "curand philox uniform f32 seed 0", "curand philox normal(0, 0.1) f32
/// seed 42 offset 1024".
[[nodiscard]] std::string describe(const fill_desc& desc);

/// Validates `desc` (a negative or non-finite stddev, a non-finite mean);
/// throws cudag::error naming `node`.
void validate(const fill_desc& desc, std::string_view node);

/// Validates one call's count: negative, or odd for a normal fill, is
/// refused naming `node`.
void validate_count(const fill_desc& desc, std::string_view node, long long count);

/// Throws cudag::error "call failed for node 'node': CURAND_STATUS_..." .
void curand_check(curandStatus_t status, const char* call, std::string_view node);

/// CURAND_STATUS_SUCCESS, ... ("curandStatus_t N" for others).
[[nodiscard]] const char* status_name(curandStatus_t status);

/// The callable form of a fill, for captured nodes of any front end:
/// call(stream, out, count) issues the fill on `stream`. Copies share the
/// generator, made and seeded by the constructor where a device is usable
/// (else at the first call, which must then not be captured).
class fill_call {
 public:
  fill_call(const fill_desc& desc, std::string node);
  void operator()(cudaStream_t stream, void* out, long long count) const;
  [[nodiscard]] const fill_desc& desc() const noexcept;
  /// Whether the generator is made and seeded.
  [[nodiscard]] bool seeded() const;

  struct state;

 private:
  std::shared_ptr<state> state_;
};

/// Throws cudag::error naming the node when the output's element type
/// contradicts the descriptor's precision.
void check_output(const fill_desc& desc, std::string_view node, bool is_float, bool is_double);

/// The op: cudag::add_op(b, name, fill{desc}, out, count).
struct fill {
  fill_desc desc;
};

template <class Out, class Count>
node_ref cudag_add_op(builder& b, std::string name, const fill& op, Out&& out, Count&& count) {
  using T = std::remove_cv_t<std::remove_pointer_t<argument_type<Out>>>;
  static_assert(passes_as<void*, Out>,
                "cudag::rand::fill: the output is a device pointer, pointer parameter or buffer, "
                "non-const");
  static_assert(std::is_void_v<T> || std::is_same_v<T, float> || std::is_same_v<T, double>,
                "cudag::rand::fill: the output holds float or double");
  static_assert(std::is_integral_v<argument_type<Count>>,
                "cudag::rand::fill: the count is an integer literal or parameter");
  // Nothing more is instantiated once an operand is refused: one error.
  if constexpr (!(passes_as<void*, Out> &&
                  (std::is_void_v<T> || std::is_same_v<T, float> || std::is_same_v<T, double>) &&
                  std::is_integral_v<argument_type<Count>>)) {
    detail::refused_call();
  } else {
    validate(op.desc, name);
    check_output(op.desc, name, std::is_same_v<T, float>, std::is_same_v<T, double>);
    if constexpr (is_literal_argument<Count>)
      validate_count(op.desc, name, static_cast<long long>(count));
    fill_call call(op.desc, name);
    std::string what = describe(op.desc);
    return b.captured(
        std::move(name), std::move(what),
        [call](cudaStream_t s, const auto& o, const auto& n) { call(s, o, static_cast<long long>(n)); },
        std::forward<Out>(out), std::forward<Count>(count));
  }
}

}  // namespace cudag::rand
