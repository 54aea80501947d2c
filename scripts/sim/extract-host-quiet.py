#!/usr/bin/env python3
"""Copies the quiet-machine host all-reduce tables (np 2 and np 4, medians of
three runs, 2026-11-29) out of bench/results/host-2core.md into CSV under
bench/results/sim/host-quiet-1129/, a validation set measured without other
builds on the machine.

    scripts/sim/extract-host-quiet.py
"""
import os

from simdata import REPO, SIM_RESULTS

HEADER = "coll,ranks,type,size,count,avg_us,min_us,max_us,algbw,busbw,check,mpi_avg_us,mpi_busbw,ratio\n"
TABLES = [(2, "## All-reduce, np 2, three runs (float32, sum), quiet machine"),
          (4, "## All-reduce, np 4 on 2 cores (oversubscribed), three runs")]


def main():
    text = open(os.path.join(REPO, "bench", "results", "host-2core.md")).read()
    for np_, title in TABLES:
        table = text.split(title)[1].split("\n## ")[0]
        out = os.path.join(SIM_RESULTS, "host-quiet-1129", "np%d" % np_)
        os.makedirs(out, exist_ok=True)
        lines = []
        for line in table.splitlines():
            f = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(f) >= 8 and f[0].isdigit():
                size = int(f[0])
                lines.append("allreduce,%d,float32,%d,%d,%s,%s,%s,-,%s,ok,%s,%s,%s\n" % (
                    np_, size, size // 4, f[1], f[1], f[1], f[3], f[2], f[4], f[5].rstrip("x")))
        with open(os.path.join(out, "allreduce.run1.csv"), "w") as f:
            f.write(HEADER)
            f.writelines(lines)
        print("np %d: %d sizes" % (np_, len(lines)))


if __name__ == "__main__":
    main()
