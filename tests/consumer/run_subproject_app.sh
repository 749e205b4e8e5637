#!/usr/bin/env bash
# Builds tests/consumer/app, a one-file application written as the README
# says ("Using cudag from meson"), with this checkout as its subproject
# 'cudag' and no cudag option set. Asserts that
#   - cudag builds its library alone: the whole build is at most 41 ninja
#     steps (297 when a subproject built cudag's tests, examples, tools and benchmarks);
#   - the application's .cu file, which uses the DSL, compiles with what
#     dependency('cudag') carries (nvcc's --expt-relaxed-constexpr under
#     GCC), and the program runs (no GPU needed);
#   - the application's `meson install` installs none of cudag's files
#     (headers, library, cudag.pc, CMake files): only the application.
# usage: run_subproject_app.sh SOURCE_ROOT
set -euo pipefail
max_steps=41
source_root=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$source_root"/tests/consumer/app/{meson.build,app.cu} "$work"/
mkdir -p "$work/subprojects"
ln -s "$source_root" "$work/subprojects/cudag"
cd "$work"
meson setup build >setup.log 2>&1 || { cat setup.log; exit 1; }

# The steps of the whole build, as ninja counts them.
NINJA_STATUS='[%f/%t] ' ninja -C build -n >plan.log 2>&1 || { cat plan.log; exit 1; }
steps=$(sed -n 's|^\[[0-9]*/\([0-9]*\)\] .*|\1|p' plan.log | tail -n 1)
echo "ninja steps of the application's build: ${steps:-?} (at most $max_steps)"
if [ -z "$steps" ] || [ "$steps" -gt "$max_steps" ]; then
  cat plan.log
  echo "FAIL: the application's build takes more than $max_steps steps: cudag builds more than its library"
  exit 1
fi

# nvcc's --expt-relaxed-constexpr comes with dependency('cudag') where the
# C++ compiler is GCC (the application's meson.build names no such flag).
if grep -q '^C++ compiler for the host machine: .*(gcc ' setup.log &&
   ! ninja -C build -t commands app | grep -F 'app.cu' | grep -q -- '-expt-relaxed-constexpr'; then
  echo "FAIL: the application's .cu file is compiled without nvcc's --expt-relaxed-constexpr"
  exit 1
fi
ninja -C build >build.log 2>&1 || { cat build.log; exit 1; }
./build/app

meson install -C build --no-rebuild --destdir "$work/stage" >install.log 2>&1 ||
  { cat install.log; exit 1; }
(cd stage && find . -type f -o -type l | sed 's|^\.||' | sort) >installed.txt
echo "installed:"
sed 's/^/  /' installed.txt
theirs=$(grep -E '/cudag/|/libcudag\.|/cudag(-uninstalled)?\.pc$|/cudagConfig' installed.txt || true)
if [ -n "$theirs" ]; then
  echo "FAIL: the application's meson install installed cudag's files:"
  echo "$theirs"
  exit 1
fi
grep -q '/app$' installed.txt || { echo "FAIL: the application itself was not installed"; exit 1; }
echo "subproject app: ok"
