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


SMALL_MAX = (1 << 20) - 1  # the small band (bar 15%) ends below 1 MiB
INF = 1 << 62


def sources(pat):
    """A measured series: one CSV glob (one file per run), or a list of
    (glob, min size, max size): each size is read from the first source
    whose range holds it and that measured it (a small-size set with many
    iterations beside a full-range one)."""
    return [(pat, 0, INF)] if isinstance(pat, str) else pat


def _by_size(pat, keep_failed=False):
    out = {}
    for glb, lo, hi in sources(pat):
        here = {}
        for path in sorted(glob.glob(glb)):
            with open(path) as f:
                for row in csv.DictReader(f):
                    if not keep_failed and row.get("check", "-") == "FAIL":
                        continue
                    s = int(row["size"])
                    if lo <= s <= hi and s not in out:
                        here.setdefault(s, []).append(float(row["avg_us"]))
        out.update(here)
    return dict(sorted(out.items()))


def medians(pattern):
    """{size: median avg_us} over every run of the series (see sources)."""
    return {s: statistics.median(v) for s, v in _by_size(pattern).items()}


def spread(pattern, lo=0, hi=INF):
    """Geometric mean over sizes lo..hi of (max - min) / median across the
    runs: how far the measurement itself moves from run to run (None: one
    run)."""
    vals = [(max(v) - min(v)) / statistics.median(v) for s, v in _by_size(pattern, True).items()
            if lo <= s <= hi and len(v) > 1]
    if not vals:
        return None
    return math.exp(sum(math.log(max(x, 1e-4)) for x in vals) / len(vals))


def self_error(pattern, lo=0, hi=INF):
    """The measurement's own error, in the error table's terms: geometric
    mean over sizes lo..hi and runs of |run - median of the other runs| /
    that median, i.e. how well one run predicts the others (None: one run)."""
    errs, taken = [], set()
    for glb, slo, shi in sources(pattern):
        per_run = []
        for path in sorted(glob.glob(glb)):
            with open(path) as f:
                per_run.append({int(r["size"]): float(r["avg_us"]) for r in csv.DictReader(f)})
        here = set()
        for i, run in enumerate(per_run):
            others = per_run[:i] + per_run[i + 1:]
            for size, v in run.items():
                if not (lo <= size <= hi and slo <= size <= shi) or size in taken or not others:
                    continue
                if all(size in o for o in others):
                    m = statistics.median(o[size] for o in others)
                    errs.append(abs(v - m) / m)
                    here.add(size)
        taken |= here
    if not errs:
        return None
    return math.exp(sum(math.log(max(x, 1e-4)) for x in errs) / len(errs))


def runs(pattern):
    """Runs per source, e.g. "3+4" for a small-size set of 3 runs beside a
    full-range one of 4 (sources that hold no file are left out)."""
    n = [len(glob.glob(g)) for g, _, _ in sources(pattern)]
    return "+".join(str(k) for k in n if k)


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


# Host-memory sets: (folders under bench/results/sim, name in the table,
# whether the error bar applies). The held set is the lead's quiet run of
# main d62b330 (session 19, 2026-12-03 17:48-18:13 UTC): below 1 MiB from
# host-s19-small (--iters 2000, three runs), from 1 MiB from host-s19
# (--iters 100, four runs), both by scripts/sim/measure-host.sh. It replaced
# the same measurement of main aac89ef (host-quiet2-small + host-quiet2,
# 2026-12-01), kept beside it as host-aac89ef: the host path changed in
# between (runner-free short schedules, a broadcast's single copy shared by
# both ranks), so those runs no longer measure the library the model
# describes (bench/results/simulator.md, "The library moved"). Not held
# either: host-quiet3, seven series re-measured from 1 MiB on main f9493be
# in a freeze; the quiet set of main b5bb831 (an older host call path, 2-3x
# slower at small sizes), the loaded set (other builds on the 2 cores, load
# 8-22) and the 2026-11-29 one (an older build and selector).
# A folder's cluster.txt (the first folder's), where it has one, describes
# what that build's library did (the sets before a41a81e: no shared copy;
# every set here but the held one predates the runner-free paths' pricing,
# which the calibration fits only on the held set).
HOST_DIRS = [(("host-s19-small", "host-s19"), "host", True),
             (("host-quiet2-small", "host-quiet2"), "host-aac89ef", False),
             (("host-quiet3",), "host-f9493be", False),
             (("host-quiet",), "host-b5bb831", False),
             (("host",), "host-loaded", False), (("host-quiet-1129",), "host-1129", False)]


