#!/usr/bin/env python3
"""Predictions at scale on the fattree2 preset (hosts of 8 GPUs, 8 NICs each,
rail-optimised two-level fat tree, nominal 400 Gb/s NICs): ring, double
binary tree and recursive halving-doubling all-reduce at 256 MiB and
pairwise all-to-all at 1 GiB per rank, for 1024, 4096 and 16384 GPUs, each
timed (wall seconds of the gdr-sim call); and the selector's choice with
its predicted time over a range of sizes. Writes bench/results/sim/scale.json
and scale.md.

    scripts/sim/scale.py [--gdr-sim build/bin/gdr-sim] [--cluster fattree2]
"""
import argparse
import json
import os
import subprocess
import time

from simdata import REPO, SIM_RESULTS

RANKS = [1024, 4096, 16384]
FORCED = {"allreduce": ("256m", ["ring", "dbtree", "rhd"]), "alltoall": ("1g", ["pairwise"])}
SWEEP = ["1k", "64k", "1m", "16m", "256m"]


def run(gdr_sim, coll, cluster, ranks, size, algo=None):
    cmd = [gdr_sim, coll, "--cluster", cluster, "--ranks", str(ranks), "--min", size, "--max", size,
           "--format", "json"]
    if algo:
        cmd += ["--algo", algo]
    t0 = time.time()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = json.loads(out)["rows"]
    if not rows:
        return None  # under one element per rank
    row = rows[0]
    row["wall_s"] = time.time() - t0
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gdr-sim", default=os.path.join(REPO, "build", "bin", "gdr-sim"))
    ap.add_argument("--cluster", default="fattree2")
    a = ap.parse_args()
    load = open("/proc/loadavg").read().split()[0]
    series, md = {}, []
    md.append("Forced algorithms (cluster %s; load average %s when run):\n" % (a.cluster, load))
    md.append("| collective | size | algorithm | GPUs | predicted time (ms) | busbw (GB/s) | walker | gdr-sim wall (s) |")
    md.append("| --- | --- | --- | ---: | ---: | ---: | --- | ---: |")
    for coll, (size, algos) in FORCED.items():
        for algo in algos:
            for n in RANKS:
                r = run(a.gdr_sim, coll, a.cluster, n, size, algo)
                series.setdefault(coll, {}).setdefault(algo, []).append(
                    {"ranks": n, "busbw": r["busbw"], "us": r["avg_us"], "walker": r["walker"], "wall_s": r["wall_s"]})
                md.append("| %s | %s | %s | %d | %.2f | %.2f | %s | %.1f |" % (
                    coll, size, algo, n, r["avg_us"] / 1e3, r["busbw"], r["walker"], r["wall_s"]))
    md.append("\nThe selector's choice (no algorithm forced):\n")
    md.append("| collective | size | GPUs | algorithm | predicted time (us) | busbw (GB/s) |")
    md.append("| --- | --- | ---: | --- | ---: | ---: |")
    picks = []
    for coll in ("allreduce", "alltoall"):
        for n in RANKS:
            for size in SWEEP:
                r = run(a.gdr_sim, coll, a.cluster, n, size)
                if r is None:
                    continue
                picks.append({"coll": coll, "ranks": n, "size": size, **r})
                md.append("| %s | %s | %d | %s | %.1f | %.2f |" % (coll, size, n, r["algo"], r["avg_us"], r["busbw"]))
    json.dump({"cluster": a.cluster, "load": load, "sizes": {k: v[0] for k, v in FORCED.items()}, "series": series,
               "selected": picks}, open(os.path.join(SIM_RESULTS, "scale.json"), "w"), indent=1)
    open(os.path.join(SIM_RESULTS, "scale.md"), "w").write("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
