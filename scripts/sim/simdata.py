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


# Host-memory sets: (folder under bench/results/sim, name in the table,
# whether the error bar applies). The quiet set is the one the model is
# calibrated on and held to; the loaded set (other builds on the 2 cores,
# load 8-22) and the 2026-11-29 one (an older build and selector, one run)
# are reported beside it.
HOST_DIRS = [("host-quiet", "host", True), ("host", "host-loaded", False), ("host-quiet-1129", "host-1129", False)]


def host_sets():
    sets = []
    for folder, label, _ in HOST_DIRS:
        for np_ in (2, 4, 8):
            for coll in COLLS:
                pat = os.path.join(SIM_RESULTS, folder, "np%d" % np_, coll + ".run*.csv")
                if runs(pat):
                    sets.append(("%s np%d" % (label, np_), coll, "host-shm", np_, pat))
    return sets


def in_bar(set_name, band="large"):
    """Whether the error bar applies to a set's band ("small": below 1 MiB,
    "large": from 1 MiB; see HOST_DIRS and socket_sets)."""
    if set_name.startswith("socket "):
        return band == "large"
    for _, label, bar in HOST_DIRS:
        if set_name.startswith(label + " "):
            return bar
    return True


def socket_sets():
    """The emulated hosts over 1 Gbit/s shaped links (bench/results/cluster.md),
    measured at load 12-26: below 1 MiB the times are that load (0.3-3 ms
    per message), so only sizes from 1 MiB, where the shaped rate dominates,
    are held to the bar."""
    sets = []
    desc = os.path.join(SIM_RESULTS, "socket", "cluster.txt")
    for np_ in (2, 4):
        for coll in COLLS:
            pat = os.path.join(SIM_RESULTS, "socket", "np%d" % np_, coll + ".run*.csv")
            if runs(pat):
                sets.append(("socket np%d" % np_, coll, desc, np_, pat))
    return sets


def h200_sets():
    sets = []
    for coll in COLLS:
        pat = os.path.join(SIM_RESULTS, "h200x2", coll + ".csv")
        if runs(pat):
            sets.append(("2xH200", coll, "h200x2", 2, pat))
    return sets
