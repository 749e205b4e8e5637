#!/usr/bin/env python3
"""Every C++ and CUDA code block of the README and the docs compiles as written.

Extracts each ```cpp (also ```c++, ```cxx) and ```cuda (also ```cu) fenced
block from README.md, dsl/README.md and docs/**/*.md and compiles it:
C++ blocks with the host compiler (`-std=c++20 -fsyntax-only`), CUDA blocks
with nvcc (`-std=c++20 -x cu --expt-relaxed-constexpr -c -o /dev/null`), the
include directories being include/, dsl/ and CUDA's.

A block is compiled alone unless an HTML comment on the line right before its
fence says otherwise:

  <!-- doc-context: builder -->             the block is a fragment: it is put
                                            in a function body, after the
                                            prelude tests/docs/contexts/builder.hpp
  <!-- doc-context: builder, namespace -->  the same, at namespace scope
  <!-- doc-context: kernels, builder -->    several preludes, in this order
  <!-- doc-context: namespace -->           no prelude, at namespace scope
  <!-- doc-skip: reason -->                 not compiled; listed with its reason

A prelude is a small header declaring what fragments use (kernels, a
builder `b`, parameters, a stream, an exec...). A wrapped fragment's
#include lines are placed before its function. Compiler messages point at
the markdown file and line (#line). Skipped blocks are printed with their
reasons; the test fails when a block does not compile or when a doc-context
or doc-skip comment is malformed or stands before no code block.

usage: compile_doc_blocks.py [--root DIR] [--cxx CXX] [--nvcc NVCC] [--jobs N]
                             [--keep DIR] [--only SUBSTRING] [--list]
"""
from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

CPP_LANGS = {"cpp", "c++", "cxx"}
CUDA_LANGS = {"cuda", "cu"}
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)")
DIRECTIVE = re.compile(r"^\s*<!--\s*doc-(?P<kind>[a-z-]+)\s*:\s*(?P<value>.*?)\s*-->\s*$")
ANY_DIRECTIVE = re.compile(r"<!--\s*doc-")
INLINE_CODE = re.compile(r"(`+).*?\1")  # a directive quoted in prose is none
FLAGS = {"namespace"}
INCLUDE = re.compile(r"^\s*#\s*include\b")
CONTEXT_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclasses.dataclass
class Block:
    path: pathlib.Path  # relative to the root
    line: int  # line of the opening fence, from 1
    lang: str  # "cpp" or "cuda"
    code: str
    contexts: list[str]
    namespace_scope: bool
    skip: str | None

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


class DocError(Exception):
    pass


def markdown_files(root: pathlib.Path) -> list[pathlib.Path]:
    files = [root / "README.md", root / "dsl" / "README.md"]
    files += sorted((root / "docs").rglob("*.md"))
    return [f for f in files if f.is_file()]


