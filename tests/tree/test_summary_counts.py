#!/usr/bin/env python3
"""The count line CI ends with (scripts/test_summary.py) counts each
GoogleTest case, and fails where meson failed: a failing case, a crash after
the last case, a binary that skipped its cases, a test that is not
GoogleTest, and a log that is missing. Exits 1 naming the first wrong count."""
import json
import os
import subprocess
import sys
import tempfile

root = sys.argv[1]
script = os.path.join(root, "scripts", "test_summary.py")


def gtest(*cases):
    lines = ["[==========] Running tests."]
    for name, result in cases:
        lines += [f"[ RUN      ] {name}", f"[{result:^10}] {name} (0 ms)"]
    return "\n".join(lines) + "\n"


# (what, entries, expected line)
cases = [
    ("a failing case", [{"result": "FAIL", "stdout": gtest(("A.ok", "OK"), ("A.bad", "FAILED"))}],
     "1 passed, 1 failed, 0 skipped"),
    ("skipped cases in a binary meson calls OK",
     [{"result": "OK", "stdout": gtest(("A.ok", "OK"), ("A.gpu", "SKIPPED"))}],
     "1 passed, 0 failed, 1 skipped"),
    ("a crash after the last case", [{"result": "FAIL", "stdout": gtest(("A.ok", "OK"))}],
     "1 passed, 1 failed, 0 skipped"),
    ("a timeout", [{"result": "TIMEOUT", "stdout": ""}], "0 passed, 1 failed, 0 skipped"),
    ("tests that are not GoogleTest",
     [{"result": "OK", "stdout": "compiled"}, {"result": "SKIP", "stdout": ""},
      {"result": "EXPECTEDFAIL", "stdout": ""}, {"result": "ERROR", "stdout": ""}],
     "2 passed, 1 failed, 1 skipped"),
]

failures = 0
with tempfile.TemporaryDirectory() as tmp:
    for what, entries, expected in cases:
        log = os.path.join(tmp, "testlog.json")
        with open(log, "w") as out:
            for i, e in enumerate(entries):
                out.write(json.dumps({"name": f"t{i}", **e}) + "\n")
        line = subprocess.run([sys.executable, script, log], capture_output=True, text=True).stdout.strip()
        if line != expected:
            print(f"{what}: '{line}', expected '{expected}'")
            failures += 1
    # Two logs add up; a missing one (its build failed) counts as a failure.
    line = subprocess.run([sys.executable, script, log, os.path.join(tmp, "none.json")],
                          capture_output=True, text=True).stdout.strip()
    if line != "2 passed, 2 failed, 1 skipped":
        print(f"a missing log: '{line}', expected '2 passed, 2 failed, 1 skipped'")
        failures += 1
print("test_summary counts right" if failures == 0 else f"{failures} wrong counts")
sys.exit(1 if failures else 0)
