#!/usr/bin/env python3
"""Fails when a public header is missing from the lists that
tests/headers/meson.build compiles alone (or a listed one no longer exists).

usage: check_header_list.py SOURCE_ROOT --all HEADER...

The list must name every header under include/cudag/ and dsl/cudag/
(the meson.build compiles those under cudag/dsl with nvcc
too), as they are included: cudag/dsl/graph.hpp.
"""
import pathlib
import sys


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    args = sys.argv[2:]
    listed = set(args[args.index("--all") + 1:])
    dsl = {str(p.relative_to(root / "dsl")) for p in (root / "dsl" / "cudag").rglob("*.hpp")}
    include = {str(p.relative_to(root / "include")) for p in (root / "include" / "cudag").rglob("*.hpp")}
    problems = []
    expected = include | dsl
    problems += [f"{h}: not in the list of tests/headers/meson.build" for h in sorted(expected - listed)]
    problems += [f"{h}: in the list of tests/headers/meson.build, but no such header"
                 for h in sorted(listed - expected)]
    for p in problems:
        print(p)
    print(f"{len(include | dsl)} public headers ({len(dsl)} of the DSL): {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
