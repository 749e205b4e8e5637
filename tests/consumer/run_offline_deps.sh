#!/usr/bin/env bash
# The dependency step of the quick start (scripts/install-deps.sh, which
# scripts/main-job.sh runs first) on a machine whose package manager cannot
# install anything: PATH holds every program of this machine but Graphviz's
# dot (and, in the last case, ninja), and apt-get is a stand-in that fails as
# apt-get does offline (exit 100), or is absent.
#   - only Graphviz missing: the step names it and what is lost, and goes on;
#   - a required package missing too: the step stops, naming it.
# usage: run_offline_deps.sh SOURCE_ROOT
set -euo pipefail
source_root=$(cd "$1" && pwd)
script="$source_root/scripts/install-deps.sh"
bash=$(command -v bash)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A directory of links to every program on PATH, less the hidden ones.
# usage: fake_path DIR HIDDEN...
fake_path() {
  local dir=$1 d
  shift
  mkdir -p "$dir"
  local IFS=:
  for d in $PATH; do
    [ -d "$d" ] && cp -sn "$d"/* "$dir"/ 2>/dev/null || true
  done
  unset IFS
  for hidden in dot apt-get apt "$@"; do rm -f "$dir/$hidden"; done
}

failing_apt() {
  cat >"$1/apt-get" <<'APT'
#!/bin/sh
echo "apt-get $*" >>"$APT_LOG"
echo "E: Failed to fetch http://deb.debian.org/debian (stand-in: no package network)" >&2
exit 100
APT
  chmod +x "$1/apt-get"
}

failed=0
fail() { echo "FAIL: $*"; failed=1; }
# usage: run NAME DIR -> sets out and rc
run() {
  set +e
  out=$(cd "$work" && APT_LOG="$work/$1.apt" PATH="$2" "$bash" "$script" 2>&1)
  rc=$?
  set -e
  printf '== %s (exit %d)\n%s\n' "$1" "$rc" "$out"
}

# 1. Graphviz missing, apt-get failing: goes on, saying what is lost.
fake_path "$work/offline"
failing_apt "$work/offline"
run offline "$work/offline"
[ "$rc" -eq 0 ] || fail "the step stopped (exit $rc) though only Graphviz is missing"
grep -q 'install' "$work/offline.apt" 2>/dev/null || fail "apt-get was not asked to install graphviz"
grep -q 'warning: optional package graphviz is missing' <<<"$out" || fail "no warning naming graphviz"
grep -q 'DOT files are still written' <<<"$out" || fail "the warning does not say what is lost"

# 2. Graphviz missing, no apt-get at all: the same.
fake_path "$work/no-apt"
run no-apt "$work/no-apt"
[ "$rc" -eq 0 ] || fail "the step stopped (exit $rc) without apt-get though only Graphviz is missing"
grep -q 'no apt-get on this machine' <<<"$out" || fail "the warning does not say apt-get is absent"
grep -q 'graphviz' <<<"$out" || fail "no warning naming graphviz without apt-get"

# 3. ninja missing too, apt-get failing: stops, naming it.
fake_path "$work/required" ninja
failing_apt "$work/required"
run required "$work/required"
[ "$rc" -eq 1 ] || fail "the step did not stop (exit $rc) though ninja is missing"
grep -q 'error: cudag needs these packages.*ninja-build' <<<"$out" ||
  fail "the error does not name ninja-build"
grep -q 'apt-get install failed' <<<"$out" || fail "the error does not say apt-get failed"

[ "$failed" -eq 0 ] && echo "offline dependency step: ok"
exit "$failed"
