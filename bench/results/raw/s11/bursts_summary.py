#!/usr/bin/env python3
"""Summarises the bursts rounds of a cc-suite console (scripts/rxe/cc-suite.sh,
CC_BURST_ROUNDS > 1): per cell (GDR_IB_CC variant x chunk) the median algbw
over the rounds, its range, and for the adaptive chunk (GDR_IB_CHUNK=0) the
ratio of medians against each fixed size and against the best fixed size,
with 95% bootstrap intervals (rounds resampled within each cell). Also the
mean of the mechanism lines per cell. Usage: bursts_summary.py CONSOLE"""
import random
import re
import statistics
import sys
from collections import defaultdict

ROW = re.compile(r"===== \[cc\] \| (\w+) \| (\d+) \| ([\d.]*) \| ([\d.]*) \| ([\d.]*) \| (\d+) \|")
MECH = re.compile(r"===== \[cc\] \[bursts\] (\w+) (\d+) mechanism: (.*)")
FAILED = re.compile(r"===== \[cc\] \[bursts\] (\w+) (\d+) QPs failed over: +(\d+) to rank")


def med(x):
    return statistics.median(x) if x else float("nan")


def boot_ratio(a, b, n=4000, rng=random.Random(1)):
    r = []
    for _ in range(n):
        ra = [rng.choice(a) for _ in a]
        rb = [rng.choice(b) for _ in b]
        r.append(med(ra) / med(rb))
    r.sort()
    return r[int(0.025 * n)], r[int(0.975 * n)]


def boot_best(a, fixed, n=4000, rng=random.Random(2)):
    """adaptive median / the best fixed median, both resampled."""
    r = []
    for _ in range(n):
        ra = [rng.choice(a) for _ in a]
        best = max(med([rng.choice(f) for _ in f]) for f in fixed)
        r.append(med(ra) / best)
    r.sort()
    return r[int(0.025 * n)], r[int(0.975 * n)]


def main(path):
    cells = defaultdict(list)
    fails = defaultdict(int)
    mech = defaultdict(list)
    order = []
    for line in open(path, errors="replace"):
        line = line.strip("\r\n")
        m = ROW.search(line)
        if m and m.group(6):
            v, ch = m.group(1), int(m.group(2))
            if (v, ch) not in cells:
                order.append((v, ch))
            cells[(v, ch)].append(float(m.group(4)) if m.group(4) else 0.0)
            continue
        m = MECH.search(line)
        if m:
            mech[(m.group(1), int(m.group(2)))].append([int(x) for x in re.findall(r"\d+", m.group(3).replace("p50 ", "").replace("p99 ", ""))])
            continue
        m = FAILED.search(line)
        if m:
            fails[(m.group(1), int(m.group(2)))] += 1
    variants = []
    for v, _ in order:
        if v not in variants:
            variants.append(v)
    chunks = sorted({c for _, c in order})
    print("| GDR_IB_CC | GDR_IB_CHUNK | rounds | failed | median algbw MB/s | min-max | cells with a QP failover |")
    print("| --- | --- | ---: | ---: | ---: | --- | ---: |")
    for v in variants:
        for c in chunks:
            x = cells[(v, c)]
            ok = [y for y in x if y > 0]
            print(f"| {v} | {'adaptive' if c == 0 else str(c // 1024) + ' KiB'} | {len(x)} | {len(x) - len(ok)} | "
                  f"{med(ok):.3f} | {min(ok) if ok else 0:.2f}-{max(ok) if ok else 0:.2f} | {fails[(v, c)]} |")
    print()
    print("| GDR_IB_CC | adaptive / 64 KiB | adaptive / 128 KiB | adaptive / 256 KiB | adaptive / best fixed |")
    print("| --- | --- | --- | --- | --- |")
    allad, allfix = [], defaultdict(list)
    for v in variants:
        a = [y for y in cells[(v, 0)] if y > 0]
        row = [v]
        fixed = []
        for c in chunks[1:]:
            f = [y for y in cells[(v, c)] if y > 0]
            fixed.append(f)
            lo, hi = boot_ratio(a, f)
            row.append(f"{med(a) / med(f):.2f} ({lo:.2f}-{hi:.2f})")
        lo, hi = boot_best(a, fixed)
        best = max(med(f) for f in fixed)
        row.append(f"{med(a) / best:.2f} ({lo:.2f}-{hi:.2f})")
        print("| " + " | ".join(row) + " |")
    # every variant pooled (the variants' cells together)
    a = [y for v in variants for y in cells[(v, 0)] if y > 0]
    fixed = [[y for v in variants for y in cells[(v, c)] if y > 0] for c in chunks[1:]]
    row = ["all variants pooled"]
    for f in fixed:
        lo, hi = boot_ratio(a, f)
        row.append(f"{med(a) / med(f):.2f} ({lo:.2f}-{hi:.2f})")
    lo, hi = boot_best(a, fixed)
    row.append(f"{med(a) / max(med(f) for f in fixed):.2f} ({lo:.2f}-{hi:.2f})")
    print("| " + " | ".join(row) + " |")
    # paired by round: adaptive against the same round's fixed cells of its variant
    print()
    print("Paired by round (adaptive / the same round's cell of that fixed size, same variant):")
    for c in chunks[1:]:
        pairs = []
        for v in variants:
            for i, (x, y) in enumerate(zip(cells[(v, 0)], cells[(v, c)])):
                if x > 0 and y > 0:
                    pairs.append(x / y)
        rng = random.Random(3)
        bs = sorted(med([rng.choice(pairs) for _ in pairs]) for _ in range(4000))
        print(f"  vs {c // 1024} KiB: {len(pairs)} pairs, median {med(pairs):.2f} (95% {bs[100]:.2f}-{bs[3899]:.2f}), "
              f"adaptive ahead in {sum(p > 1 for p in pairs)}, at least +40% in {sum(p >= 1.4 for p in pairs)}")
    print()
    print("Mechanism, means over the rounds (chunks, mean bytes, hill-climb up, down, chunk now lo, hi, "
          "window lo, hi, decreases, high delay, retransmissions seen, on the ports, p50 us, p99 us):")
    for v in variants:
        for c in chunks:
            ms = [m for m in mech[(v, c)] if len(m) >= 15]
            if not ms:
                continue
            cols = list(zip(*ms))
            # m[0] is the connection count
            mean = [statistics.mean(col) for col in cols]
            print(f"  {v:8} {c:7}: conns {mean[0]:.0f}, chunks {mean[1]:.0f}, mean {mean[2]:.0f} B, "
                  f"hill-climb {mean[3]:.1f} up {mean[4]:.1f} down, chunk now {mean[5]:.0f}-{mean[6]:.0f}, "
                  f"window {mean[7]:.0f}-{mean[8]:.0f}, decreases {mean[9]:.1f} (delay {mean[10]:.1f}, "
                  f"retrans {mean[11]:.1f}), port retrans {mean[12]:.1f}, p50 {med([m[13] for m in ms]):.0f} us, "
                  f"p99 {med([m[14] for m in ms]):.0f} us")


if __name__ == "__main__":
    main(sys.argv[1])
