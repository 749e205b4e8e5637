#include "cudag/rand.hpp"

#include <cmath>
#include <cstdio>
#include <mutex>

#include "cudag/capture.hpp"


namespace cudag::rand {
namespace {

[[noreturn]] void refuse(const fill_desc& desc, std::string_view node, const std::string& why) {
  throw error("rand node '" + std::string(node) + "' (" + describe(desc) + "): " + why,
              cudaErrorInvalidValue, {}, std::string(node));
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

curandRngType_t rng_type(generator g) {
  switch (g) {
    case generator::philox: return CURAND_RNG_PSEUDO_PHILOX4_32_10;
    case generator::xorwow: return CURAND_RNG_PSEUDO_XORWOW;
  }
  return CURAND_RNG_PSEUDO_PHILOX4_32_10;
}

const char* generator_name(generator g) {
  switch (g) {
    case generator::philox: return "philox";
    case generator::xorwow: return "xorwow";
  }
  return "?";
}

}  // namespace

std::string describe(const fill_desc& d) {
  std::string text = std::string("curand ") + generator_name(d.gen) + " ";
  if (d.dist == distribution::uniform) text += "uniform";
  else text += "normal(" + number(d.mean) + ", " + number(d.stddev) + ")";
  text += d.prec == precision::f32 ? " f32" : " f64";
  text += " seed " + std::to_string(d.seed);
  if (d.offset != 0) text += " offset " + std::to_string(d.offset);
  return text;
}

void validate(const fill_desc& d, std::string_view node) {
  if (d.dist != distribution::normal) return;
  if (!std::isfinite(d.mean)) refuse(d, node, "the mean is not finite");
  if (!std::isfinite(d.stddev) || d.stddev < 0)
    refuse(d, node, "stddev = " + number(d.stddev) + " is not a finite non-negative number");
}

void validate_count(const fill_desc& d, std::string_view node, long long count) {
  if (count < 0) refuse(d, node, "count = " + std::to_string(count) + " is negative");
  if (d.dist == distribution::normal && count % 2 != 0)
    refuse(d, node, "count = " + std::to_string(count) +
                        " is odd; cuRAND's pseudo-random generators make normal values in pairs");
}

void check_output(const fill_desc& d, std::string_view node, bool is_float, bool is_double) {
  if (d.prec == precision::f32 && is_double)
    refuse(d, node, "the output holds double but the descriptor says f32");
  if (d.prec == precision::f64 && is_float)
    refuse(d, node, "the output holds float but the descriptor says f64");
}

const char* status_name(curandStatus_t s) {
  switch (s) {
    case CURAND_STATUS_SUCCESS: return "CURAND_STATUS_SUCCESS";
    case CURAND_STATUS_VERSION_MISMATCH: return "CURAND_STATUS_VERSION_MISMATCH";
    case CURAND_STATUS_NOT_INITIALIZED: return "CURAND_STATUS_NOT_INITIALIZED";
    case CURAND_STATUS_ALLOCATION_FAILED: return "CURAND_STATUS_ALLOCATION_FAILED";
    case CURAND_STATUS_TYPE_ERROR: return "CURAND_STATUS_TYPE_ERROR";
    case CURAND_STATUS_OUT_OF_RANGE: return "CURAND_STATUS_OUT_OF_RANGE";
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE: return "CURAND_STATUS_LENGTH_NOT_MULTIPLE";
    case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED: return "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED";
    case CURAND_STATUS_LAUNCH_FAILURE: return "CURAND_STATUS_LAUNCH_FAILURE";
    case CURAND_STATUS_PREEXISTING_FAILURE: return "CURAND_STATUS_PREEXISTING_FAILURE";
    case CURAND_STATUS_INITIALIZATION_FAILED: return "CURAND_STATUS_INITIALIZATION_FAILED";
    case CURAND_STATUS_ARCH_MISMATCH: return "CURAND_STATUS_ARCH_MISMATCH";
    case CURAND_STATUS_INTERNAL_ERROR: return "CURAND_STATUS_INTERNAL_ERROR";
    default: return nullptr;
  }
}

void curand_check(curandStatus_t status, const char* call, std::string_view node) {
  if (status == CURAND_STATUS_SUCCESS) return;
  (void)cudaGetLastError();
  const char* name = status_name(status);
  throw error(std::string(call) + " failed for node '" + std::string(node) + "': " +
                  (name ? std::string(name) : "curandStatus_t " + std::to_string(int(status))),
              cudaErrorUnknown, call, std::string(node));
}

// --------------------------------------------------------------- fill_call --
struct fill_call::state {
  fill_desc desc;
  std::string node;
  mutable std::mutex mutex;
  curandGenerator_t gen = nullptr;
  int device = -1;

  state(const fill_desc& d, std::string n) : desc(d), node(std::move(n)) { validate(desc, node); }
  ~state() {
    if (gen) (void)curandDestroyGenerator(gen);
  }