def extract(root: pathlib.Path, path: pathlib.Path, problems: list[str]) -> list[Block]:
    rel = path.relative_to(root)
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    pending: tuple[int, str, str] | None = None  # (line, kind, value) of a directive
    i = 0
    while i < len(lines):
        text = lines[i]
        m = FENCE.match(text)
        if m:
            fence, info = m.group("fence"), m.group("info").lower()
            start = i
            body: list[str] = []
            i += 1
            while i < len(lines):
                close = lines[i].strip()
                if close.startswith(fence[0] * len(fence)) and close.strip(fence[0]) == "":
                    break
                body.append(lines[i])
                i += 1
            else:
                problems.append(f"{rel}:{start + 1}: code block never closed")
            lang = "cpp" if info in CPP_LANGS else "cuda" if info in CUDA_LANGS else None
            if pending is not None and lang is None:
                problems.append(f"{rel}:{pending[0]}: doc-{pending[1]} comment stands before a "
                                f"```{info} block, which is not compiled")
            if lang is not None:
                contexts: list[str] = []
                namespace_scope = False
                skip = None
                if pending is not None:
                    _, kind, value = pending
                    if kind == "skip":
                        skip = value
                    else:
                        for word in (w.strip() for w in value.split(",")):
                            if word in FLAGS:
                                namespace_scope = True
                            elif CONTEXT_NAME.match(word):
                                contexts.append(word)
                            else:
                                problems.append(f"{rel}:{pending[0]}: bad doc-context entry {word!r}")
                blocks.append(Block(rel, start + 1, lang, "\n".join(body) + "\n", contexts,
                                    namespace_scope, skip))
            pending = None
            i += 1
            continue
        d = DIRECTIVE.match(text)
        if d:
            if pending is not None:
                problems.append(f"{rel}:{pending[0]}: doc-{pending[1]} comment stands before no code block")
            kind, value = d.group("kind"), d.group("value")
            if kind not in ("context", "skip"):
                problems.append(f"{rel}:{i + 1}: unknown directive doc-{kind} (doc-context or doc-skip)")
            elif not value:
                problems.append(f"{rel}:{i + 1}: doc-{kind} without "
                                f"{'a reason' if kind == 'skip' else 'a context'}")
            else:
                pending = (i + 1, kind, value)
        elif ANY_DIRECTIVE.search(INLINE_CODE.sub("", text)):
            problems.append(f"{rel}:{i + 1}: malformed doc- comment (one comment on its own line: "
                            "<!-- doc-context: name[, namespace] --> or <!-- doc-skip: reason -->)")
        elif pending is not None and text.strip():
            problems.append(f"{rel}:{pending[0]}: doc-{pending[1]} comment is not right before a code block")
            pending = None
        i += 1
    if pending is not None:
        problems.append(f"{rel}:{pending[0]}: doc-{pending[1]} comment stands before no code block")
    return blocks


def translation_unit(block: Block, root: pathlib.Path, contexts_dir: pathlib.Path) -> str:
    md = (root / block.path).as_posix()
    out = [f"// {block.where}: a ```{block.lang} block of the docs, as written\n"]
    for name in block.contexts:
        out.append(f'#include "{(contexts_dir / (name + ".hpp")).as_posix()}"\n')
    wrap = bool(block.contexts) and not block.namespace_scope
    code = block.code
    if wrap:
        # #include lines of a fragment go before the function (a header is
        # never meant to be read inside one); blank lines keep the numbering.
        lines = code.splitlines()
        for k, line in enumerate(lines):
            if INCLUDE.match(line):
                out.append(f'#line {block.line + 1 + k} "{md}"\n{line}\n')
                lines[k] = ""
        code = "\n".join(lines) + "\n"
        out.append("[[maybe_unused]] static void cudag_doc_block() {\n")
    out.append(f'#line {block.line + 1} "{md}"\n')
    out.append(code)
    if wrap:
        out.append("}\n")
    return "".join(out)


def compile_block(block: Block, index: int, args, workdir: pathlib.Path) -> tuple[bool, str, float]:
    root = pathlib.Path(args.root)
    contexts_dir = pathlib.Path(__file__).resolve().parent / "contexts"
    for name in block.contexts:
        if not (contexts_dir / (name + ".hpp")).is_file():
            return False, f"no prelude tests/docs/contexts/{name}.hpp for doc-context {name!r}", 0.0
    suffix = ".cu" if block.lang == "cuda" else ".cpp"
    source = workdir / f"block{index:03d}{suffix}"
    source.write_text(translation_unit(block, root, contexts_dir), encoding="utf-8")
    includes = ["-I" + str(root / "include"), "-I" + str(root / "dsl"), "-I" + args.cuda_include]
    if block.lang == "cuda":
        command = [args.nvcc, "-std=c++20", "-x", "cu", "--expt-relaxed-constexpr",
                   f"-arch=sm_{args.arch}", "-c", "-o", os.devnull] + includes + [str(source)]
    else:
        command = [args.cxx, "-std=c++20", "-fsyntax-only"] + includes + [str(source)]
    began = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, errors="replace",
                            env=dict(os.environ, LC_ALL="C"))
    elapsed = time.monotonic() - began
    output = result.stdout + result.stderr
    return result.returncode == 0, output, elapsed


