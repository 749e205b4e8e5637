#pragma once
// Everything of cudag an application usually needs, in one include:
//
//   #include <cudag/cudag.hpp>
//
// the graph spec and its checks and analyses, DOT pictures, the run-time
// builder and user-defined ops, instantiated graphs, device scalars,
// capture and import, and the compile-time DSL (cudag::dsl). The DSL adds
// little to the compile time of the rest (it shares most of its headers).
//
// Not included: the extras that bring a library's headers with them,
// cudag/rtc.hpp (NVRTC), cudag/blas.hpp (cuBLAS), cudag/fft.hpp (cuFFT,
// built where found) and cudag/rand.hpp (cuRAND, built where found); the
// recording stand-in for CUDA of tests, cudag/native_recorder.hpp; the
// native seam (native_api.hpp, native_nodes.hpp).
#include "cudag/builder.hpp"
#include "cudag/capture.hpp"
#include "cudag/check.hpp"
#include "cudag/device_scalar.hpp"
#include "cudag/diff.hpp"
#include "cudag/dot.hpp"
#include "cudag/dsl.hpp"
#include "cudag/eager.hpp"
#include "cudag/edge_payoff.hpp"
#include "cudag/error.hpp"
#include "cudag/exec.hpp"
#include "cudag/exec_cache.hpp"  // and footprint.hpp
#include "cudag/handles.hpp"
#include "cudag/import.hpp"
#include "cudag/op.hpp"
#include "cudag/resolved_graph.hpp"
#include "cudag/retained.hpp"
#include "cudag/spec.hpp"
