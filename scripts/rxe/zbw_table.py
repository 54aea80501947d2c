#!/usr/bin/env python3
"""The medians table of zbw-suite.sh's lines in a VM console log.

    scripts/rxe/zbw_table.py CONSOLE_LOG [THRESHOLD ...]

Per size: ib_write_bw, gdrcoll eager and zero-copy (MiB/s, median over the
rounds, with min-max), each gdrcoll mode's ratio to ib_write_bw (the
median of the per-round ratios: each round's runs of a size are back to back;
v-NAME: ZBW_VARIANTS),
and, per zero-copy threshold given (default 0 = never, 65536, 262144,
1048576), the ratio the send takes with that threshold (zero-copy at or
above it).
"""
import re
import statistics
import sys

LINE = re.compile(r"\[zbw\] round=(\d+) bytes=(\d+) what=(\S+) MiBps=(\S+)")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    thresholds = [int(t) for t in sys.argv[2:]] or [0, 65536, 262144, 1048576]
    runs = {}  # (bytes, what) -> {round: MiB/s}
    with open(sys.argv[1], errors="replace") as f:
        for m in LINE.finditer(f.read()):
            r, b, what, v = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
            if v != "-":
                runs.setdefault((b, what), {})[r] = float(v)
    sizes = sorted({b for b, _ in runs})
    if not sizes:
        sys.exit("no [zbw] lines in " + sys.argv[1])

    def cell(b, what):
        v = list(runs.get((b, what), {}).values())
        if not v:
            return "-"
        return "%.2f (%.2f-%.2f)" % (statistics.median(v), min(v), max(v))

    def ratio(b, what):
        ref, got = runs.get((b, "ib_write_bw"), {}), runs.get((b, what), {})
        rs = [got[r] / ref[r] for r in got if r in ref and ref[r] > 0]
        return statistics.median(rs) if rs else None

    def fmt(x):
        return "-" if x is None else "%.2f" % x

    rounds = max(len(v) for v in runs.values())
    modes = ["eager", "zcopy"] + sorted({w for _, w in runs if w.startswith("v-")})
    print("%d rounds; MiB/s: median (min-max); ratio: median of the rounds' ratios" % rounds)
    print()
    print("| bytes | ib_write_bw | " + " | ".join(modes) + " | " +
          " | ".join("%s / ib_write_bw" % m for m in modes) + " |")
    print("|---:|" + "---:|" * (1 + 2 * len(modes)))
    for b in sizes:
        print("| %d | %s | %s | %s |" % (b, cell(b, "ib_write_bw"),
                                         " | ".join(cell(b, m) for m in modes),
                                         " | ".join(fmt(ratio(b, m)) for m in modes)))
    print()
    print("ratio to ib_write_bw per GDR_IB_ZCOPY_BYTES (zero-copy at or above it; 0: never)")
    print()
    print("| bytes | " + " | ".join("%d" % t for t in thresholds) + " |")
    print("|---:|" + "---:|" * len(thresholds))
    for b in sizes:
        cells = [fmt(ratio(b, "zcopy" if t and b >= t else "eager")) for t in thresholds]
        print("| %d | %s |" % (b, " | ".join(cells)))


if __name__ == "__main__":
    main()
