#!/usr/bin/env python3
"""Compile-fail check: passes only when compiling SOURCE fails cleanly and the
compiler's FIRST error matches every `// expect-error: REGEX` line of SOURCE.

usage: expect_compile_failure.py [--single-error] [--require-name] [--error-first]
                                 [--max-output-bytes=N] [--compiler=ID]
                                 SOURCE -- COMPILER ARGS...

SOURCE is appended to COMPILER ARGS. The rules, in order:

1. The compiler must fail. A declaration that compiles fails the test.
2. The compiler must not crash: an exit status of 128 or more (a signal:
   cudafe++ dies with 139) or a negative one, or the words "Segmentation
   fault", "internal compiler error" or "internal error" anywhere in the
   output fail the test even if the message matched: a user who makes this
   mistake would see the crash.
3. The first error must match. An error line is a line holding
   "error:" (g++: "file:12:3: error: ...", nvcc's front end:
   "file(12): error: ...", also "fatal error:", "catastrophic error:" and
   "error #123-D:") after a space, a colon or the line's start; a
   "... errors detected in the compilation of" summary is not one. The
   first error is the first error line plus the lines that continue it:
   the indented lines right after it (the source line and caret that g++
   and nvcc print, nvcc's "argument types are: ..."), at most 10, up to
   the next line that starts a new diagnostic (not indented: a note, a
   warning, g++'s "In instantiation of"/"required from" context of the
   next error) or nvcc's "detected during:" instantiation context.
   Why this block: the pattern names the fault the user must read first.
   g++ prints the context of an error ("In instantiation of ...", "required
   from ...") BEFORE the error line, and those lines spell the template
   arguments of every enclosing call, node names included; a later error
   may be a cascade. Neither may satisfy the pattern. The lines after the
   error line are the same error (its source line, nvcc's continued
   message) until a new diagnostic starts; the cap keeps a long list of
   candidates out. The notes that follow the error line belong to it and
   are part of the block (g++'s "note: ... declared here", nvcc's "note
   #2703-D: cannot call non-constexpr function ..." after "expression must
   have a constant value": where a constant evaluation fails, nvcc names
   the function only in the note); g++'s "In file included from" lines
   between them are skipped.
4. The first 5 lines of the output (g++'s "In file included from ..."
   lines not counted) must hold the text of every `// expect-name: TEXT`
   line: the node, edge, path or parameter the error is about, where a
   person reads first, not after a context that spells the whole graph.
   g++ prints names as text and is read as printed; nvcc prints them as
   character lists and is read after the normalisation below (its front
   end has no way to print computed text as text). With --require-name a
   case without an `expect-name:` line fails.
5. With --max-output-bytes=N, the whole output must be at most N bytes.
6. With --single-error, the output must hold exactly one error line: one
   mistake, one error, no cascade. A case whose cascade comes from code it
   does not test says so, and why, in a `// cascade-known: REASON` line
   (every compiler) or `// cascade-known nvcc: REASON` (nvcc only, or
   `clang`, `gcc`); a crash still fails it. Under clang, an error that only
   restates the first one where its result was needed ("constexpr variable
   'g' must be initialized by a constant expression", "static_assert
   expression is not an integral constant expression", "call to consteval
   function ... is not a constant expression") is not counted.
7. With --error-first, under g++: the first error is the output's first
   line, not counting g++'s include chain and the "In function ...:" /
   "At global scope:" line it prints before an error inside a function: the
   fault and its node read first, before any "In instantiation of" context
   (which spells the template arguments of every enclosing call). A case
   whose fault g++ can only report inside a context says why in a
   `// context-first gcc: REASON` line (a value checked by constant
   evaluation, a static_assert in a template).

The compiler (gcc, clang or nvcc) is given by --compiler=ID, or read from
the command's name. Where a compiler spells a fault otherwise, the case
says how in lines for it alone, which replace the general ones under it:
`// expect-error clang: REGEX`, `// expect-name clang: TEXT`. Clang 14
prints a fixed_string template argument as its character codes, the first
ten only (`{{112, 105, 99, 107, 0}}`, read as `{"pick"}`; a longer one as
`{"pick[1]/gr..."}`), and names only the error type where the error is a
deleted destructor or a non-constexpr constructor; where it prints no name
in its first lines at all, `// name-unprinted clang: REASON` says so and the
name is not asserted under clang (the error still is). Clang prints the
source line unindented: there, every line up to the next diagnostic that
is not a note belongs to the first error's block.

Before matching, the output is normalised so that one pattern serves g++
and nvcc (EDG front end): nvcc prints a fixed_string template argument as
a list of characters, `fixed_string<5UL>{{'s', 'c', 'a', 'l', 'e', '\\000'}}`,
which is rewritten as g++ prints it, `fixed_string<5>{"scale"}`; integer
literals lose their suffixes (`4UL` -> `4`); `T *` and `T &` lose the
space (`float *` -> `float*`); clang's static_assert message reads as
g++'s ("static assertion failed: MESSAGE"). Patterns are written in g++'s
spelling.
"""
import os
import re
import subprocess
import sys

