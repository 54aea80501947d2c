"""Shared by the simulator's scripts: measured medians from gdr-bench CSV
files, and predictions from gdr-sim."""
import csv
import glob
import json
import math
import os
import statistics
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIM_RESULTS = os.path.join(REPO, "bench", "results", "sim")


def medians(pattern):
    """{size: median avg_us} over every CSV matching pattern (one per run)."""
    by_size = {}
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            for row in csv.DictReader(f):
                if row.get("check", "-") == "FAIL":
                    continue
                by_size.setdefault(int(row["size"]), []).append(float(row["avg_us"]))
    return {s: statistics.median(v) for s, v in sorted(by_size.items())}


def spread(pattern):
    """Geometric mean over sizes of (max - min) / median across the runs:
    how far the measurement itself moves from run to run (None: one run)."""
    by_size = {}
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            for row in csv.DictReader(f):
                by_size.setdefault(int(row["size"]), []).append(float(row["avg_us"]))
    vals = [(max(v) - min(v)) / statistics.median(v) for v in by_size.values() if len(v) > 1]
    if not vals:
        return None
    return math.exp(sum(math.log(max(x, 1e-4)) for x in vals) / len(vals))


def runs(pattern):
    return len(glob.glob(pattern))


def predict(gdr_sim, coll, cluster, ranks, sizes, calibration=None, sets="", tuning=None):
    """{size: predicted avg_us} from one gdr-sim call over the doubling range;
    `tuning`: a GDR_TUNING_FILE that pins the selector the data ran under."""
    if not sizes:
        return {}
    cmd = [gdr_sim, coll, "--cluster", cluster, "--ranks", str(ranks), "--min", str(min(sizes)),
           "--max", str(max(sizes)), "--format", "json"]
    if calibration:
        cmd += ["--calibration", calibration]
    if sets:
        cmd += ["--set", sets]
    env = dict(os.environ)
    env.pop("GDR_TUNING_FILE", None)
    if tuning:
        env["GDR_TUNING_FILE"] = tuning
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return {r["size"]: (r["avg_us"], r["algo"]) for r in json.loads(out)["rows"]}


# The validation sets: (name, collective, cluster preset, ranks, measured CSV glob).
COLLS = ["allreduce", "allgather", "reducescatter", "bcast", "reduce", "alltoall", "alltoallv"]


def host_sets():
    sets = []
    for np_ in (2, 4, 8):
        for coll in COLLS:
            pat = os.path.join(SIM_RESULTS, "host", "np%d" % np_, coll + ".run*.csv")
            if runs(pat):
                sets.append(("host np%d" % np_, coll, "host-shm", np_, pat))
    return sets


def h200_sets():
    sets = []
    for coll in COLLS:
        pat = os.path.join(SIM_RESULTS, "h200x2", coll + ".csv")
        if runs(pat):
            sets.append(("2xH200", coll, "h200x2", 2, pat))
    return sets
