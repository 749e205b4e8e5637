#!/usr/bin/env bash
# Line and branch coverage of the library by the test suites: configures a
# debug build with --coverage (g++ compiles src/ and the tests, so the
# headers of include/ and dsl/ are measured where the tests instantiate
# them), builds it, runs the cpu suite (and the gpu suite where device code
# is built), and reports through gcovr over src/, include/ and dsl/ only,
# throw branches and unreachable branches excluded:
#   - one line of line and branch percentages for src/ + include/, one for dsl/;
#   - BUILD/coverage/coverage.json (gcovr's JSON), the two summaries
#     (summary-lib.json, summary-dsl.json) and an HTML report (index.html);
#   - the largest uncovered regions (scripts/coverage_regions.py).
# Exits non-zero only when the build or a test fails, never for low coverage;
# without gcovr the tests still run and the report is skipped, saying so.
#
# usage: bash scripts/coverage.sh [--gpu | --cpu]
#   --gpu  build device code and run the gpu suite too (the default where
#          `nvidia-smi -L` finds a GPU)
#   --cpu  no device code, the cpu suite only (the default without a GPU)
#   BUILD_DIR  the build directory (default build-coverage)
#   JOBS       parallel jobs (default: the number of cores)
#
# The cpu suite runs without its `slow` tests: those install this build and
# link it into consumer projects, which do not link the gcov runtime that a
# library built with --coverage needs (and measure nothing the other tests
# do not). gcov is the one of the compiler that built the objects (gcov-N
# for g++-N); gcovr 5 cannot read what gcov 13 writes: there, use gcovr 6 or
# later, or build with CXX=g++-12 NVCC_CCBIN=g++-12.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

gpu=auto
for arg in "$@"; do
  case $arg in
    --gpu) gpu=on ;;
    --cpu) gpu=off ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "coverage.sh: unknown argument: $arg (see --help)" >&2; exit 2 ;;
  esac
done
if [ "$gpu" = auto ]; then
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then gpu=on; else gpu=off; fi
fi
if [ "$gpu" = on ]; then device_code=true; else device_code=false; fi

build=${BUILD_DIR:-build-coverage}
jobs=${JOBS:-$(nproc)}
report=$build/coverage
options=(-Dbuildtype=debug -Dexamples=false -Dtools=false -Dbenchmarks=false -Ddevice_code=$device_code)
if [ "$device_code" = true ]; then
  # meson's b_coverage asks every linker for its coverage flag, and nvcc's
  # (nvlink) has none: setup fails where a target links .cu objects. So g++
  # gets --coverage by hand, and nvcc, which links the gpu tests against the
  # instrumented library, the gcov runtime. The .cu files themselves are not
  # instrumented: what they instantiate of include/ and dsl/ is not counted.
  options+=(-Db_coverage=false -Dcpp_args=--coverage -Dcpp_link_args=--coverage -Dcuda_link_args=-lgcov)
else
  options+=(-Db_coverage=true)
fi

echo "== coverage: $build (device code: $device_code)"
setup() {  # a failure's ERROR line is among the last
  local log result
  log=$(mktemp)
  meson setup "$@" "$build" "${options[@]}" >"$log" 2>&1
  result=$?
  if [ $result = 0 ]; then grep -A8 '^  User defined options' "$log"; else tail -n 20 "$log"; fi
  rm -f "$log"
  return $result
}
# An existing directory is configured again (an incremental build); one
# that no longer configures (an option whose type changed, say) is set up
# afresh.
if ! { [ -f "$build/build.ninja" ] && setup --reconfigure; }; then
  [ -e "$build" ] && echo "coverage: setting $build up afresh"
  rm -rf "$build"
  setup || { echo "coverage: meson setup failed"; exit 1; }
fi
ninja -C "$build" -j"$jobs" || { echo "coverage: the build failed"; exit 1; }

# Counts from an earlier run would add up with this one's.
find "$build" -name '*.gcda' -delete
suites=(--suite cpu)
[ "$gpu" = on ] && suites+=(--suite gpu)
status=0
meson test -C "$build" "${suites[@]}" --no-suite slow --num-processes "$jobs" \
  --timeout-multiplier 3 --print-errorlogs || status=1
echo "coverage run: $(python3 scripts/test_summary.py "$build/meson-logs/testlog.json")"

gcovr=()
if command -v gcovr >/dev/null; then
  gcovr=(gcovr)