ERROR_LINE = re.compile(r"(?:^|[\s:])(?:fatal |catastrophic )?error(?: #\d+(?:-[A-Z])?)?:")
CONTEXT_LINE = re.compile(r"^\s*detected during")
NOTE_LINE = re.compile(r"(?:^|[\s:])note(?: #\d+(?:-[A-Z])?)?:")
INCLUDED_FROM = re.compile(r"^(?:In file included from |\s+from )")
# g++'s line before an error inside a function, or after one.
FUNCTION_SCOPE = re.compile(r": (?:In (?:member )?function .*|At global scope):$")
# Clang: a diagnostic's first line, and its closing count.
DIAGNOSTIC = re.compile(r"^\S[^:]*:\d+(?::\d+)?: |^In instantiation of |^\S[^:]*: In ")
GENERATED = re.compile(r"^\d+ (?:errors?|warnings?)(?: and \d+ \w+)? generated\.")
# Clang reports a failed check a second time where its result was needed (a
# constexpr variable's initializer, a static_assert over the checking call):
# the same mistake restated, not a cascade from other code.
CLANG_RESTATED = re.compile(r"error: (?:constexpr variable '\w+' must be initialized by a constant "
                            r"expression|static_assert expression is not an integral constant expression"
                            r"|call to consteval function '[^']*' is not a constant expression)")
# Clang 14's static_assert message, in g++'s spelling after normalisation.
CLANG_STATIC_ASSERT = re.compile(r"static_assert failed(?: due to requirement '.*?')? \"(.*)\"$", re.M)
HEAD_LINES = 5
CRASH_MARKERS = ("segmentation fault", "internal compiler error", "internal error")
CONTINUATION_LIMIT = 10

# Clang 14 prints a fixed_string template argument as its character codes,
# `{{115, 99, 97, 108, 101, 0}}`, the first ten only and then `...`.
CODE_LIST = re.compile(r"\{\{((?:\d+, ){0,9}\d+)(, \.\.\.)?\}\}")
CHAR_LIST = re.compile(r"\{\{((?:'(?:[^'\\]|\\[0-7]{1,3}|\\.)'(?:, )?)+)\}\}")
ONE_CHAR = re.compile(r"'([^'\\]|\\[0-7]{1,3}|\\.)'")
INTEGER_SUFFIX = re.compile(r"\b(\d+)(?:ULL|ull|UL|ul|LL|ll|U|u|L|l)\b")
SPACE_BEFORE_DECLARATOR = re.compile(r"([\w>]) ([*&])")


def _string_of_chars(match: re.Match) -> str:
    text = ""
    for c in ONE_CHAR.findall(match.group(1)):
        if c.startswith("\\") and c[1:].isdigit():
            code = int(c[1:], 8)
            if code == 0:
                break  # the terminating NUL
            text += "\\%03o" % code
        elif c in ('"', "\\"):
            text += "\\" + c
        else:
            text += c[1:] if c.startswith("\\") else c
    return '{"' + text + '"}'


def _string_of_codes(match: re.Match) -> str:
    text = ""
    for code in map(int, match.group(1).split(", ")):
        if code == 0:
            break  # the terminating NUL
        text += chr(code) if 32 <= code < 127 and chr(code) not in '"\\' else "\\%03o" % code
    # Cut short by the compiler: the name's first ten characters, then "..."
    # (a pattern naming the whole name cannot match it).
    return '{"' + text + ('..."}' if match.group(2) else '"}')


