#include "cudag/fft.hpp"

#include <map>
#include <mutex>

#include "cudag/capture.hpp"

namespace cudag::fft {
namespace {

const char* element_name(element e) {
  switch (e) {
    case element::f32: return "float";
    case element::f64: return "double";
    case element::c32: return "cufftComplex";
    case element::c64: return "cufftDoubleComplex";
  }
  return "?";
}

[[noreturn]] void refuse(const transform_desc& desc, std::string_view node, const std::string& why) {
  throw error("fft node '" + std::string(node) + "' (" + describe(desc) + "): " + why,
              cudaErrorInvalidValue, {}, std::string(node));
}

}  // namespace

std::string describe(const transform_desc& d) {
  std::string text = "fft ";
  const bool r2c = d.dir == direction::real_to_complex;
  if (d.prec == precision::f32) text += r2c ? "r2c f32 " : "c2r f32 ";
  else text += r2c ? "d2z f64 " : "z2d f64 ";
  bool first = true;
  for (long long n : d.shape) {
    if (n == 0) break;
    if (!first) text += 'x';
    text += std::to_string(n);
    first = false;
  }
  if (first) text += "(no shape)";
  if (d.batch != 1) text += " batch " + std::to_string(d.batch);
  return text;
}

plan_geometry geometry(const transform_desc& d, std::string_view node) {
  plan_geometry g;
  for (std::size_t i = 0; i < d.shape.size(); ++i) {
    const long long n = d.shape[i];
    if (n < 0) refuse(d, node, "shape[" + std::to_string(i) + "] = " + std::to_string(n) + " is negative");
    if (n == 0) {
      for (std::size_t j = i + 1; j < d.shape.size(); ++j)
        if (d.shape[j] != 0)
          refuse(d, node, "shape[" + std::to_string(i) + "] is 0 but shape[" + std::to_string(j) +
                              "] is not: the rank is the number of leading non-zero sizes");
      break;
    }
    g.n[g.rank++] = n;
  }
  if (g.rank == 0) refuse(d, node, "the shape is empty: give at least one size");
  if (d.batch < 1) refuse(d, node, "batch = " + std::to_string(d.batch) + " is less than 1");
  g.real_elements = 1;
  g.complex_elements = 1;
  for (int i = 0; i < g.rank; ++i) {
    g.real_elements *= g.n[i];
    g.complex_elements *= i + 1 == g.rank ? g.n[i] / 2 + 1 : g.n[i];
  }
  const bool r2c = d.dir == direction::real_to_complex;
  if (d.prec == precision::f32) g.type = r2c ? CUFFT_R2C : CUFFT_C2R;
  else g.type = r2c ? CUFFT_D2Z : CUFFT_Z2D;
  return g;
}

void check_elements(const transform_desc& d, std::string_view node, std::optional<element> in,
                    std::optional<element> out) {
  const bool f32 = d.prec == precision::f32;
  const element real = f32 ? element::f32 : element::f64;
  const element complex = f32 ? element::c32 : element::c64;
  const bool r2c = d.dir == direction::real_to_complex;
  auto check = [&](const char* which, std::optional<element> actual, element expected) {
    if (!actual || *actual == expected) return;
    refuse(d, node, std::string("the ") + which + " holds " + element_name(*actual) +
                        " but the descriptor says " + element_name(expected));
  };
  check("input", in, r2c ? real : complex);
  check("output", out, r2c ? complex : real);
}

const char* result_name(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return nullptr;
  }
}

void cufft_check(cufftResult result, const char* call, std::string_view node) {
  if (result == CUFFT_SUCCESS) return;
  (void)cudaGetLastError();
  const char* name = result_name(result);
  throw error(std::string(call) + " failed for node '" + std::string(node) + "': " +
                  (name ? std::string(name) : "cufftResult " + std::to_string(int(result))),
              cudaErrorUnknown, call, std::string(node));
}

// ---------------------------------------------------------- transform_call --
struct transform_call::state {
  transform_desc desc;
  plan_geometry geometry;
  std::string node;
  mutable std::mutex mutex;
  std::map<long long, cufftHandle> plans;  // by batch count
  int device = -1;

