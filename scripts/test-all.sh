#!/usr/bin/env bash
# Quick start (2): install what is missing, build everything, run the whole
# test suite (gpu tests skip themselves, saying why, where there is no GPU),
# and print "N passed, N failed, N skipped" counted from meson's test log.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
source scripts/env.sh
build=${BUILD_DIR:-build}
if [ ! -f "$build/build.ninja" ]; then
  rm -rf "$build"
  meson setup "$build" 2>&1 | tail -n 4   # a failure's ERROR line is among the last
fi
ninja -C "$build" -j"${JOBS:-$(nproc)}"
status=0
meson test -C "$build" --num-processes "${JOBS:-$(nproc)}" --print-errorlogs || status=$?
python3 scripts/test_summary.py "$build/meson-logs/testlog.json"
exit $status
