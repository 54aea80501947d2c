#!/usr/bin/env bash
# Measures the simulator's host-memory validation set: every collective,
# 4 B - 64 MiB, over shm at np 2, 4 and 8 on this machine (and np 1
# all-reduce, the calibration's call cost and memcpy), RUNS times each
# (the machine is shared and noisy: the error table uses the median per
# size). Each run writes gdr-bench's CSV to OUT/np<N>/<coll>.run<i>.csv and
# appends `uptime` before and after it to OUT/load.txt.
#
#   scripts/sim/measure-host.sh [build dir] [out dir]
#   RUNS=3 NPS="2 4 8" COLLS="allreduce ..." ITERS=100 scripts/sim/measure-host.sh
#   MIN=4 MAX=512k ITERS=2000 scripts/sim/measure-host.sh ...   (the small-size set)
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-bench/results/sim/host}
RUNS=${RUNS:-3}
NPS=${NPS:-"2 4 8"}
COLLS=${COLLS:-"allreduce allgather reducescatter bcast reduce alltoall alltoallv"}
ITERS=${ITERS:-100}
MIN=${MIN:-4}
MAX=${MAX:-64m}
mkdir -p "$OUT"
ROOT_OK=()
[ "$(id -u)" = 0 ] && ROOT_OK=(--allow-run-as-root)
for run in $(seq 1 "$RUNS"); do
  mkdir -p "$OUT/np1"
  echo "$(date -u +%FT%TZ) np 1 allreduce run $run before: $(uptime)" >> "$OUT/load.txt"
  mpirun "${ROOT_OK[@]}" -np 1 "$BUILD/bin/gdr-bench" allreduce --min "$MIN" --max "$MAX" --iters 1000 \
    --csv "$OUT/np1/allreduce.run$run.csv" > /dev/null
  for np in $NPS; do
    mkdir -p "$OUT/np$np"
    for coll in $COLLS; do
      csv="$OUT/np$np/$coll.run$run.csv"
      echo "$(date -u +%FT%TZ) np $np $coll run $run before: $(uptime)" >> "$OUT/load.txt"
      mpirun "${ROOT_OK[@]}" --oversubscribe -np "$np" "$BUILD/bin/gdr-bench" "$coll" --min "$MIN" --max "$MAX" \
        --iters "$ITERS" --compare mpi --csv "$csv" > /dev/null
      echo "$(date -u +%FT%TZ) np $np $coll run $run after:  $(uptime)" >> "$OUT/load.txt"
    done
  done
done