def first_errors(output: str, count: int = 12) -> str:
    lines = output.splitlines()
    errors = [k for k, line in enumerate(lines) if re.search(r"\berror\b", line)]
    if not errors:
        return "\n".join(lines[:40])
    start = max(0, errors[0] - 8)  # with the "required from" lines that lead to it
    shown = lines[start:start + 40]
    more = len(errors) - sum(1 for k in errors if start <= k < start + 40)
    text = "\n".join(shown)
    if more > 0:
        text += f"\n... and {more} more error line(s)"
    return text


def main() -> int:
    here = pathlib.Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(here.parent.parent), help="the repository")
    parser.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    parser.add_argument("--nvcc", default=None, help="nvcc (default: on PATH or in /usr/local/cuda/bin)")
    parser.add_argument("--cuda-include", default=None, help="CUDA's include directory")
    parser.add_argument("--arch", default="90", help="sm_XX for nvcc")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", default=None, help="write the translation units into DIR")
    parser.add_argument("--only", default=None, help="compile only blocks whose file:line contains this")
    parser.add_argument("--list", action="store_true", help="list the blocks and their contexts")
    args = parser.parse_args()
    root = pathlib.Path(args.root).resolve()
    args.root = str(root)

    nvcc = shutil.which(args.nvcc) if args.nvcc else shutil.which("nvcc")
    if nvcc is None and not args.nvcc and pathlib.Path("/usr/local/cuda/bin/nvcc").is_file():
        nvcc = "/usr/local/cuda/bin/nvcc"
    args.nvcc = nvcc
    if args.cuda_include is None:
        base = pathlib.Path(nvcc).resolve().parent.parent if nvcc else pathlib.Path("/usr/local/cuda")
        args.cuda_include = str(base / "include")

    if shutil.which(args.cxx) is None:
        print(f"the C++ compiler {args.cxx!r} was not found")
        return 1

    problems: list[str] = []
    blocks: list[Block] = []
    for path in markdown_files(root):
        blocks += extract(root, path, problems)
    if args.list:
        for b in blocks:
            how = "skip: " + b.skip if b.skip else ", ".join(b.contexts + (["namespace"] if b.namespace_scope else [])) or "alone"
            print(f"{b.where:40} {b.lang:5} {how}")
        return 0
    if args.only:
        blocks = [b for b in blocks if args.only in b.where]

    skipped = [b for b in blocks if b.skip is not None]
    no_nvcc = [b for b in blocks if b.skip is None and b.lang == "cuda" and nvcc is None]
    todo = [b for b in blocks if b.skip is None and b not in no_nvcc]

    began = time.monotonic()
    failures: list[tuple[Block, str]] = []
    with tempfile.TemporaryDirectory(prefix="cudag-doc-blocks-") as tmp:
        workdir = pathlib.Path(args.keep) if args.keep else pathlib.Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = {pool.submit(compile_block, b, k, args, workdir): b for k, b in enumerate(todo)}
            results = {}
            for future in concurrent.futures.as_completed(futures):
                results[id(futures[future])] = future.result()
        for b in todo:
            ok, output, elapsed = results[id(b)]
            tool = "nvcc" if b.lang == "cuda" else "c++"
            context = ", ".join(b.contexts + (["namespace"] if b.namespace_scope else [])) or "alone"
            print(f"{'ok  ' if ok else 'FAIL'} {b.where} ({tool}, {context}, {elapsed:.1f} s)")
            if not ok:
                failures.append((b, output))
    elapsed = time.monotonic() - began

    for b, output in failures:
        print(f"\n==== {b.where}: the ```{b.lang} block starting at line {b.line} does not compile")
        print(first_errors(output))
    for b in skipped:
        print(f"SKIPPED {b.where}: {b.skip}")
    for b in no_nvcc:
        print(f"SKIPPED {b.where}: a CUDA block, and nvcc was not found")
    for p in problems:
        print(f"PROBLEM {p}")
    print(f"\n{len(todo) - len(failures)} of {len(blocks)} code blocks compiled, {len(failures)} failed, "
          f"{len(skipped) + len(no_nvcc)} skipped ({len(skipped)} by doc-skip), "
          f"{len(problems)} markup problem(s), {elapsed:.1f} s with {args.jobs} job(s)")
    return 1 if failures or problems else 0


if __name__ == "__main__":
    sys.exit(main())
