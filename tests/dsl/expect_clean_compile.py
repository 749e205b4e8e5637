#!/usr/bin/env python3
"""Passes only when COMMAND compiles SOURCE without a single diagnostic: exit
status 0 and no line of output that is a warning, an error or a remark (the
command is expected to treat warnings as errors too; this also catches a
compiler that prints a warning without failing).

usage: expect_clean_compile.py SOURCE -- COMMAND...   (SOURCE is appended)
"""
import os
import re
import subprocess
import sys

DIAGNOSTIC = re.compile(r"(?:^|[\s:])(?:warning|error|remark)(?: #\d+(?:-[A-Z])?)?:", re.I)


def main() -> int:
    args = sys.argv[1:]
    source = args[args.index("--") - 1]
    command = args[args.index("--") + 1:] + [source]
    result = subprocess.run(command, capture_output=True, text=True, errors="replace",
                            env=dict(os.environ, LC_ALL="C"))
    output = result.stdout + result.stderr
    diagnostics = [line for line in output.splitlines() if DIAGNOSTIC.search(line)]
    name = os.path.basename(source)
    if result.returncode != 0 or diagnostics:
        print(f"{name}: exit status {result.returncode}, {len(diagnostics)} diagnostic line(s)")
        print(output[:20000])
        return 1
    print(f"{name}: compiled without a diagnostic: {' '.join(command)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
