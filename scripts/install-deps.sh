#!/usr/bin/env bash
# Installs what cudag needs on Debian/Ubuntu (as root), if missing:
# meson, ninja, Boost headers (Hana, Graph), GoogleTest, Graphviz.
# The CUDA toolkit (nvcc, cudart, NVRTC, cuBLAS) is expected under
# /usr/local/cuda or on PATH.
set -euo pipefail

need=()
command -v meson >/dev/null || need+=(meson)
command -v ninja >/dev/null || need+=(ninja-build)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v dot >/dev/null || need+=(graphviz)
command -v python3 >/dev/null || need+=(python3)
[ -f /usr/include/boost/hana.hpp ] && [ -f /usr/include/boost/graph/adjacency_list.hpp ] || need+=(libboost-dev)
pkg-config --exists gtest 2>/dev/null || [ -f /usr/lib/x86_64-linux-gnu/libgtest.a ] || need+=(libgtest-dev)

if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null; then
  if [ -x /usr/local/cuda/bin/nvcc ]; then
    echo "note: add /usr/local/cuda/bin to PATH (the scripts do it themselves)"
  else
    echo "error: the CUDA toolkit (nvcc) was not found; install CUDA 12.4 or newer" >&2
    exit 1
  fi
fi
