#!/usr/bin/env bash
# Installs what cudag needs on Debian/Ubuntu (as root), if missing.
#   required: meson, ninja, pkg-config, python3, Boost's headers (Hana,
#             Graph), GoogleTest
#   optional: Graphviz, which only draws the graphs' pictures
#   with --ci, required too: clang++ with libc++ (clang, libc++-dev,
#             libc++abi-dev) and GoogleTest's sources (googletest), for CI's
#             build by clang++ against libc++ (.ci/run)
# The CUDA toolkit, 13.0 or newer (nvcc, cudart, NVRTC, cuBLAS), is expected
# under /usr/local/cuda or on PATH.
#
# Where the package manager cannot install them (no package network, not
# root, no apt-get), missing optional packages are named with what is lost
# and the script goes on (exit 0); missing required packages stop it
# (exit 1), named. Tested with apt-get failing by
# tests/consumer/run_offline_deps.sh.
set -euo pipefail
ci=false
[ "${1:-}" = --ci ] && ci=true

# What is lost without each optional package.
declare -A lost=(
  [graphviz]="no SVG or PNG pictures of the graphs (the DOT files are still written; draw them elsewhere with dot -Tsvg)"
)

# Fills the arrays required and optional with the packages missing now.
find_missing() {
  required=()
  optional=()
  command -v meson >/dev/null || required+=(meson)
  command -v ninja >/dev/null || required+=(ninja-build)
  command -v pkg-config >/dev/null || required+=(pkg-config)
  command -v python3 >/dev/null || required+=(python3)
  [ -f /usr/include/boost/hana.hpp ] && [ -f /usr/include/boost/graph/adjacency_list.hpp ] ||
    required+=(libboost-dev)
  { command -v pkg-config >/dev/null && pkg-config --exists gtest 2>/dev/null; } ||
    [ -f /usr/lib/x86_64-linux-gnu/libgtest.a ] || required+=(libgtest-dev)
  if $ci; then
    command -v clang++ >/dev/null || command -v clang++-14 >/dev/null || required+=(clang)
    # libc++'s and libc++abi's headers, found by the clang++ above.
    local cxx
    cxx=$(command -v clang++ || command -v clang++-14 || true)
    if [ -z "$cxx" ] || ! echo '#include <cxxabi.h>
#include <string>' | "$cxx" -stdlib=libc++ -x c++ -fsyntax-only - >/dev/null 2>&1; then
      required+=(libc++-dev libc++abi-dev)
    fi
    [ -f /usr/src/googletest/googletest/src/gtest-all.cc ] || [ -f /usr/src/gtest/src/gtest-all.cc ] ||
      required+=(googletest)
  fi
  command -v dot >/dev/null || optional+=(graphviz)
  return 0
}

# apt-get install PACKAGES...; on failure sets apt_failure to why.
apt_failure=""
apt_install() {
  local out
  if ! out=$(apt-get install -y -qq --no-install-recommends \
      -o Acquire::Retries=0 -o Acquire::http::Timeout=20 "$@" 2>&1); then
    apt_failure="apt-get install failed: ${out##*$'\n'}"
    return 1
  fi
}

find_missing
if [ $((${#required[@]} + ${#optional[@]})) -gt 0 ]; then
  wanted=("${required[@]}" "${optional[@]}")
  echo "missing: ${wanted[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! command -v apt-get >/dev/null; then
    apt_failure="there is no apt-get on this machine"
  else
    echo "installing them with apt-get"
    # Offline, update fails; install may still succeed from the local
    # cache, so its failure decides.
    apt-get update -qq -o Acquire::Retries=0 -o Acquire::http::Timeout=20 >/dev/null 2>&1 || true
    # Required and optional apart: an optional package the archive lacks
    # must not keep the required ones out.
    [ ${#required[@]} -eq 0 ] || apt_install "${required[@]}" || true
    [ ${#optional[@]} -eq 0 ] || apt_install "${optional[@]}" || true
  fi
  find_missing
  if [ ${#required[@]} -gt 0 ]; then
    echo "error: cudag needs these packages, which are missing and could not be installed: ${required[*]}" >&2
    echo "  (${apt_failure:-apt-get did not install them}). Install them and run this again." >&2
    exit 1
  fi
  for package in "${optional[@]}"; do
    echo "warning: optional package $package is missing and could not be installed" \
      "(${apt_failure:-apt-get did not install it}); going on without it: ${lost[$package]}"
  done
fi

if ! command -v nvcc >/dev/null; then
  if [ -x /usr/local/cuda/bin/nvcc ]; then
    echo "note: add /usr/local/cuda/bin to PATH (the scripts do it themselves)"
  else
    echo "error: the CUDA toolkit (nvcc) was not found; install CUDA 13.0 or newer" >&2
    exit 1
  fi
fi
