#!/usr/bin/env python3
"""Coverage of the compile-fail cases: fails when a compile error the
library can raise has no case whose expected first error names it, or when
a case file is not registered.

usage: check_coverage.py SOURCE_ROOT --cases FILE... --

- Every error type: a template named in `sizeof(NAME<...>)`,
  `std::type_identity<NAME<...>>` or `node_ref_or<NAME<...>` (the builder's
  refused calls) in a header under include/ or dsl/ (the library's error
  types), and every error function `NAME_out_of_range<...>` or
  `NAME_refused<...>`,
  must appear in the `// expect-error:` pattern of some case.
- Every static_assert with a message in those headers must have a case
  whose pattern matches "static assertion failed: MESSAGE". (Those without
  a message call a check that names an error type: covered by the first
  rule; tests/compile_fail/meson.build lists them by site.)
- Every .cpp file under tests/compile_fail and tests/compile_fail_builder
  that carries an `expect-error:` line must be among the registered FILEs.
"""
import pathlib
import re
import sys

# Never-defined types named in sizeof(NAME<...>); the shape problems' error
# types, chosen by std::type_identity<NAME<...>> (dsl/cudag/dsl/graph.hpp);
# the builder's refused calls, node_ref_or<NAME<...>, ...> (cudag/builder.hpp);
# error functions whose call is the error (NAME_out_of_range<...>(...),
# NAME_refused<...>(...)).
# `CUDAG_DSL_REPORTED(NAME<...>)` (dsl/cudag/dsl/kernel_node.hpp) wraps an
# error type for g++, where the error types are complete: NAME is the type.
ERROR_TYPE = re.compile(r"(?:sizeof\((?:CUDAG_DSL_REPORTED\()?|type_identity<|node_ref_or<\s*)(\w+)<"
                        r"|\b(\w+_(?:out_of_range|refused))<\w")
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
MESSAGE = re.compile(r',\s*((?:"(?:[^"\\]|\\.)*"\s*)+)$')  # the trailing string literals


def statements(text: str, keyword: str):
    """The argument text of each `keyword(...)` in text (balanced parentheses)."""
    for m in re.finditer(r"\b" + keyword + r"\s*\(", text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        yield text[m.end():i - 1]


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    registered = {pathlib.Path(p).resolve() for p in sys.argv[sys.argv.index("--cases") + 1:]}
    headers = sorted(p for d in ("include", "dsl") for p in (root / d).rglob("*.hpp"))
    case_dirs = [root / "tests" / "compile_fail", root / "tests" / "compile_fail_builder"]
    cases = {}
    for d in case_dirs:
        for p in sorted(d.glob("*.cpp")):
            patterns = [line.split("expect-error:", 1)[1].strip()
                        for line in p.read_text(encoding="utf-8").splitlines()
                        if "expect-error:" in line]
            if patterns:
                cases[p] = patterns
    problems = []
    for p in cases:
        if p.resolve() not in registered:
            problems.append(f"{p.relative_to(root)}: a case not registered in its meson.build")
    all_patterns = [(p, pattern) for p, ps in cases.items() for pattern in ps]

    error_types = {}
    messages = {}
    for h in headers:
        text = h.read_text(encoding="utf-8")
        for groups in ERROR_TYPE.findall(text):
            error_types.setdefault(next(g for g in groups if g), h)
        for args in statements(text, "static_assert"):
            message = MESSAGE.search(args.strip())
            if message:
                text = "".join(STRING.findall(message.group(1)))
                messages.setdefault(bytes(text, "utf-8").decode("unicode_escape"), h)
    for name, h in sorted(error_types.items()):
        if not any(name in pattern for _, pattern in all_patterns):
            problems.append(f"error type {name} ({h.relative_to(root)}): no case expects it")
    for message, h in sorted(messages.items()):
        text = "static assertion failed: " + message
        if not any(re.search(pattern, text) for _, pattern in all_patterns):
            problems.append(f"static_assert \"{message}\" ({h.relative_to(root)}): no case expects it")
    for problem in problems:
        print(problem)
    print(f"{len(error_types)} error types, {len(messages)} static_assert messages, "
          f"{len(cases)} cases: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
