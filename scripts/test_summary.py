#!/usr/bin/env python3
"""Counts test results from meson test logs (testlog.json), one GoogleTest
case at a time: meson reports a GoogleTest binary whose cases called
GTEST_SKIP as OK, so each binary's output is read for its cases. A test that
is not GoogleTest (compile-fail cases) counts by meson's result.
Prints "N passed, N failed, N skipped" (summed over all logs given); a log
that does not exist (its build failed before any test ran) counts as one
failure."""
import json
import re
import sys

CASE = re.compile(r"^\[\s+(OK|FAILED|SKIPPED)\s+\] \S+ \(\d+ ms\)$")

passed = failed = skipped = 0
for path in sys.argv[1:]:
    try:
        log = open(path)
    except OSError as error:
        print(f"no test log: {error}", file=sys.stderr)
        failed += 1
        continue
    with log:
        for line in log:
            entry = json.loads(line)
            cases = [m.group(1) for m in map(CASE.match, entry.get("stdout", "").splitlines()) if m]
            result = entry.get("result", "")
            if cases:
                passed += cases.count("OK")
                failed += cases.count("FAILED")
                skipped += cases.count("SKIPPED")
                # A crash after the last case, a timeout, or a non-zero exit
                # with no failed case still fails the binary.
                if result not in ("OK", "SKIP", "EXPECTEDFAIL") and "FAILED" not in cases:
                    failed += 1
            elif result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
            else:
                failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