  // Makes the generator and computes its starting state on `stream`, then
  // waits for it. Must not run while a stream of the device is captured.
  void seed(cudaStream_t stream, int on_device) {
    curandGenerator_t made = nullptr;
    curand_check(curandCreateGenerator(&made, rng_type(desc.gen)), "curandCreateGenerator", node);
    auto fail = [&](curandStatus_t status, const char* call) {
      if (status == CURAND_STATUS_SUCCESS) return;
      (void)curandDestroyGenerator(made);
      curand_check(status, call, node);
    };
    fail(curandSetPseudoRandomGeneratorSeed(made, desc.seed), "curandSetPseudoRandomGeneratorSeed");
    fail(curandSetGeneratorOffset(made, desc.offset), "curandSetGeneratorOffset");
    fail(curandSetStream(made, stream), "curandSetStream");
    if (const curandStatus_t status = curandGenerateSeeds(made); status != CURAND_STATUS_SUCCESS) {
      (void)curandDestroyGenerator(made);
      (void)cudaGetLastError();
      const char* name = status_name(status);
      throw error("curandGenerateSeeds failed for node '" + node + "': " +
                      (name ? std::string(name) : std::to_string(int(status))) +
                      " (cuRAND cannot seed a generator while a stream of the device is being "
                      "captured: declare rand nodes outside any capture)",
                  cudaErrorUnknown, "curandGenerateSeeds", node);
    }
    if (const cudaError_t code = cudaStreamSynchronize(stream); code != cudaSuccess) {
      (void)curandDestroyGenerator(made);
      throw_cuda_error(code, "cudaStreamSynchronize", node);
    }
    gen = made;
    device = on_device;
  }
};

fill_call::fill_call(const fill_desc& desc, std::string node)
    : state_(std::make_shared<state>(desc, std::move(node))) {
  // Seed now, outside any capture, where a device is usable; without one
  // (a spec built on a machine without a GPU) the node cannot be recorded.
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    return;
  }
  int device = 0;
  CUDAG_CUDA_NODE(cudaGetDevice(&device), state_->node);
  cudaStream_t stream = nullptr;
  CUDAG_CUDA_NODE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), state_->node);
  try {
    state_->seed(stream, device);
  } catch (...) {
    (void)cudaStreamDestroy(stream);
    throw;
  }
  CUDAG_CUDA_NODE(cudaStreamDestroy(stream), state_->node);
}

const fill_desc& fill_call::desc() const noexcept { return state_->desc; }

bool fill_call::seeded() const {
  std::lock_guard lock(state_->mutex);
  return state_->gen != nullptr;
}

void fill_call::operator()(cudaStream_t stream, void* out, long long count) const {
  state& s = *state_;
  validate_count(s.desc, s.node, count);
  std::lock_guard lock(s.mutex);
  int device = 0;
  CUDAG_CUDA_NODE(cudaGetDevice(&device), s.node);
  if (s.gen == nullptr) {
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    CUDAG_CUDA_NODE(cudaStreamIsCapturing(stream, &capturing), s.node);
    if (capturing != cudaStreamCaptureStatusNone)
      throw error("rand node '" + s.node +
                      "' has no generator: none was made where the node was declared (no usable "
                      "CUDA device then), and cuRAND cannot seed one while a stream is being "
                      "captured; declare the node where a device is usable",
                  cudaErrorStreamCaptureUnsupported, {}, s.node);
    s.seed(stream, device);
  } else if (device != s.device) {
    throw error("rand node '" + s.node + "' was seeded on device " + std::to_string(s.device) +
                    ", now recorded on device " + std::to_string(device) +
                    "; a node's generator belongs to one device",
                cudaErrorInvalidDevice, {}, s.node);
  }
  if (count == 0) return;
  // Generation only launches kernels; relaxed in case cuRAND allocates.
  capture_mode_scope relaxed(cudaStreamCaptureModeRelaxed);
  curand_check(curandSetStream(s.gen, stream), "curandSetStream", s.node);
  const auto n = static_cast<std::size_t>(count);
  const bool f32 = s.desc.prec == precision::f32;
  if (s.desc.dist == distribution::uniform) {
    if (f32)
      curand_check(curandGenerateUniform(s.gen, static_cast<float*>(out), n),
                   "curandGenerateUniform", s.node);
    else
      curand_check(curandGenerateUniformDouble(s.gen, static_cast<double*>(out), n),
                   "curandGenerateUniformDouble", s.node);
  } else {
    if (f32)
      curand_check(curandGenerateNormal(s.gen, static_cast<float*>(out), n,
                                        static_cast<float>(s.desc.mean),
                                        static_cast<float>(s.desc.stddev)),
                   "curandGenerateNormal", s.node);
    else
      curand_check(curandGenerateNormalDouble(s.gen, static_cast<double*>(out), n, s.desc.mean,
                                              s.desc.stddev),
                   "curandGenerateNormalDouble", s.node);
  }
}

}  // namespace cudag::rand
