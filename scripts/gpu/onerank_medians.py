#!/usr/bin/env python3
"""Medians of interleaved one-rank nccl-api-bench runs, real NCCL against ours.

  onerank_medians.py DIR   (files DIR/onerank-<coll>-<real|ours>-<run>.txt)
"""
import glob
import statistics
import sys

o = sys.argv[1]
for coll in ["alltoall", "reducescatter", "allreduce", "allgather"]:
    t = {}
    for lib in ["real", "ours"]:
        for f in glob.glob(f"{o}/onerank-{coll}-{lib}-*.txt"):
            for line in open(f):
                x = line.split()
                if len(x) > 3 and x[0].isdigit():
                    t.setdefault((int(x[0]), lib), []).append(float(x[2]))
    if not t:
        continue
    print(f"one rank {coll}: size, real median us, ours median us, real/ours (runs)")
    for s in sorted({k[0] for k in t}):
        r, u = t.get((s, "real"), []), t.get((s, "ours"), [])
        if r and u:
            mr, mu = statistics.median(r), statistics.median(u)
            print(f"  {s:>9} {mr:7.2f} {mu:7.2f} {mr / mu:5.2f}x ({len(r)}/{len(u)})")