def normalise(output: str) -> str:
    output = CODE_LIST.sub(_string_of_codes, output)
    output = CLANG_STATIC_ASSERT.sub(r"static assertion failed: \1", output)
    output = CHAR_LIST.sub(_string_of_chars, output)
    output = INTEGER_SUFFIX.sub(r"\1", output)
    return SPACE_BEFORE_DECLARATOR.sub(r"\1\2", output)


def error_lines(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if ERROR_LINE.search(line)]


def first_error(lines: list[str], first: int, clang: bool = False) -> str:
    """The first error line, its continuation, and the notes that follow it
    (each with its own continuation; g++'s "In file included from" lines
    between them are skipped). Clang prints the source line as it is, not
    indented: there, every line up to the next diagnostic that is not a note
    continues the block."""
    block = [lines[first]]
    taken = 0
    for line in lines[first + 1:]:
        if taken >= CONTINUATION_LIMIT or CONTEXT_LINE.match(line) or ERROR_LINE.search(line):
            break
        if INCLUDED_FROM.match(line):
            continue
        if clang:
            if (DIAGNOSTIC.match(line) and not NOTE_LINE.search(line)) or GENERATED.match(line):
                break
        elif not line[:1].isspace() and not NOTE_LINE.search(line):
            break
        block.append(line)
        taken += 1
    return "\n".join(block)


def names_in_head(raw: str, names: list[str], head: int) -> list[str]:
    """The names of `names` missing from the first `head` lines of `raw`, not
    counting g++'s include chain ("In file included from", "from ...")."""
    lines = [line for line in raw.splitlines() if not INCLUDED_FROM.match(line)]
    text = "\n".join(lines[:head])
    return [n for n in names if n not in text]


def crash_of(returncode: int, output: str) -> str:
    if returncode < 0 or returncode >= 128:
        return f"exit status {returncode}"
    lower = output.lower()
    for marker in CRASH_MARKERS:
        if marker in lower:
            return f"'{marker}' in the output"
    return ""


CASCADE_KNOWN = re.compile(r"cascade-known(?: (\w+))?:\s*(.*)")


def known_cascades(text: str, compiler: str) -> list[str]:
    """The reasons of the `cascade-known` lines that apply to `compiler` (an
    id: gcc, clang, nvcc), each with the comment lines that continue it."""
    reasons = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = CASCADE_KNOWN.search(line)
        if not m or (m.group(1) is not None and m.group(1) != compiler):
            continue
        reason = m.group(2)
        for more in lines[i + 1:]:
            words = more.split()
            if not more.startswith("// ") or len(words) < 2 or words[1].endswith(":"):
                break
            reason += " " + more[3:].strip()
        reasons.append(reason)
    return reasons


def expectations(text: str, tag: str, compiler: str) -> list[str]:
    """The values of the `TAG COMPILER: VALUE` lines of `text` where it has
    any (an expectation in one compiler's spelling), else of `TAG: VALUE`."""
    own = [line.split(f"{tag} {compiler}:", 1)[1].strip()
           for line in text.splitlines() if f"{tag} {compiler}:" in line]
    return own or [line.split(f"{tag}:", 1)[1].strip()
                   for line in text.splitlines() if f"{tag}:" in line]


def compiler_id(options: list[str], command: list[str]) -> str:
    """gcc, clang or nvcc: --compiler=ID, else read from the command."""
    given = next((o.split("=", 1)[1] for o in options if o.startswith("--compiler=")), None)
    if given:
        return given
    name = next((os.path.basename(c) for c in command
                 if os.path.basename(c) not in ("ccache", "sccache")), command[0])
    return "nvcc" if "nvcc" in name else "clang" if "clang" in name else "gcc"


