#!/usr/bin/env python3
"""Runs every test of the gpu suite (examples included) under
compute-sanitizer's four tools and summarises the result.

usage: compute_sanitizer.py BUILD_DIR LOG_DIR [--tools memcheck,racecheck,...]
                            [--jobs N] [--only TEST,TEST]

memcheck runs with --leak-check full. CUDA API errors that a test provokes
on purpose (a refused update, a kernel whose parameters cannot be read) are
listed in expected_api_errors.txt as `test_name gtest_filter`: those cases
run in a second memcheck pass with --report-api-errors no (memory errors
and leaks still count), and are filtered out of the first pass, so any API
error left in the first pass is a real one.

Runs in parallel, then repeats alone each run that failed (the tool
misreports when several sanitized processes share the GPU); the run alone
is the verdict. Prints one line per (test,
tool) and a total; exits 1 if any run reports an error or fails.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# memcheck, synccheck and initcheck end with "ERROR SUMMARY: N errors";
# racecheck with "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)".
SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) error|RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) error")
RUN = re.compile(r"^\[ RUN      \] (\S+)")
API_ERROR = re.compile(r"Program hit (\w+) .* on CUDA API call to (\w+)")


def api_errors_by_case(text):
    """(gtest case, error, call) for every CUDA API error in a log."""
    case, out = "(outside a test)", []
    for line in text.splitlines():
        if m := RUN.match(line):
            case = m.group(1)
        elif m := API_ERROR.search(line):
            out.append((case, m.group(1), m.group(2)))
    return out


def expected_api_errors():
    out = {}
    with open(os.path.join(HERE, "expected_api_errors.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                test, pattern = line.split()
                out.setdefault(test, []).append(pattern)
    return out


def gpu_tests(build):
    raw = subprocess.run(["meson", "introspect", build, "--tests"], check=True,
                         capture_output=True, text=True).stdout
    return [t for t in json.loads(raw) if any(s.split(":")[-1] == "gpu" for s in t["suite"])]


def run_one(sanitizer, test, tool, extra, gtest_filter, log_dir, label):
    cmd = [sanitizer, "--tool", tool, "--error-exitcode", "99"] + extra + test["cmd"]
    if gtest_filter is not None:
        cmd.append("--gtest_filter=" + gtest_filter)
    env = dict(os.environ)
    env.update(test.get("env") or {})
    log = os.path.join(log_dir, f"{test['name']}.{label}.log")
    with open(log, "w", encoding="utf-8") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        try:
            rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env,
                                cwd=test.get("workdir") or None, timeout=900).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    text = open(log, encoding="utf-8", errors="replace").read()
    errors = [int(a or b) for a, b in SUMMARY.findall(text)]
    skipped = "[  SKIPPED ]" in text and "[  PASSED  ]" not in text
    return (test["name"], label, rc, sum(errors) if errors else None, skipped,
            api_errors_by_case(text))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("log_dir")
    ap.add_argument("--tools", default="memcheck,racecheck,synccheck,initcheck")
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    sanitizer = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    os.makedirs(args.log_dir, exist_ok=True)
    expected = expected_api_errors()
    tests = [t for t in gpu_tests(args.build)
             if not args.only or t["name"] in args.only.split(",")]

    jobs = []
    for t in tests:
        gtest = not t["name"].startswith("example_")  # the examples are plain programs
        deliberate = expected.get(t["name"], [])
        for tool in args.tools.split(","):
            extra = ["--leak-check", "full"] if tool == "memcheck" else []
            if tool == "memcheck" and deliberate and gtest:
                jobs.append((t, tool, extra, "-" + ":".join(deliberate), tool))
                jobs.append((t, tool, extra + ["--report-api-errors", "no"], ":".join(deliberate),
                             tool + "-deliberate-api-errors"))
            else:
                jobs.append((t, tool, extra, None, tool))

    results = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(run_one, sanitizer, t, tool, extra, flt, args.log_dir, label)
                   for t, tool, extra, flt, label in jobs]
        for fut in concurrent.futures.as_completed(futures):
            results.append(fut.result())
    # Several sanitized processes on one GPU at once make runs fail under
    # the tool that pass alone (an illegal address with no kernel named,
    # uninitialized reads of memory a kernel wrote; measured on an H100,
    # CUDA 13.0: 9 of 10 parallel memcheck runs of the jacobi example, 0 of
    # 14 parallel plain runs): a failed run is repeated alone, and that run
    # is the verdict.
    if args.jobs > 1:
        for i, r in enumerate(results):
            if r[2] == 0 and r[3] == 0:
                continue
            t, tool, extra, flt, label = next(j for j in jobs if j[0]["name"] == r[0] and j[4] == r[1])
            again = run_one(sanitizer, t, tool, extra, flt, args.log_dir, label + ".alone")
            results[i] = (r[0], r[1] + " (alone)", *again[2:])

    bad = 0
    for name, label, rc, errors, skipped, api in sorted(results, key=lambda r: r[:2]):
        ok = rc == 0 and errors == 0
        bad += not ok
        state = "ok" if ok else "FAIL"
        print(f"{name:40} {label:32} exit {rc!s:7} errors {errors!s:5} {state}"
              + ("  (skipped: no device)" if skipped else ""))
        for case, error, call in sorted(set(api)):
            print(f"    API error in {case}: {call} returned {error}")
    print(f"{len(results)} sanitizer runs, {len(results) - bad} clean, {bad} with errors or failures")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
