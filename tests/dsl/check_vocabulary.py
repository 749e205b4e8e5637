#!/usr/bin/env python3
"""The DSL's vocabulary: what `using namespace cudag::dsl` brings into a user's
file is exactly what dsl/README.md lists.

usage: check_vocabulary.py SOURCE_ROOT CLANGXX [COMPILER ARGS...]

Compiles one translation unit that includes cudag/dsl.hpp and every header
of dsl/cudag/dsl/ (an opt-in header whose own dependency, a header of
another library, is not installed is left out, saying so) with clang++
(-fsyntax-only), has clang dump the
declarations of namespace cudag::dsl as JSON (-ast-dump=json with
-ast-dump-filter=cudag::dsl: each block that opens the namespace is printed
whole), and collects the names declared directly in it, every block merged:
classes, functions, variables, aliases, concepts, using-declarations (by
the name they declare) and nested namespaces (`detail`, where the
implementation lives). Deduction guides are not names a user writes and are
left out.

The README's list is the section headed "What `using namespace cudag::dsl`
brings": each bullet line ("- `a`, `b`: what they are") names, before its
first ": ", the names in backquotes. Bullets under a line that names an
opt-in header (`#include "cudag/dsl/hana.hpp"`) are that header's names:
not required where the header was left out.

Fails naming each name the headers declare that the README does not list
(an internal helper that belongs in cudag::dsl::detail, or a new name the
README must describe) and each name the README lists that the headers do
not declare. Exits 77 (skipped) where clang++ is not installed: the check
reads clang's syntax tree, which no other compiler writes in this form.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

SECTION = "## What `using namespace cudag::dsl` brings"
SKIPPED = 77


def compile_unit(source_root, clangxx, extra_args, headers, dump):
    """clang++ -fsyntax-only over a unit including `headers`; (status, stdout, stderr, command)."""
    unit = "".join(f'#include "{h}"\n' for h in headers)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "vocabulary.cpp")
        with open(path, "w", encoding="utf-8") as out:
            out.write(unit)
        command = [clangxx, "-std=c++20", "-fsyntax-only", "-I" + os.path.join(source_root, "include"),
                   "-I" + os.path.join(source_root, "dsl")] + extra_args
        if dump:
            command += ["-Xclang", "-ast-dump=json", "-Xclang", "-ast-dump-filter=cudag::dsl"]
        done = subprocess.run(command + [path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return done.returncode, done.stdout, done.stderr, command


def declared_names(source_root, clangxx, extra_args):
    """Names declared directly in namespace cudag::dsl, every block merged."""
    headers = ["cudag/dsl.hpp"] + sorted(
        "cudag/dsl/" + name for name in os.listdir(os.path.join(source_root, "dsl", "cudag", "dsl"))
        if name.endswith(".hpp"))
    status, stdout, stderr, command = compile_unit(source_root, clangxx, extra_args, headers, True)
    left_out = set()
    if status != 0:
        # An opt-in header whose own dependency is not installed (a header
        # of another library: "file not found") is left out, saying so;
        # any other failure fails the check.
        kept = []
        for header in headers:
            alone, _, message, _ = compile_unit(source_root, clangxx, extra_args, [header], False)
            missing = re.search(r"fatal error: '([^']+)' file not found", message)
            if alone != 0 and missing and not missing.group(1).startswith("cudag/"):
                print(f"note: {header} left out: it needs {missing.group(1)}, not installed here")
                left_out.add(header)
            else:
                kept.append(header)
        status, stdout, stderr, command = compile_unit(source_root, clangxx, extra_args, kept, True)
    if status != 0:
        sys.stderr.write(stderr[-4000:])
        sys.exit(f"clang++ could not compile the DSL's headers: {' '.join(command)}")
    names = set()
    blocks = 0
    decoder = json.JSONDecoder()
    text, at = stdout, 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            break
        decl, at = decoder.raw_decode(text, at)
        # The filter prints each declaration whose qualified name holds
        # "cudag::dsl" and does not descend into it: the namespace's blocks
        # are printed whole, each as one object.
        if decl.get("kind") != "NamespaceDecl" or decl.get("name") != "dsl":
            continue
        blocks += 1
        for child in decl.get("inner") or []:
            name = child.get("name")
            if not name or name.startswith("<deduction guide"):
                continue
            names.add(name.split("::")[-1])  # a using-declaration: cudag::rebind_path
    if blocks == 0:
        sys.exit("clang's syntax tree held no block of namespace cudag::dsl: the check reads nothing")
    return names, left_out


def listed_names(readme):
    """The README's list: backquoted names before the first ': ' of each
    bullet, each with the opt-in header that declares it (a group line
    naming `#include "cudag/dsl/..."` above its bullets), or None."""
    lines = open(readme, encoding="utf-8").read().splitlines()
    try:
        start = lines.index(SECTION)
    except ValueError:
        sys.exit(f"{readme} has no section '{SECTION}'")
    names, doubled = {}, set()
    group_header = None
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if not line.startswith("- "):
            if line.strip():
                included = re.search(r'#include "([^"]+)"', line)
                group_header = included.group(1) if included else None
            continue
        head = line[2:].split(": ", 1)[0]
        for name in re.findall(r"`([A-Za-z_][A-Za-z_0-9]*)`", head):
            if name in names:
                doubled.add(name)
            names[name] = group_header
    if doubled:
        sys.exit(f"{readme} lists more than once: {', '.join(sorted(doubled))}")
    if not names:
        sys.exit(f"{readme}: section '{SECTION}' lists no name")
    return names


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    source_root, clangxx, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    if not clangxx or not os.path.exists(clangxx):
        print("SKIP: clang++ is not installed; this check reads clang's syntax tree "
              "(the cpu suite's CI installs clang)")
        return SKIPPED
    readme = os.path.join(source_root, "dsl", "README.md")
    declared, left_out = declared_names(source_root, clangxx, extra)
    listed = listed_names(readme)
    extra_names = sorted(declared - set(listed))
    missing = []
    for name in sorted(set(listed) - declared):
        if listed[name] in left_out:
            print(f"note: cudag::dsl::{name} not checked: {listed[name]} was left out")
        else:
            missing.append(name)
    for name in extra_names:
        print(f"cudag::dsl::{name}: declared in namespace cudag::dsl but not listed in dsl/README.md "
              f"('{SECTION[3:]}'); an internal name belongs in cudag::dsl::detail")
    for name in missing:
        print(f"cudag::dsl::{name}: listed in dsl/README.md but not declared in namespace cudag::dsl")
    if extra_names or missing:
        return 1
    print(f"{len(declared)} names in namespace cudag::dsl, as dsl/README.md lists them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
