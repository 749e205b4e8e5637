#!/usr/bin/env bash
# Builds tests/consumer as a separate meson project with this checkout as
# its subproject 'cudag', then runs it.
set -euo pipefail
source_root=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$source_root"/tests/consumer/{meson.build,consumer.cpp} "$work"/
mkdir -p "$work/subprojects"
ln -s "$source_root" "$work/subprojects/cudag"
cd "$work"
meson setup build -Dcudag:tests=false -Dcudag:examples=false -Dcudag:tools=false -Dcudag:benchmarks=false \
  -Dcudag:device_code=false >setup.log 2>&1 || { cat setup.log; exit 1; }
ninja -C build consumer >build.log 2>&1 || { cat build.log; exit 1; }
./build/consumer
