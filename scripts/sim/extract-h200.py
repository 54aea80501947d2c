#!/usr/bin/env python3
"""Copies the 2 x H200 measurements the simulator validates against out of
bench/results/h200x2.md into CSV (gdr-bench's columns) under
bench/results/sim/h200x2/: the run-3 all-reduce table (8 B - 512 MiB) and
the run-2 table of the other collectives.

    scripts/sim/extract-h200.py
"""
import os
import re

from simdata import REPO, SIM_RESULTS

HEADER = "coll,ranks,type,size,count,avg_us,min_us,max_us,algbw,busbw,check,nccl_avg_us,nccl_busbw,ratio\n"
NAMES = {"all-gather": "allgather", "all-to-all": "alltoall", "reduce-scatter": "reducescatter",
         "broadcast": "bcast"}
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def main():
    text = open(os.path.join(REPO, "bench", "results", "h200x2.md")).read()
    out = os.path.join(SIM_RESULTS, "h200x2")
    os.makedirs(out, exist_ok=True)
    rows = {}
    block = text.split("## All-reduce, float32, final selection (run 3)")[1].split("```")[1]
    for line in block.splitlines():
        f = line.split()
        if len(f) >= 11 and f[0].isdigit():
            rows.setdefault("allreduce", []).append(
                "allreduce,2,float32,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n" % (
                    f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10].rstrip("x")))
    table = text.split("## Other collectives (run 2; same kernels as run 3)")[1].split("\n## ")[0]
    for line in table.splitlines():
        m = re.match(r"\| (all-gather|all-to-all|reduce-scatter|broadcast) \| ([\d.]+) (B|KiB|MiB) \| "
                     r"([\d.]+) \| ([-\d.]+) \| ([\d.]+) \| ([-\d.]+) \| ([\d.]+)x \|", line)
        if not m:
            continue
        coll = NAMES[m.group(1)]
        size = int(float(m.group(2)) * UNITS[m.group(3)])
        count = size // 4 // (1 if coll == "bcast" else 2)
        rows.setdefault(coll, []).append("%s,2,float32,%d,%d,%s,%s,%s,-,-,ok,%s,-,%s\n" % (
            coll, size, count, m.group(4), m.group(4), m.group(4), m.group(6), m.group(8)))
    for coll, lines in rows.items():
        with open(os.path.join(out, coll + ".csv"), "w") as f:
            f.write(HEADER)
            f.writelines(lines)
        print("%s: %d sizes" % (coll, len(lines)))


if __name__ == "__main__":
    main()
