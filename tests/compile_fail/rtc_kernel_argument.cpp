// A run-time (NVRTC) kernel of a known signature: 2.0 is a double where it
// takes a float.
// expect-error: kernel_argument_does_not_convert<.*"rtc_scale"\}, 1, float, double>
// expect-name: rtc_scale
// context-first gcc: a run-time kernel's node is never constant, so its factory reports the mistake itself
#include "common.hpp"
void declare(const cudag::kernel_ref<void(float*, float, int)>& k, float* d) {
  const auto g = graph(kernel<"rtc_scale">(k, dim3(1), dim3(32), x, 2.0, n));
  use_graph(g, x = d, n = 4);
}