else
  for python in python3 /usr/bin/python3; do
    if "$python" -m gcovr --version >/dev/null 2>&1; then gcovr=("$python" -m gcovr); break; fi
  done
fi
if [ ${#gcovr[@]} = 0 ]; then
  echo "coverage: gcovr is not installed (apt-get install gcovr, or pip install gcovr): tests ran, no coverage report"
  exit $status
fi
gcovr_version=$("${gcovr[@]}" --version | head -n 1)
# gcov must be the one of the compiler that built the objects (g++-12 writes
# what gcov 13 cannot read, and the other way round).
cxx=$(python3 -c 'import json, shlex, sys
print(next(shlex.split(e["command"])[0] for e in json.load(open(sys.argv[1]))
           if e["file"].endswith(".cpp")))' "$build/compile_commands.json" 2>/dev/null)
gcov=gcov
if [ -n "$cxx" ] && "$cxx" -v 2>&1 | grep -q '^gcc version'; then
  major=$(cd "$build" && "$cxx" -dumpversion)
  major=${major%%.*}
  for candidate in "gcov-$major" gcov; do
    if "$candidate" --version 2>/dev/null | head -n 1 | grep -q " $major\.[0-9]"; then gcov=$candidate; break; fi
  done
  # gcovr 5 stops at the branch lines gcov 13 writes ("branch 1 never
  # executed (fallthrough)").
  gcovr_major=$(grep -o '[0-9][0-9]*' <<<"$gcovr_version" | head -n 1)
  if [ "$major" -ge 13 ] && [ "${gcovr_major:-0}" -lt 6 ]; then
    echo "coverage: $gcovr_version does not read the output of gcov $major: use gcovr 6 or later," \
      "or build with g++ 12 (CXX=g++-12 NVCC_CCBIN=g++-12 in a new build directory); tests ran, no coverage report"
    exit $status
  fi
fi
echo "== coverage report: $gcovr_version, $($gcov --version | head -n 1)"

mkdir -p "$report"
rm -f "$report"/*.json "$report"/*.html "$report"/*.css
# --root: the repository, so the filters and the report's file names are
# relative to it; the build directory is where the .gcda files are searched
# (the library's and every test object's: headers are measured through the
# tests that instantiate them).
collect() {
  "${gcovr[@]}" --root . --filter 'src/' --filter 'include/' --filter 'dsl/' \
    --exclude-throw-branches --exclude-unreachable-branches -j "$jobs" \
    --gcov-executable "$gcov" --json "$report/coverage.json" "$@" "$build" >"$report/gcovr.log" 2>&1
}
# Newer gcovr releases refuse by default to merge a function found on
# different lines in different objects, naming the option that allows it.
if ! collect && ! { grep -q -- '--merge-mode-functions' "$report/gcovr.log" &&
                    collect --merge-mode-functions=separate; }; then
  tail -n 20 "$report/gcovr.log"
  echo "coverage: gcovr failed (log: $report/gcovr.log)"
  exit $status
fi
grep -v '^(INFO)' "$report/gcovr.log" | head -n 20

# The summaries, from the JSON report (gcov does not run again).
summary() {  # label file filters...
  local label=$1 out=$2; shift 2
  "${gcovr[@]}" --root . --add-tracefile "$report/coverage.json" "$@" \
    --json-summary "$out" >/dev/null 2>>"$report/gcovr.log" || { echo "$label: gcovr failed"; return; }
  python3 - "$label" "$out" <<'EOF'
import json, sys
s = json.load(open(sys.argv[2]))
def pct(kind):
    total, covered = s[kind + "_total"], s[kind + "_covered"]
    return f"{100.0 * covered / total if total else 0.0:.1f}% ({covered} of {total})"
print(f"coverage {sys.argv[1]}: lines {pct('line')}, branches {pct('branch')}")
EOF
}
summary "src/ + include/" "$report/summary-lib.json" --filter 'src/' --filter 'include/'
summary "dsl/" "$report/summary-dsl.json" --filter 'dsl/'
"${gcovr[@]}" --root . --add-tracefile "$report/coverage.json" --html-details "$report/index.html" \
  >/dev/null 2>>"$report/gcovr.log" && echo "HTML report: $report/index.html"

python3 scripts/coverage_regions.py "$report/coverage.json" --top 25 --min-lines 20 \
  --root . --dirs src include dsl || echo "coverage: coverage_regions.py failed"
exit $status
