#!/usr/bin/env python3
"""Lists the largest uncovered regions of a gcovr JSON report (gcovr --json).

A region is a run of uncovered executable lines of one file: lines that are
not code (comments, blank lines, declarations) or are excluded may lie
between them, a covered executable line ends the run. Prints the largest
regions, each as `file:first-last (N lines)` where N counts the uncovered
executable lines, then every further region above --min-lines lines, then
the source files under --dirs that the report does not know at all (no
executable line of theirs is in an object that ran: declarations or
compile-time code only, or not compiled in this build; such lines count
nowhere).

Reads the JSON of gcovr 5.x (one entry per line, `gcovr/noncode`) and of
later releases (non-code lines left out, several entries for one line, one
per function or instantiation).

usage: coverage_regions.py COVERAGE_JSON [--top 25] [--min-lines 20]
                           [--root DIR --dirs src include dsl]
"""
import argparse
import json
import os
import sys

SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".cc", ".cu", ".cuh", ".inl", ".ipp")


def line_states(entries):
    """{line number: covered?} over the executable, not excluded lines."""
    executable = {}
    excluded = set()
    for entry in entries:
        number = entry["line_number"]
        if entry.get("gcovr/excluded"):
            excluded.add(number)
            continue
        if entry.get("gcovr/noncode"):
            continue
        count = entry.get("count") or 0
        executable[number] = executable.get(number, False) or count > 0
    for number in excluded:
        executable.pop(number, None)
    return executable


def uncovered_regions(states):
    """[(first, last, uncovered executable lines)] of one file."""
    regions = []
    first = last = None
    size = 0
    for number in sorted(states):
        if states[number]:
            if first is not None:
                regions.append((first, last, size))
                first = None
            continue
        if first is None:
            first, size = number, 0
        last = number
        size += 1
    if first is not None:
        regions.append((first, last, size))
    return regions


def source_files(root, dirs):
    found = set()
    for top in dirs:
        for directory, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if name.endswith(SOURCE_SUFFIXES):
                    path = os.path.relpath(os.path.join(directory, name), root)
                    found.add(path.replace(os.sep, "/"))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", help="gcovr JSON report (gcovr --json)")
    parser.add_argument("--top", type=int, default=25, help="how many of the largest regions to list")
    parser.add_argument("--min-lines", type=int, default=20,
                        help="also list every region of more uncovered lines than this")
    parser.add_argument("--root", default=".", help="the directory the report's file names are relative to")
    parser.add_argument("--dirs", nargs="*", default=[],
                        help="directories under --root whose source files the report should know")
    args = parser.parse_args()

    with open(args.report) as stream:
        report = json.load(stream)

    entries_by_file = {}
    for record in report.get("files", []):
        name = record["file"].replace(os.sep, "/")
        entries_by_file.setdefault(name, []).extend(record.get("lines", []))

    regions = []
    for name, entries in entries_by_file.items():
        for first, last, size in uncovered_regions(line_states(entries)):
            regions.append((size, name, first, last))
    regions.sort(key=lambda r: (-r[0], r[1], r[2]))

    def show(region):
        size, name, first, last = region
        print(f"  {name}:{first}-{last} ({size} line{'s' if size != 1 else ''})")

    total = sum(r[0] for r in regions)
    print(f"uncovered regions: {len(regions)} in {len({r[1] for r in regions})} files, "
          f"{total} uncovered lines; the {min(args.top, len(regions))} largest:")
    for region in regions[:args.top]:
        show(region)
    large = [r for r in regions if r[0] > args.min_lines]
    print(f"regions above {args.min_lines} lines: {len(large)}"
          + (":" if len(large) > args.top else " (all among the above)" if large else ""))
    if len(large) > args.top:
        for region in large[args.top:]:
            show(region)

    if args.dirs:
        known = set(entries_by_file)
        unseen = sorted(source_files(args.root, args.dirs) - known)
        print(f"source files the report does not know (no executable line in an object "
              f"that ran: declarations or compile-time code only, or not compiled): {len(unseen)}")
        for name in unseen:
            print(f"  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
