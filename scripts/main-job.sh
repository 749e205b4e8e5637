#!/usr/bin/env bash
# Quick start (1): install what is missing, build, and run the flagship
# pipeline (a Jacobi solver as one CUDA graph, verified against the CPU).
# Without a GPU it checks and draws the graph and says that nothing ran.
# Without a package network it goes on where only optional packages
# (Graphviz: the SVG picture) are missing, saying so, and stops where a
# required one is, naming it (scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
source scripts/env.sh
if [ ! -f build/build.ninja ]; then
  rm -rf build
  meson setup build 2>&1 | tail -n 4   # a failure's ERROR line is among the last
fi
ninja -C build examples/jacobi
./build/examples/jacobi build/jacobi.dot
