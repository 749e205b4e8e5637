#!/usr/bin/env bash
# Installs this build of cudag into a temporary staging prefix and builds
# the CMake consumer's two sources (tests/consumer/cmake: a builder graph in
# a .cpp, a DSL graph in a .cu) with flags from pkg-config alone, the way
# docs/guide/building.md says: nvcc compiles the .cu file and g++ the .cpp
# file with `--cflags`, nvcc links with `--libs`, the CUDA toolkit found
# through cudag.pc's variable cuda_prefix, redefined. Then runs the program.
# Exits 77 (skipped) where pkg-config is missing.
# usage: run_pkgconfig_consumer.sh SOURCE_ROOT BUILD_ROOT NVCC GPU_ARCHITECTURE
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
if ! command -v pkg-config >/dev/null; then
  echo "SKIP: pkg-config is not installed"
  exit 77
fi
cxx=${CXX:-c++}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

tags=devel
if [ -e "$build_root/src/libcudag.so" ]; then tags=devel,runtime; fi
meson install -C "$build_root" --no-rebuild --tags "$tags" --destdir "$work/stage" \
  >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
prefix=$(meson introspect --buildoptions "$build_root" |
  python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
staged="$work/stage$prefix"
pc=$(find "$staged" -name cudag.pc)
[ -n "$pc" ] || { echo "no cudag.pc installed under $staged"; exit 1; }
echo "installed: ${pc#"$work/stage"}"

# The staged tree is not where cudag.pc says it is: move its prefix there.
export PKG_CONFIG_PATH=$(dirname "$pc")
# cudag.pc names the CUDA toolkit in one place, the variable cuda_prefix
# (the toolkit it was configured with), and nowhere else: built here through
# a link to the toolkit at another path, given as cuda_prefix.
cuda_prefix=$(pkg-config --variable=cuda_prefix cudag)
[ -n "$cuda_prefix" ] && [ -d "$cuda_prefix/include" ] ||
  { cat "$pc"; echo "cudag.pc has no cuda_prefix naming a toolkit"; exit 1; }
if grep -v '^cuda_prefix=' "$pc" | grep -qF "$cuda_prefix"; then
  cat "$pc"; echo "cudag.pc names the toolkit's path $cuda_prefix outside cuda_prefix"; exit 1
fi
ln -s "$cuda_prefix" "$work/toolkit"
pkg() {
  pkg-config --define-variable=prefix="$staged" --define-variable=cuda_prefix="$work/toolkit" "$@" cudag
}
case " $(pkg --cflags) $(pkg --libs) " in
  *" -I$work/toolkit/include "*" -L$work/toolkit/lib64 "*) ;;
  *) echo "cudag.pc's flags do not follow cuda_prefix: $(pkg --cflags) $(pkg --libs)"; exit 1 ;;
esac
consumer="$source_root/tests/consumer/cmake"
set -x
"$nvcc" -std=c++20 --expt-relaxed-constexpr -arch="sm_$arch" -c "$consumer/device_graph.cu" \
  -o "$work/device_graph.o" $(pkg --cflags)
"$cxx" -std=c++20 -c "$consumer/consumer.cpp" -o "$work/consumer.o" $(pkg --cflags)
"$nvcc" -arch="sm_$arch" "$work/consumer.o" "$work/device_graph.o" -o "$work/pkgconfig_consumer" \
  $(pkg --libs)
set +x
"$work/pkgconfig_consumer"
