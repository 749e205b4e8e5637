#pragma once
// Device-side graph launch: an executable graph instantiated for device
// launch (instantiate_options::device_launch) passed, as a typed handle, to
// a kernel of another graph (or of itself), which launches it from device
// code: as a tail launch (after the launching graph's work, in order) or
// fire and forget (at once, beside it).
//
//   auto work = cudag::instantiate(work_spec, binds, {.device_launch = true});
//   b.kernel("decide", CUDAG_KERNEL(decide), cudag::launch(1, 1), b.param<cudag::device_graph>("next"), ...);
//   auto scheduler = cudag::instantiate(b.build(), {cudag::bind("next", work.device_handle()), ...});
//
//   __global__ void decide(cudag::device_graph next, ...) {
//     if (more_work) cudag::tail_launch(next);
//   }
//
// A kernel that launches graphs is compiled with relocatable device code
// (nvcc -rdc=true) and linked with the device runtime (-lcudadevrt); the
// device functions below exist only there.
#include <cuda_runtime_api.h>

namespace cudag {

/// An executable graph that device code may launch: what
/// exec::device_handle() gives for an exec instantiated with
/// instantiate_options::device_launch. Trivially copyable: a kernel
/// parameter, a graph parameter (`b.param<cudag::device_graph>("next")`),
/// rebound like any other value.
struct device_graph {
  cudaGraphExec_t exec = nullptr;
};

#if defined(__CUDACC__) && defined(__CUDACC_RDC__)
/// Launches `g` when the calling graph's work is done, in order with the
/// other tail launches of this graph (at most 120 pending). `g` may be the
/// calling graph itself (current_graph()): a loop on the device.
__device__ inline cudaError_t tail_launch(device_graph g) {
  return cudaGraphLaunch(g.exec, cudaStreamGraphTailLaunch);
}
/// Launches `g` at once, beside the calling graph's work (as its child: the
/// calling graph ends only when `g` has).
__device__ inline cudaError_t fire_and_forget(device_graph g) {
  return cudaGraphLaunch(g.exec, cudaStreamGraphFireAndForget);
}
/// The device-launchable graph whose kernel is running (none: null exec).
__device__ inline device_graph current_graph() { return device_graph{cudaGetCurrentGraphExec()}; }
#endif

}  // namespace cudag
