#!/usr/bin/python3
"""Plots for the simulator and for any gdr-bench result (matplotlib from
Debian's python3-matplotlib; not needed in CI).

    scripts/sim/plot.py validation [--json errors-detail.json] [--out DIR]
        predicted against measured busbw over size, one panel per collective,
        one PNG per validation set (bench/results/sim/plots/validation-*.png)
    scripts/sim/plot.py scale FILE.json [--out DIR]
        predicted busbw against rank count, one line per algorithm (the JSON
        scripts/sim/scale.py writes)
    scripts/sim/plot.py bench RESULT.json|RESULT.csv ... [--out DIR]
        a gdr-bench result: gdrcoll beside its peer, busbw and latency over size
"""
import argparse
import csv
import json
import os
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from simdata import REPO, SIM_RESULTS  # noqa: E402

BUS = {"allreduce": lambda n: 2.0 * (n - 1) / n, "allgather": lambda n: (n - 1) / n,
       "reducescatter": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n,
       "alltoallv": lambda n: (n - 1) / n}


def busbw(coll, ranks, size, us):
    return size / (us * 1e3) * BUS.get(coll, lambda n: 1.0)(ranks) if us > 0 else 0


def ranks_of(name):
    return 2 if "H200" in name else int(name.split("np")[1])


def validation(a):
    path = a.json or os.path.join(SIM_RESULTS, "errors-detail.json")
    if not a.json:
        subprocess.run([sys.executable, os.path.join(HERE, "validate.py"), "--json", path], check=True,
                       stdout=subprocess.DEVNULL)
    rows = json.load(open(path))
    by_set = {}
    for r in rows:
        by_set.setdefault(r["set"], []).append(r)
    out = []
    for name, sets in by_set.items():
        cols = min(4, len(sets))
        nrows = (len(sets) + cols - 1) // cols
        fig, axes = plt.subplots(nrows, cols, figsize=(4 * cols, 3.2 * nrows), squeeze=False)
        for ax, r in zip(axes.flat, sets):
            n = ranks_of(name)
            pts = r["points"]
            xs = [p["size"] for p in pts]
            ax.plot(xs, [busbw(r["coll"], n, p["size"], p["measured_us"]) for p in pts], "o-", ms=3,
                    label="measured (median of %s)" % r["runs"])
            ax.plot(xs, [busbw(r["coll"], n, p["size"], p["predicted_us"]) for p in pts], "s--", ms=3,
                    label="gdr-sim")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title("%s %s" % (r["coll"], "(calibration)" if r["calibration"] else ""), fontsize=9)
            ax.set_xlabel("size (B)", fontsize=8)
            ax.set_ylabel("busbw (GB/s)", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(True, alpha=0.3)
        for ax in list(axes.flat)[len(sets):]:
            ax.axis("off")
        axes.flat[0].legend(fontsize=7)
        fig.suptitle("%s: predicted vs measured busbw" % name)
        fig.tight_layout()
        path = os.path.join(a.out, "validation-%s.png" % name.replace(" ", "-"))
        fig.savefig(path, dpi=90)
        plt.close(fig)
        out.append(path)
    return out


def scale(a):
    data = json.load(open(a.file))
    out = []
    for coll, series in data["series"].items():
        fig, ax = plt.subplots(figsize=(6, 4))
        for algo, pts in series.items():
            ax.plot([p["ranks"] for p in pts], [p["busbw"] for p in pts], "o-", label=algo)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("GPUs (%s)" % data["cluster"])
        ax.set_ylabel("predicted busbw (GB/s)")
        ax.set_title("%s, %s per call" % (coll, data["sizes"][coll]))
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.tight_layout()
        path = os.path.join(a.out, "scale-%s.png" % coll)
        fig.savefig(path, dpi=90)
        plt.close(fig)
        out.append(path)
    return out


def load_bench(path):
    if path.endswith(".json"):
        d = json.load(open(path))
        return d["coll"], d["ranks"], d.get("peer") or "peer", d["rows"]
    rows = list(csv.DictReader(open(path)))
    peer = next((k[:-7] for k in rows[0] if k.endswith("_avg_us")), "peer")
    conv = [{"size": int(r["size"]), "avg_us": float(r["avg_us"]), "busbw": float(r["busbw"]),
             "peer_avg_us": float(r[peer + "_avg_us"]), "peer_busbw": float(r[peer + "_busbw"])} for r in rows]
    return rows[0]["coll"], int(rows[0]["ranks"]), peer, conv


def bench(a):
    out = []
    for path in a.files:
        coll, ranks, peer, rows = load_bench(path)
        xs = [r["size"] for r in rows]
        fig, (bw, lat) = plt.subplots(1, 2, figsize=(10, 4))
        bw.plot(xs, [r["busbw"] for r in rows], "o-", ms=3, label="gdrcoll")
        lat.plot(xs, [r["avg_us"] for r in rows], "o-", ms=3, label="gdrcoll")
        if any(r.get("peer_avg_us", 0) > 0 for r in rows):
            bw.plot(xs, [r["peer_busbw"] for r in rows], "s--", ms=3, label=peer)
            lat.plot(xs, [r["peer_avg_us"] for r in rows], "s--", ms=3, label=peer)
        for ax, what in ((bw, "busbw (GB/s)"), (lat, "latency (us)")):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("size (B)")
            ax.set_ylabel(what)
            ax.grid(True, alpha=0.3)
            ax.legend()
        fig.suptitle("%s, %d ranks (%s)" % (coll, ranks, os.path.basename(path)))
        fig.tight_layout()
        dst = os.path.join(a.out, os.path.splitext(os.path.basename(path))[0] + ".png")
        fig.savefig(dst, dpi=90)
        plt.close(fig)
        out.append(dst)
    return out


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="what", required=True)
    v = sub.add_parser("validation")
    v.add_argument("--json", help="validate.py --json output (default: run validate.py)")
    s = sub.add_parser("scale")
    s.add_argument("file")
    b = sub.add_parser("bench")
    b.add_argument("files", nargs="+")
    for p in (v, s, b):
        p.add_argument("--out", default=os.path.join(SIM_RESULTS, "plots"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for path in {"validation": validation, "scale": scale, "bench": bench}[a.what](a):
        print(path)


if __name__ == "__main__":
    main()
