#!/usr/bin/env python3
"""Draws bench_compare's JSON report as an SVG, with the Python standard
library only: log-log axes of time (median, microseconds; the bar spans the
quartiles) against node count, one panel per section and shape, one line
per method.

    python3 bench/compare/plot.py build/bench_compare.json build/bench_compare.svg
    python3 bench/compare/plot.py --sections build,replay build/report.json build/out.svg

Sections drawn by default, where the report has them: build, replay,
rebind 1 reader, rebind all readers, while loop, cpu.
"""
import argparse
import json
import math
import sys
from xml.sax.saxutils import escape

DEFAULT_SECTIONS = ["build", "replay", "rebind 1 reader", "rebind all readers", "while loop", "cpu"]
TITLES = {
    "build": "build from nothing (host)",
    "build+instantiate": "build + instantiate (host)",
    "first launch": "first launch + sync (host)",
    "replay": "replay, one launch (device events)",
    "rebind 1 reader": "rebind a value read by 1 node (host)",
    "rebind 10% readers": "rebind, 10% readers (host)",
    "rebind all readers": "rebind a value read by every node (host)",
    "while loop": "WHILE node vs host-driven loop (device events)",
    "cpu": "CPU part, null native table (host)",
}
SHAPES = [("chain", "chain"), ("chains8", "8 parallel chains"), ("lattice", "fork-join lattice"),
          ("random", "random DAG"), ("while", "while loop")]
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#17becf", "#bcbd22"]

PANEL_W, PANEL_H = 300, 220
MARGIN_L, MARGIN_R, MARGIN_T, MARGIN_B = 62, 14, 26, 38
LEGEND_W = 330


def decades(lo, hi):
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if a == b:
        b += 1
    return a, b


def fmt_power(p):
    v = 10.0 ** p
    if v >= 1 and v < 1e6:
        return f"{v:,.0f}"
    if v < 1 and v >= 1e-3:
        return f"{v:g}"
    return f"1e{p}"


def panel(out, x0, y0, title, series, colors, x_label):
    """series: {method: [(x, median, q1, q3), ...]}"""
    xs = [p[0] for s in series.values() for p in s]
    ys = [v for s in series.values() for p in s for v in p[1:] if v > 0]
    out.append(f'<g transform="translate({x0},{y0})">')
    out.append(f'<text x="{PANEL_W / 2}" y="14" text-anchor="middle" font-size="12" font-weight="bold">'
               f'{escape(title)}</text>')
    if not xs or not ys:
        out.append(f'<text x="{PANEL_W / 2}" y="{PANEL_H / 2}" text-anchor="middle" font-size="11" '
                   f'fill="#888">not measured</text></g>')
        return
    xa, xb = decades(min(xs), max(xs))
    ya, yb = decades(min(ys), max(ys))
    left, top = MARGIN_L, MARGIN_T
    w, h = PANEL_W - MARGIN_L - MARGIN_R, PANEL_H - MARGIN_T - MARGIN_B

    def px(x):
        return left + w * (math.log10(x) - xa) / (xb - xa)

    def py(y):
        return top + h - h * (math.log10(max(y, 10.0 ** ya)) - ya) / (yb - ya)

    out.append(f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="none" stroke="#444"/>')
    for p in range(xa, xb + 1):
        x = px(10.0 ** p)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + h}" stroke="#ddd"/>')
        out.append(f'<text x="{x:.1f}" y="{top + h + 13}" text-anchor="middle" font-size="10">{fmt_power(p)}</text>')
    for p in range(ya, yb + 1):
        y = py(10.0 ** p)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + w}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 4}" y="{y + 3:.1f}" text-anchor="end" font-size="10">{fmt_power(p)}</text>')
    out.append(f'<text x="{left + w / 2}" y="{PANEL_H - 6}" text-anchor="middle" font-size="10">{x_label}</text>')
    out.append(f'<text transform="translate(12,{top + h / 2}) rotate(-90)" text-anchor="middle" '
               f'font-size="10">us (median, quartiles)</text>')
    for method, pts in series.items():
        pts = sorted(pts)
        c = colors[method]
        path = " ".join(f"{'M' if i == 0 else 'L'}{px(x):.1f},{py(m):.1f}" for i, (x, m, _, _) in enumerate(pts))
        out.append(f'<path d="{path}" fill="none" stroke="{c}" stroke-width="1.6"/>')
        for x, m, q1, q3 in pts:
            out.append(f'<line x1="{px(x):.1f}" y1="{py(q1):.1f}" x2="{px(x):.1f}" y2="{py(q3):.1f}" '
                       f'stroke="{c}" stroke-width="1"/>')
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(m):.1f}" r="2.4" fill="{c}"/>')
    out.append("</g>")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("report", help="JSON written by bench_compare --json")
    ap.add_argument("svg", help="SVG file to write")
    ap.add_argument("--sections", help="comma-separated sections (default: %s)" % ", ".join(DEFAULT_SECTIONS))
    args = ap.parse_args()
    with open(args.report) as f:
        report = json.load(f)
    results = report.get("results", [])
    wanted = args.sections.split(",") if args.sections else DEFAULT_SECTIONS
    sections = [s for s in wanted if any(r["section"] == s for r in results)]
    if not sections:
        sys.exit(f"plot.py: no results of sections {', '.join(wanted)} in {args.report}")

    rows = []  # (section, [(shape key, shape name)], methods)
    for s in sections:
        rs = [r for r in results if r["section"] == s]
        shapes = [(k, n) for k, n in SHAPES if any(r["shape"] == k for r in rs)]
        methods = []
        for r in rs:
            if r["method"] not in methods:
                methods.append(r["method"])
        rows.append((s, shapes, methods))
    columns = max(len(shapes) for _, shapes, _ in rows)
    width = columns * PANEL_W + LEGEND_W + 20
    header = 58
    height = header + len(rows) * (PANEL_H + 14) + 10

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    what = "bench_compare: %s" % (report.get("device") if report.get("gpu_measured") else
                                   "CPU part only (%s)" % report.get("gpu_reason", "no GPU"))
    out.append(f'<text x="10" y="22" font-size="15" font-weight="bold">{escape(what)}</text>')
    out.append(f'<text x="10" y="42" font-size="11">{escape(report.get("date", ""))}; host CPU: '
               f'{escape(report.get("host_cpu", ""))}; command: {escape(report.get("command", ""))}</text>')
    for i, (s, shapes, methods) in enumerate(rows):
        y = header + i * (PANEL_H + 14)
        colors = {m: PALETTE[j % len(PALETTE)] for j, m in enumerate(methods)}
        for j, (key, name) in enumerate(shapes):
            series = {}
            for r in results:
                if r["section"] == s and r["shape"] == key:
                    u = r["us"]
                    series.setdefault(r["method"], []).append((r["nodes"], u["median"], u["q1"], u["q3"]))
            panel(out, j * PANEL_W, y, f"{name}", series, colors, "iterations" if key == "while" else "nodes")
        lx = columns * PANEL_W + 10
        out.append(f'<text x="{lx}" y="{y + 16}" font-size="12" font-weight="bold">{escape(TITLES.get(s, s))}</text>')
        for j, m in enumerate(methods):
            ly = y + 34 + j * 16
            out.append(f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 22}" y2="{ly - 4}" stroke="{colors[m]}" '
                       f'stroke-width="2.5"/>')
            out.append(f'<text x="{lx + 28}" y="{ly}" font-size="11">{escape(m)}</text>')
    out.append("</svg>")
    with open(args.svg, "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"plot.py: wrote {args.svg} ({len(sections)} sections)")


if __name__ == "__main__":
    main()
