#!/usr/bin/env python3
"""Fails when measurements come back into the tree (docs/benchmarks.md,
"Where the figures live"):

  (a) a file under bench/ or tools/ is a result file (.json, .svg, .csv,
      .tsv): benchmark reports and plots go to a build folder;
  (b) README.md, dsl/README.md or a page under docs/ cites a figure that
      does not exist: a link or image whose target has figures/ in it, a
      docs/figures/... path, or a figures-....json/.svg/.csv path, which
      must lie under docs/figures/ (a report named in the history as
      REV:PATH, for git show, is not a file of the tree and is not
      checked);
  (c) a file under docs/figures/ is cited by no page: the tree keeps the
      figures the docs show, no others;
  (d) the files under bench/ and tools/ that are not source (C++, CUDA,
      Python, shell, meson.build) hold more than MAX_OTHER_LINES lines.

The files are those git tracks, with untracked ones git does not ignore,
where SOURCE_ROOT is the top of a git checkout; elsewhere (a release
tarball) every file found under the folders.

usage: results_out_of_tree.py SOURCE_ROOT
"""
import os
import re
import subprocess
import sys

RESULT_SUFFIXES = (".json", ".svg", ".csv", ".tsv")
SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".cu", ".cuh", ".py", ".sh")
SOURCE_NAMES = ("meson.build",)
MAX_OTHER_LINES = 100
MEASURED = ("bench", "tools")

# A figure cited as a link or an image: ](path), path with figures/ in it.
LINK = re.compile(r"\]\(([^)\s]*figures/[^)\s]*)\)")
# docs/figures/NAME anywhere in the text.
DOCS_FIGURE = re.compile(r"(?<![\w/.-])docs/figures/[\w.-]*\w")
# A raw result named figures-...: a file path unless REV: precedes it.
RAW_RESULT = re.compile(r"(?<![\w/.-])((?:[0-9a-f]{7,40}:)?[\w./-]*figures-[\w.-]*\.(?:json|svg|csv|tsv))\b")
HISTORY = re.compile(r"^[0-9a-f]{7,40}:")


def files_under(root, folders):
    """Paths relative to root, with '/', of the files under folders."""
    try:
        top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, check=True).stdout.strip()
        in_git = os.path.realpath(top) == os.path.realpath(root)
    except (OSError, subprocess.CalledProcessError):
        in_git = False
    if in_git:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard", "--"] + list(folders),
                             capture_output=True, text=True, check=True).stdout
        found = {p for p in out.split("\0") if p and os.path.isfile(os.path.join(root, p))}
        return sorted(found), "git ls-files"
    found = []
    for folder in folders:
        for directory, _, names in os.walk(os.path.join(root, folder)):
            for name in names:
                path = os.path.relpath(os.path.join(directory, name), root)
                found.append(path.replace(os.sep, "/"))
    return sorted(found), "a walk of the folders"


def pages(root):
    found = [p for p in ("README.md", "dsl/README.md") if os.path.isfile(os.path.join(root, p))]
    for directory, _, names in os.walk(os.path.join(root, "docs")):
        for name in names:
            if name.endswith(".md"):
                found.append(os.path.relpath(os.path.join(directory, name), root).replace(os.sep, "/"))
    return sorted(found)


def count_lines(path):
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    problems = []

    files, how = files_under(root, MEASURED)
    results = [p for p in files if p.lower().endswith(RESULT_SUFFIXES)]
    for p in results:
        problems.append(f"(a) result file in the tree: {p} (write results to a build folder)")

    other = [p for p in files
             if not p.endswith(SOURCE_SUFFIXES) and os.path.basename(p) not in SOURCE_NAMES]
    other_lines = sum(count_lines(os.path.join(root, p)) for p in other)
    if other_lines > MAX_OTHER_LINES:
        problems.append(f"(d) {other_lines} lines in {len(other)} files under bench/ and tools/ that are "
                        f"not source (at most {MAX_OTHER_LINES}): " + ", ".join(other))

    cited_figures = set()
    citations = 0
    for page in pages(root):
        text = open(os.path.join(root, page), encoding="utf-8").read()
        here = os.path.dirname(page)
        for m in LINK.finditer(text):
            target = m.group(1).split("#")[0]
            if re.match(r"^[a-z]+://", target):
                continue
            path = os.path.normpath(os.path.join(here, target)).replace(os.sep, "/")
            citations += 1
            cited_figures.add(path)
            if not os.path.isfile(os.path.join(root, path)):
                problems.append(f"(b) {page} shows {target}, which does not exist ({path})")
        for m in DOCS_FIGURE.finditer(text):
            citations += 1
            cited_figures.add(m.group(0))
            if not os.path.isfile(os.path.join(root, m.group(0))):
                problems.append(f"(b) {page} cites {m.group(0)}, which does not exist")
        for m in RAW_RESULT.finditer(text):
            cited = m.group(1)
            if HISTORY.match(cited):
                continue
            citations += 1
            if not cited.startswith("docs/figures/") or not os.path.isfile(os.path.join(root, cited)):
                problems.append(f"(b) {page} cites {cited}, which is not a figure under docs/figures/ "
                                "(name a report of the history as REV:PATH)")

    figures_dir = os.path.join(root, "docs", "figures")
    kept = []
    if os.path.isdir(figures_dir):
        kept = sorted("docs/figures/" + n for n in os.listdir(figures_dir))
    for path in kept:
        if path not in cited_figures:
            problems.append(f"(c) {path} is cited by no page (README.md, docs/): remove it or show it")

    for p in problems:
        print("FAIL " + p)
    print(f"{len(files)} files under bench/ and tools/ ({how}): {len(results)} result files, "
          f"{other_lines} lines not source (at most {MAX_OTHER_LINES}); {citations} figure citations "
          f"checked, {len(kept)} figures under docs/figures/")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
