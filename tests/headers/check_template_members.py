#!/usr/bin/env python3
"""Every public member template of the public headers is used by a test.

A member template that no translation unit instantiates is only parsed,
never checked: `exec<G>::node_handle<"name">()` once failed to compile for
every name and nothing noticed. This finds the public member templates of
include/cudag/ and dsl/cudag/ (a `template <...>` inside a class body, in a
public section) and requires each name to be called or named in a test
source (tests/, every file); classes of the DSL's internal machinery are
listed below with the reason they need no test of their own.

usage: check_template_members.py SOURCE_ROOT
"""
import os
import re
import sys

# Classes of the DSL's machinery, public only because they are structs: the
# lowering walk, rebinding and to_spec() call their member templates for
# every node of every DSL graph a test lowers (engine_recording records the
# native calls they make), so no test names them.
INTERNAL = {
    "exec_arena": "the DSL exec's storage; written by instantiate() and rebind()",
    "kernel_body": "a kernel node's lowering and spec; called by the lowering walk and to_spec()",
    "host_body": "a host node's lowering and spec; called by the lowering walk and to_spec()",
    "captured_body": "a captured node's lowering and spec; called by the lowering walk and to_spec()",
    "conditional_body": "a conditional node's bodies; called by the lowering walk and rebind()",
}

TEMPLATE = re.compile(r"^(\s+)template\s*<")
ACCESS = re.compile(r"^\s*(public|private|protected)\s*:")
CLASS = re.compile(r"^(\s*)(?:template\s*<.*>\s*)?(class|struct)\s+(\w+)[^;]*$")
NAME = re.compile(r"(operator\s*[^\s(]+|~?\w+)\s*\(")


def member_templates(path):
    """(class, member) for each public member template of one header."""
    lines = open(path, encoding="utf-8").read().splitlines()
    out = []
    scopes = []  # (indent, class name, public?)
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("//"):
            continue
        m = CLASS.match(line)
        if m and "{" in line or (m and i + 1 < len(lines) and lines[i + 1].strip().startswith("{")):
            indent = len(m.group(1))
            while scopes and scopes[-1][0] >= indent:
                scopes.pop()
            scopes.append([indent, m.group(3), m.group(2) == "struct"])
            continue
        if scopes and re.match(r"^\s*};", line) and len(line) - len(line.lstrip()) == scopes[-1][0]:
            scopes.pop()
            continue
        a = ACCESS.match(line)
        if a and scopes:
            scopes[-1][2] = a.group(1) == "public"
            continue
        t = TEMPLATE.match(line)
        if not t or not scopes or not scopes[-1][2]:
            continue
        if len(t.group(1)) <= scopes[-1][0]:
            continue
        # The declaration: the lines after the template head up to "(" or ";".
        text = line[line.index("template"):]
        j = i
        while "(" not in text.split(">", 1)[-1] and ";" not in text and j + 1 < len(lines):
            j += 1
            text += " " + lines[j].strip()
        body = text
        depth, k = 0, body.index("<")
        for k in range(body.index("<"), len(body)):  # skip the template's own parameters
            depth += {"<": 1, ">": -1}.get(body[k], 0)
            if depth == 0:
                break
        decl = body[k + 1:]
        while decl.strip().startswith("requires") or decl.strip().startswith("template"):
            j += 1
            if j >= len(lines):
                break
            decl = lines[j]
        if re.match(r"\s*(struct|class|using)\b", decl):
            continue  # a member class or alias template: its uses go through members
        n = NAME.search(decl)
        if n:
            out.append((scopes[-1][1], n.group(1)))
    return out


def main():
    root = sys.argv[1]
    headers = []
    for top in ("include/cudag", "dsl/cudag"):
        for d, _, files in os.walk(os.path.join(root, top)):
            headers += [os.path.join(d, f) for f in files if f.endswith(".hpp")]
    corpus = []
    for d, _, files in os.walk(os.path.join(root, "tests")):
        for f in files:
            if f.endswith((".cpp", ".cu", ".hpp", ".cuh")):
                corpus.append(open(os.path.join(d, f), encoding="utf-8", errors="replace").read())
    text = "\n".join(corpus)
    missing, checked = [], 0
    for h in sorted(headers):
        for cls, member in member_templates(h):
            if member.startswith("operator") or member.startswith("~"):
                continue
            checked += 1
            key = f"{cls}::{member}"
            if cls in INTERNAL:
                continue
            name = cls if member == cls else member
            if not re.search(r"(\.|->|::|\b)" + re.escape(name) + r"\s*[<(]", text):
                missing.append(f"{os.path.relpath(h, root)}: {key}")
    for m in missing:
        print("no test uses the member template " + m)
    print(f"{checked} public member templates, {len(missing)} used by no test")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
