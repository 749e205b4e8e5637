#!/usr/bin/env bash
# Installs this build of cudag into a temporary staging prefix and builds
# tests/consumer/cmake, a CMake project using find_package(cudag CONFIG) and
# cudag::cudag, then runs it. Exits 77 (skipped) where cmake is missing.
# usage: run_cmake_consumer.sh SOURCE_ROOT BUILD_ROOT NVCC GPU_ARCHITECTURE
set -euo pipefail
# A sanitizer build's library needs the sanitizer runtime at link time, which
# a consumer of the installed package does not ask for.
if [ "${CUDAG_SANITIZE:-none}" != none ]; then
  echo "SKIP: this build's library is instrumented (b_sanitize=$CUDAG_SANITIZE); installed-package consumers link plain builds"
  exit 77
fi
if [ "${CUDAG_LIBCXX:-false}" = true ]; then
  echo "SKIP: this build's library is built against libc++; the consumer's nvcc host compiler links libstdc++"
  exit 77
fi
source_root=$(cd "$1" && pwd)
build_root=$(cd "$2" && pwd)
nvcc=$(command -v "$3" || echo "$3")
arch=$4
if ! command -v cmake >/dev/null; then
  echo "SKIP: cmake is not installed"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The library is built by meson test (a dependency of this test); install
# what a developer needs (headers, library, pkg-config and CMake files).
tags=devel
if [ -e "$build_root/src/libcudag.so" ]; then tags=devel,runtime; fi
meson install -C "$build_root" --no-rebuild --tags "$tags" --destdir "$work/stage" \
  >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
prefix=$(meson introspect --buildoptions "$build_root" |
  python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
staged="$work/stage$prefix"
config=$(find "$staged" -name cudagConfig.cmake)
[ -n "$config" ] || { echo "no cudagConfig.cmake installed under $staged"; exit 1; }
echo "installed: ${config#"$work/stage"}"

# find_package searches the prefix (lib/<arch>/cmake/cudag or lib/cmake/cudag).
cmake -S "$source_root/tests/consumer/cmake" -B "$work/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$staged" -DCMAKE_CUDA_COMPILER="$nvcc" \
  -DCMAKE_CUDA_ARCHITECTURES="$arch" -DCMAKE_BUILD_TYPE=Release \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
"$work/build/cmake_consumer"
