#!/usr/bin/env python3
"""The comparison table of bench/results/gpudirect.md from gdr-gpu-direct-bench rows.

  gpudirect_table.py FILE...   (the bench's output: rows
  | path | collective | bytes | us | GB/s | CPU s/GB r0 | r1 | CPU % r0 | r1 |)

Per (collective, bytes): the median over rounds of each path's time, its
bandwidth (bytes / median time), both ranks' CPU s/GB (medians), and
direct / staged time. Paths: staged, direct (host order), flags (cuStreamWaitValue32),
flags-kernel (a polling kernel).
"""
import statistics
import sys

rows = {}
for name in sys.argv[1:]:
    for line in open(name):
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) != 9 or not c[2].isdigit():
            continue
        key = (c[1], int(c[2]), c[0])
        rows.setdefault(key, []).append([float(x) for x in c[3:]])

paths = [p for p in ("staged", "direct", "flags", "flags-kernel") if any(k[2] == p for k in rows)]
if not paths:
    sys.exit("no bench rows")


def med(v, i):
    return statistics.median(r[i] for r in v)


head = ["collective", "bytes"]
for p in paths:
    head += [f"{p} us", f"{p} GB/s", f"{p} CPU s/GB r0/r1"]
if "staged" in paths and "direct" in paths:
    head.append("direct/staged time")
print("| " + " | ".join(head) + " |")
print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|")
for coll, size in sorted({(k[0], k[1]) for k in rows}, key=lambda k: (k[0], k[1])):
    cells = [coll, str(size)]
    t = {}
    for p in paths:
        v = rows.get((coll, size, p))
        if not v:
            cells += ["-", "-", "-"]
            continue
        t[p] = med(v, 0)
        cells += [f"{t[p]:.1f}", f"{size / t[p] / 1e3:.3f}", f"{med(v, 2):.2f} / {med(v, 3):.2f}"]
    if "staged" in paths and "direct" in paths:
        cells.append(f"{t['direct'] / t['staged']:.2f}" if "staged" in t and "direct" in t else "-")
    print("| " + " | ".join(cells) + " |")
counts = [len(v) for v in rows.values()]
print(f"\n(medians of {min(counts)}-{max(counts)} rounds per cell)")
