#!/usr/bin/env python3
"""Compile-fail check: passes only when compiling SOURCE fails and the
compiler's output matches the regex written in SOURCE as
`// expect-error: REGEX`.

usage: expect_compile_failure.py SOURCE -- COMPILER ARGS...
"""
import os
import re
import subprocess
import sys


def main() -> int:
    source = sys.argv[1]
    command = sys.argv[sys.argv.index("--") + 1:] + [source]
    with open(source, encoding="utf-8") as f:
        patterns = [line.split("expect-error:", 1)[1].strip()
                    for line in f if "expect-error:" in line]
    if not patterns:
        print(f"{source}: no '// expect-error: REGEX' line")
        return 1
    result = subprocess.run(command, capture_output=True, text=True,
                            env=dict(os.environ, LC_ALL="C"))
    output = result.stdout + result.stderr
    if result.returncode == 0:
        print(f"{source}: compiled, but it must not")
        return 1
    for pattern in patterns:
        if not re.search(pattern, output):
            print(f"{source}: failed as expected, but no match for /{pattern}/")
            print(output[:6000])
            return 1
    first_error = next((l for l in output.splitlines() if "error" in l), "")
    print(f"{source}: fails as expected: {first_error[:300]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