  state(const transform_desc& d, std::string n)
      : desc(d), geometry(fft::geometry(d, n)), node(std::move(n)) {}
  ~state() {
    for (auto& [batch, plan] : plans) (void)cufftDestroy(plan);
  }

  cufftHandle plan_for(long long batch) {
    if (auto it = plans.find(batch); it != plans.end()) return it->second;
    if (batch > 0x7fffffff)
      refuse(desc, node, "batch = " + std::to_string(batch) + " is more than cuFFT plans take");
    cufftHandle plan = 0;
    cufft_check(cufftCreate(&plan), "cufftCreate", node);
    long long n[3] = {geometry.n[0], geometry.n[1], geometry.n[2]};
    const bool r2c = desc.dir == direction::real_to_complex;
    const long long in_dist = r2c ? geometry.real_elements : geometry.complex_elements;
    const long long out_dist = r2c ? geometry.complex_elements : geometry.real_elements;
    std::size_t work = 0;
    const cufftResult made = cufftMakePlanMany64(plan, geometry.rank, n, nullptr, 1, in_dist,
                                                 nullptr, 1, out_dist, geometry.type, batch, &work);
    if (made != CUFFT_SUCCESS) {
      (void)cufftDestroy(plan);
      cufft_check(made, "cufftMakePlanMany64", node);
    }
    plans.emplace(batch, plan);
    return plan;
  }
};

transform_call::transform_call(const transform_desc& desc, std::string node)
    : state_(std::make_shared<state>(desc, std::move(node))) {}

const transform_desc& transform_call::desc() const noexcept { return state_->desc; }

std::size_t transform_call::plans() const {
  std::lock_guard lock(state_->mutex);
  return state_->plans.size();
}

void transform_call::operator()(cudaStream_t stream, const void* in, void* out,
                                long long batch) const {
  state& s = *state_;
  if (batch < 1)
    refuse(s.desc, s.node, "batch = " + std::to_string(batch) + " is less than 1");
  std::lock_guard lock(s.mutex);
  int device = 0;
  CUDAG_CUDA_NODE(cudaGetDevice(&device), s.node);
  if (s.device < 0) {
    s.device = device;
  } else if (device != s.device) {
    throw error("fft node '" + s.node + "' was first recorded on device " +
                    std::to_string(s.device) + ", now on device " + std::to_string(device) +
                    "; a node's plans belong to one device",
                cudaErrorInvalidDevice, {}, s.node);
  }
  // Making a plan allocates its work area: allowed inside a capture only in
  // relaxed mode, and not recorded into the graph. cuFFT may load its
  // kernels at the first execution: relaxed for that too.
  capture_mode_scope relaxed(cudaStreamCaptureModeRelaxed);
  const cufftHandle plan = s.plan_for(batch);
  cufft_check(cufftSetStream(plan, stream), "cufftSetStream", s.node);
  void* input = const_cast<void*>(in);  // cuFFT's signatures are not const-correct
  switch (s.geometry.type) {
    case CUFFT_R2C:
      cufft_check(cufftExecR2C(plan, static_cast<cufftReal*>(input), static_cast<cufftComplex*>(out)),
                  "cufftExecR2C", s.node);
      break;
    case CUFFT_C2R:
      cufft_check(cufftExecC2R(plan, static_cast<cufftComplex*>(input), static_cast<cufftReal*>(out)),
                  "cufftExecC2R", s.node);
      break;
    case CUFFT_D2Z:
      cufft_check(cufftExecD2Z(plan, static_cast<cufftDoubleReal*>(input),
                               static_cast<cufftDoubleComplex*>(out)),
                  "cufftExecD2Z", s.node);
      break;
    case CUFFT_Z2D:
      cufft_check(cufftExecZ2D(plan, static_cast<cufftDoubleComplex*>(input),
                               static_cast<cufftDoubleReal*>(out)),
                  "cufftExecZ2D", s.node);
      break;
    default: refuse(s.desc, s.node, "not a real transform");
  }
}

}  // namespace cudag::fft
