#!/usr/bin/env bash
# cudag needs CUDA 13.0 or newer (the native table uses 13.0's signatures):
# meson's configure refuses an older toolkit with a message that says so.
# An nvcc that reports release 12.4 (this machine's nvcc behind a wrapper
# that changes its --version) is given to `meson setup`, which must fail
# with that message.
# usage: run_old_cuda.sh SOURCE_ROOT NVCC
set -euo pipefail
source_root=$(cd "$1" && pwd)
nvcc=$(command -v "$2" || echo "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/nvcc" <<EOF2
#!/bin/sh
if [ "\$1" = --version ]; then
  "$nvcc" --version | sed 's/release [0-9.]*, V[0-9.]*/release 12.4, V12.4.131/'
  exit 0
fi
exec "$nvcc" "\$@"
EOF2
chmod +x "$work/nvcc"
"$work/nvcc" --version | grep -q 'V12.4.131' || { echo "the wrapper does not report 12.4"; exit 1; }
printf "[binaries]\ncuda = '%s'\n" "$work/nvcc" >"$work/native.ini"

if meson setup "$work/build" "$source_root" --native-file "$work/native.ini" >"$work/setup.log" 2>&1; then
  cat "$work/setup.log"
  echo "FAIL: meson setup accepted nvcc 12.4"
  exit 1
fi
if ! grep -q 'cudag needs CUDA 13.0 or newer' "$work/setup.log"; then
  cat "$work/setup.log"
  echo "FAIL: meson setup failed, but not with 'cudag needs CUDA 13.0 or newer'"
  exit 1
fi
grep 'ERROR' "$work/setup.log"
echo "old CUDA refused: ok"
