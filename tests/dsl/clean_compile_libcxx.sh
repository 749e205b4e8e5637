#!/usr/bin/env bash
# A translation unit compiled by clang++ against libc++, without a single
# diagnostic (expect_clean_compile.py), from a build by another compiler:
# cudag's headers that only g++ or libstdc++ accept fail here, in the
# developer's own build, before CI's clang++/libc++ build (.ci/run) does.
# Skips where clang++ cannot compile against libc++ on this machine.
# usage: clean_compile_libcxx.sh PYTHON DRIVER SOURCE CLANG ARGS...
set -uo pipefail
python=$1 driver=$2 source=$3 clang=$4
shift 4
if ! printf '#include <string>\n' | "$clang" -stdlib=libc++ -x c++ -fsyntax-only - >/dev/null 2>&1; then
  echo "SKIP: $clang cannot compile against libc++ here (libc++-dev and libc++abi-dev: scripts/install-deps.sh --ci)"
  exit 77
fi
exec "$python" "$driver" "$source" -- "$clang" -stdlib=libc++ "$@"
