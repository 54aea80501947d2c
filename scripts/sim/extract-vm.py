#!/usr/bin/env python3
"""Copies the Soft-RoCE VM's plain all-reduce timings (the rdma suite's
enc_bandwidth step: gdr-rdma-test arbw, 2 ranks over rxe0/rxe1, float32 sum,
10 calls after 2 warm-up calls) out of a console log into gdr-bench's CSV
columns under bench/results/sim/vm/np2/, and the bandwidth step's rates into
vm/bandwidth.txt.

    APPEND="gdr.only=enc_bandwidth" scripts/rxe/rxe-test.sh --build-dir build
    APPEND="gdr.only=bandwidth" scripts/rxe/rxe-test.sh --build-dir build
    scripts/sim/extract-vm.py CONSOLE_ENC [CONSOLE_BW] [--run N]

or, from a boot of the guest's gdr-bench suite (scripts/rxe/bench-suite.sh:
gdr-bench's own CSV rows, every collective it ran), each collective's rows
into vm/np2/<coll>.run<N>.csv:

    APPEND="gdr.suite=bench" scripts/rxe/rxe-test.sh --build-dir build
    scripts/sim/extract-vm.py --bench CONSOLE [--run N]
"""
import argparse
import os
import re

from simdata import SIM_RESULTS

HEADER = "coll,ranks,type,size,count,avg_us,min_us,max_us,algbw,busbw,check\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("enc", help="console log (of the bench suite with --bench)")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("bw", nargs="?")
    ap.add_argument("--run", type=int, default=1)
    a = ap.parse_args()
    out = os.path.join(SIM_RESULTS, "vm", "np2")
    os.makedirs(out, exist_ok=True)
    if a.bench:
        per = {}
        for line in open(a.enc, errors="replace"):
            m = re.search(r"===== \[bench\] csv\| (.*)$", line.rstrip())
            if m and not m.group(1).startswith("coll,"):
                per.setdefault(m.group(1).split(",")[0], []).append(m.group(1) + "\n")
        for coll, lines in per.items():
            with open(os.path.join(out, "%s.run%d.csv" % (coll, a.run)), "w") as f:
                f.write(HEADER.rstrip("\n") + ",mpi_avg_us,mpi_busbw,ratio\n" + "".join(lines))
            print("%s: %d sizes -> %s" % (coll, len(lines), out))
        return
    rows = []
    for line in open(a.enc, errors="replace"):
        m = re.search(r"ARBW encrypt=0 bytes=(\d+) iters=\d+ us=(\d+) algbw_MBps=([\d.]+)", line)
        if m:
            size, us, mbps = int(m.group(1)), float(m.group(2)), float(m.group(3))
            rows.append("allreduce,2,float32,%d,%d,%.1f,%.1f,%.1f,%.4f,%.4f,ok\n" % (
                size, size // 4, us, us, us, mbps / 1e3, mbps / 1e3))
    with open(os.path.join(out, "allreduce.run%d.csv" % a.run), "w") as f:
        f.write(HEADER + "".join(rows))
    if a.bw:
        keep = [l.rstrip() for l in open(a.bw, errors="replace")
                if re.search(r"ib_write_bw\||bandwidth|\[bandwidth\]", l)]
        with open(os.path.join(SIM_RESULTS, "vm", "bandwidth.txt"), "w") as f:
            f.write("\n".join(keep) + "\n")
    print("%d sizes -> %s" % (len(rows), out))


if __name__ == "__main__":
    main()