def main() -> int:
    args = sys.argv[1:]
    options = args[:args.index("--")]
    single_error = "--single-error" in options
    require_name = "--require-name" in options
    error_first = "--error-first" in options
    max_bytes = next((int(o.split("=", 1)[1]) for o in options
                      if o.startswith("--max-output-bytes=")), None)
    source = args[args.index("--") - 1]
    command = args[args.index("--") + 1:] + [source]
    name = os.path.basename(source)
    compiler = next((os.path.basename(c) for c in command
                     if os.path.basename(c) not in ("ccache", "sccache")), command[0])
    with open(source, encoding="utf-8") as f:
        text = f.read()
    cid = compiler_id(options, command)
    patterns = expectations(text, "expect-error", cid)
    cascade_known = known_cascades(text, cid)
    names = expectations(text, "expect-name", cid)
    # Clang prints names as character codes, nvcc as character lists: both
    # are read after normalisation.
    printed_as_codes = cid in ("nvcc", "clang")
    if not patterns:
        print(f"{name}: no '// expect-error: REGEX' line (or 'expect-error {cid}:')")
        return 1
    try:
        result = subprocess.run(command, capture_output=True, text=True, errors="replace",
                                env=dict(os.environ, LC_ALL="C"))
    except OSError as e:
        print(f"{name}: cannot run {command[0]}: {e}")
        return 1
    raw = result.stdout + result.stderr
    if result.returncode == 0:
        print(f"{name}: compiled, but it must not")
        return 1
    crash = crash_of(result.returncode, raw)
    lines = normalise(raw).splitlines()
    errors = error_lines(lines)
    clang = cid == "clang"
    if clang:
        errors = errors[:1] + [i for i in errors[1:] if not CLANG_RESTATED.search(lines[i])]
    block = first_error(lines, errors[0], clang) if errors else ""
    failures = []
    if crash:
        failures.append(f"the compiler crashed ({crash})")
    if not errors:
        failures.append("no error line in the output")
    failures += [f"the first error does not match /{p}/" for p in patterns
                 if errors and not re.search(p, block)]
    if single_error and len(errors) > 1 and not cascade_known:
        failures.append(f"{len(errors)} errors, expected one (a cascade)")
    unprinted = [line.split(f"name-unprinted {cid}:", 1)[1].strip()
                 for line in text.splitlines() if f"name-unprinted {cid}:" in line]
    if unprinted:
        names = []  # this compiler prints no name in its first lines; the reason is shown
    if require_name and not names and not unprinted:
        failures.append("no '// expect-name: TEXT' line (the node, edge or cycle the error names)")
    # g++ prints names as text; nvcc's front end only as character lists
    # (fixed_string<5UL>{{'s', 'c', ...}}), clang as character codes, both
    # read here after normalisation.
    head = normalise(raw) if printed_as_codes else raw
    failures += [f"the first {HEAD_LINES} lines do not name '{n}'"
                 + (" (after normalisation)" if printed_as_codes else "")
                 for n in names_in_head(head, names, HEAD_LINES)]
    context_first = [line.split(f"context-first {cid}:", 1)[1].strip()
                     for line in text.splitlines() if f"context-first {cid}:" in line]
    if error_first and cid == "gcc" and not context_first:
        shown = [line for line in raw.splitlines()
                 if not INCLUDED_FROM.match(line) and not FUNCTION_SCOPE.search(line)]
        if not shown or not ERROR_LINE.search(shown[0]):
            failures.append("the first line is not the error (g++ printed context first: "
                            + (shown[0][:200] if shown else "nothing") + ")")
    if max_bytes is not None and len(raw) > max_bytes:
        failures.append(f"{len(raw)} bytes of output, more than {max_bytes}")
    if failures:
        print(f"{name} ({compiler}, {cid}): " + "; ".join(failures))
        print("--- first error (normalised) ---")
        print(block[:4000])
        start = max(0, errors[0] - 20) if errors else 0
        print(f"--- output (raw, from line {start + 1}) ---")
        print("\n".join(raw.splitlines()[start:start + 60])[:12000])
        return 1
    print(f"{name} ({compiler}, {cid}): fails as expected, {len(errors)} error(s); first:")
    print(block[:2000])
    if unprinted:
        print(f"(no name asserted under {cid}: {unprinted[0]})")
    if len(errors) > 1 and cascade_known:
        print(f"(a known cascade: {cascade_known[0]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