def host_series(folders, np_, coll):
    """The series of one host set (see HOST_DIRS) for np_ ranks and coll:
    one folder, or a small-size folder (below 1 MiB) then full-range ones,
    each size from the first that measured it."""
    globs = [os.path.join(SIM_RESULTS, f, "np%d" % np_, coll + ".run*.csv") for f in folders]
    if len(globs) == 1:
        return globs[0]
    return [(globs[0], 0, SMALL_MAX)] + [(g, 0, INF) for g in globs[1:]]


def host_cluster(folders):
    """The cluster a host set was measured on: its first folder's
    cluster.txt, else the host-shm preset."""
    f = os.path.join(SIM_RESULTS, folders[0], "cluster.txt")
    return f if os.path.exists(f) else "host-shm"


def host_sets():
    sets = []
    for folders, label, _ in HOST_DIRS:
        for np_ in (2, 4, 8):
            for coll in COLLS:
                pat = host_series(folders, np_, coll)
                if runs(pat):
                    sets.append(("%s np%d" % (label, np_), coll, host_cluster(folders), np_, pat))
    return sets


def in_bar(set_name, band="large"):
    """Whether the error bar applies to a set's band ("small": below 1 MiB,
    "large": from 1 MiB; see HOST_DIRS and socket_sets)."""
    for _, label, held in SOCKET_DIRS:
        if set_name.startswith(label + " "):
            return held and band == "large"
    if set_name.startswith("vm "):
        return False
    for _, label, bar in HOST_DIRS:
        if set_name.startswith(label + " "):
            return bar
    return True


# Socket sets: (folder, name, whether sizes from 1 MiB are held to the bar).
# `socket` is this session's run of main aac89ef (load 7-17 from other
# helpers' builds), `socket-early` the 2026-12-01 10:23 run of an earlier
# main (load 12-26), kept beside it.
# `socket-s12-loaded` is measure-socket.sh's run with 10 timed calls per size
# above 1 MiB (the held set has 2), under load 4-11; a folder's own
# cluster.txt (the window it was measured with) goes before socket's.
# `socket-quiet` is the same script's two runs in a freeze (1-8 MiB, load
# 2-3): held from 1 MiB in place of `socket`, whose 2 timed calls a size at
# load 7-17 are kept beside it, not held.
# `socket-s18`: np 4 all-to-all and all-to-all-v again (the same script, two
# runs, quiet), once the selector took direct for ranks alone on their hosts;
# socket-quiet's pairwise runs of them are kept in np4/pairwise-acb7ec3/.
# `socket-250m`: every collective at 2 and 4 hosts with the links shaped to
# 250 Mbit/s (session 18, quiet), where 4 emulated hosts on the 2 cores still
# reach the shaped rate (a ring all-gather 0.99 of it; at 1 Gbit/s 0.86).
SOCKET_DIRS = [("socket-quiet", "socket-quiet", True), ("socket-s18", "socket-s18", True),
               ("socket-250m", "socket-250m", True),
               ("socket", "socket", False),
               ("socket-early", "socket-early", False), ("socket-s12-loaded", "socket-s12-loaded", False)]


def socket_sets():
    """The emulated hosts over 1 Gbit/s shaped links (bench/results/cluster.md),
    measured under load: below 1 MiB the times are that load (0.3-3 ms per
    message), so only sizes from 1 MiB, where the shaped rate dominates, are
    held to the bar."""
    sets = []
    for folder, label, _ in SOCKET_DIRS:
        desc = os.path.join(SIM_RESULTS, folder, "cluster.txt")
        if not os.path.exists(desc):
            desc = os.path.join(SIM_RESULTS, "socket", "cluster.txt")
        for np_ in (2, 4):
            for coll in COLLS:
                pat = os.path.join(SIM_RESULTS, folder, "np%d" % np_, coll + ".run*.csv")
                if runs(pat):
                    sets.append(("%s np%d" % (label, np_), coll, desc, np_, pat))
    return sets


def vm_sets():
    """The Soft-RoCE VM (scripts/rxe, QEMU TCG with 2 vCPUs on this
    machine): two ranks, one per rxe device, over verbs, every collective
    from one boot of the guest's gdr-bench suite (vm/cluster.txt,
    vm/README.md). Not held: its times are TCG's emulated CPU under host
    load, not the link's (4-21 ms per call below 64 KiB whatever the size)."""
    sets = []
    desc = os.path.join(SIM_RESULTS, "vm", "cluster.txt")
    for coll in COLLS:
        pat = os.path.join(SIM_RESULTS, "vm", "np2", coll + ".run*.csv")
        if runs(pat):
            sets.append(("vm np2", coll, desc, 2, pat))
    return sets


def h200_sets():
    sets = []
    for coll in COLLS:
        pat = os.path.join(SIM_RESULTS, "h200x2", coll + ".csv")
        if runs(pat):
            sets.append(("2xH200", coll, "h200x2", 2, pat))
    return sets
