#!/usr/bin/env bash
# gdrcoll beside Open MPI across emulated hosts (lib.sh): for each host
# count in HOSTS, one rank per host, every host's link shaped to RATE both
# ways, mpirun (through the namespace agent, Open MPI on --mca btl
# self,vader,tcp) runs gdr-bench COLL --check --compare mpi from MIN to MAX
# for every collective in COLLS; CSVs go to OUT_DIR, the load before and
# after each run to OUT_DIR/load.txt, and a markdown table per host count
# and collective to stdout.
#   BUILD (build) HOSTS ("2 4") RATE (1gbit) MIN (4) MAX (64m) ITERS (20)
#   COLLS ("allreduce allgather reducescatter bcast reduce alltoall alltoallv sendrecv")
#   OUT_DIR (/tmp/gdr-cluster-bench)
#   MPI_ENV ("")  VAR=VALUE words passed to every rank (mpirun -x), e.g. "GDR_ALGO=alltoall=pairwise"
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD="$(realpath "${BUILD:-build}")"
HOSTS="${HOSTS:-2 4}" RATE="${RATE:-1gbit}" MIN="${MIN:-4}" MAX="${MAX:-64m}" ITERS="${ITERS:-20}"
COLLS="${COLLS:-allreduce allgather reducescatter bcast reduce alltoall alltoallv sendrecv}"
OUT_DIR="${OUT_DIR:-/tmp/gdr-cluster-bench}"
envs=()
for kv in ${MPI_ENV:-}; do envs+=(-x "$kv"); done
mkdir -p "$OUT_DIR"
source scripts/cluster/lib.sh
cluster_skip_unless_able
: >"$OUT_DIR/load.txt"
for n in $HOSTS; do
  cluster_up "$n"
  for i in $(seq 1 "$n"); do cluster_rate "$i" "$RATE"; done
  for coll in $COLLS; do
    echo "hosts $n $coll before: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT_DIR/load.txt"
    CLUSTER_TIMEOUT=1800 cluster_mpirun -np "$n" --map-by node --mca btl self,vader,tcp ${envs[@]+"${envs[@]}"} \
      "$BUILD/bin/gdr-bench" "$coll" --check --compare mpi --min "$MIN" --max "$MAX" --iters "$ITERS" --warmup 2 \
      --csv "$OUT_DIR/$coll-h$n.csv" >"$OUT_DIR/$coll-h$n.txt" 2>&1 || { cat "$OUT_DIR/$coll-h$n.txt"; exit 1; }
    echo "hosts $n $coll after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT_DIR/load.txt"
  done
  cluster_down
done
python3 - "$OUT_DIR" "$HOSTS" "$COLLS" <<'PY'
import csv, sys
out, hosts, colls = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
def human(b):
    for u, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k: return f"{b // k} {u}"
    return f"{b} B"
for n in hosts:
    for c in colls:
        print(f"\n### {c}, {n} hosts x 1 rank\n")
        print("| size | gdrcoll µs | Open MPI µs | gdrcoll busbw GB/s | Open MPI busbw GB/s | ratio | check |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        with open(f"{out}/{c}-h{n}.csv") as f:
            for r in csv.DictReader(f):
                print(f"| {human(int(r['size']))} | {float(r['avg_us']):.1f} | {float(r['mpi_avg_us']):.1f} | "
                      f"{float(r['busbw']):.4f} | {float(r['mpi_busbw']):.4f} | {float(r['ratio']):.2f}x | {r['check']} |")
PY
