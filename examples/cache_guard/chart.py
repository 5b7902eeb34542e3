#!/usr/bin/env python3
"""chart.py RESULTS.jsonl... > chart.svg: the cache guard's measurements as an SVG bar chart.

Reads the JSON lines `cache_guard bench` prints, takes the median of the repetitions of each
configuration (database, absent share, guarded or not) and draws three panels: database queries
per second, p99 latency of present keys and p99 latency of absent keys, each bar labelled with its
value. Latencies use a log scale (PostgreSQL's are ~100x SQLite's). Standard library only.
"""
import json
import math
import statistics
import sys
from collections import defaultdict


def load(paths):
    runs = defaultdict(list)
    for path in paths:
        with open(path) as f:
            for line in f:
                row = json.loads(line)
                # The closed-loop runs (offered_per_s 0): each client at its own pace.
                if "guard" in row and not row.get("offered_per_s"):
                    runs[(row["db"], row["absent"], row["guard"])].append(row)
    medians = {}
    for key, rows in runs.items():
        medians[key] = {m: statistics.median(r[m] for r in rows) for m in rows[0]
                        if isinstance(rows[0][m], (int, float)) and not isinstance(rows[0][m], bool)}
    return medians


PANELS = [
    ("db_queries_per_s", "database queries / s", False, "{:.0f}"),
    ("present_p99_us", "p99 present keys (µs, log)", True, "{:.0f}"),
    ("absent_p99_us", "p99 absent keys (µs, log)", True, "{:.1f}"),
]
COLORS = {False: "#b0b0b0", True: "#2a7ab0"}


def main():
    data = load(sys.argv[1:])
    groups = sorted({(db, absent) for db, absent, _ in data}, key=lambda g: (g[0] != "sqlite", g[1]))
    bar, gap, panel_w, panel_h, top, left = 26, 22, 0, 220, 50, 60
    panel_w = len(groups) * (2 * bar + gap) + gap
    width = left + len(PANELS) * (panel_w + left) + 10
    height = top + panel_h + 80
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="18" font-size="14">cache guard: without (grey) and with (blue) '
           'the Bloom filter, 4 closed-loop clients, medians of 3</text>']
    for p, (metric, title, log, fmt) in enumerate(PANELS):
        x0 = left + p * (panel_w + left)
        values = [data[(db, a, g)][metric] for db, a in groups for g in (False, True)
                  if (db, a, g) in data]
        vmax = max(values)
        vmin = max(min(v for v in values if v > 0), 1e-3) if log else 0
        lo = math.floor(math.log10(vmin)) if log else 0
        hi = math.ceil(math.log10(vmax)) if log else 0

        def y_of(v):
            if log:
                frac = (math.log10(max(v, 10 ** lo)) - lo) / max(hi - lo, 1)
            else:
                frac = v / vmax
            return top + panel_h - frac * panel_h

        out.append(f'<text x="{x0}" y="{top - 12}" font-size="12">{title}</text>')
        out.append(f'<line x1="{x0}" y1="{top + panel_h}" x2="{x0 + panel_w}" '
                   f'y2="{top + panel_h}" stroke="black"/>')
        if log:
            for e in range(lo, hi + 1):
                y = y_of(10 ** e)
                out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + panel_w}" y2="{y:.1f}" '
                           'stroke="#e0e0e0"/>')
                out.append(f'<text x="{x0 - 4}" y="{y + 4:.1f}" text-anchor="end">{10 ** e:g}</text>')
        for i, (db, absent) in enumerate(groups):
            gx = x0 + gap + i * (2 * bar + gap)
            for j, guarded in enumerate((False, True)):
                row = data.get((db, absent, guarded))
                if row is None:
                    continue
                v = row[metric]
                y = y_of(v)
                bx = gx + j * bar
                out.append(f'<rect x="{bx}" y="{y:.1f}" width="{bar - 2}" '
                           f'height="{top + panel_h - y:.1f}" fill="{COLORS[guarded]}"/>')
                out.append(f'<text x="{bx + bar / 2 - 1:.1f}" y="{y - 3:.1f}" font-size="9" '
                           f'text-anchor="middle">{fmt.format(v)}</text>')
            out.append(f'<text x="{gx + bar}" y="{top + panel_h + 14}" text-anchor="middle">'
                       f'{db}</text>')
            out.append(f'<text x="{gx + bar}" y="{top + panel_h + 27}" text-anchor="middle">'
                       f'{absent * 100:.0f}% absent</text>')
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main()
