#!/usr/bin/env bash
# Re-measures chosen host-memory series from 1 MiB with more iterations than
# measure-host.sh (whose 10 calls per size above 1 MiB leave runs 25-50%
# apart on the shared 2-core machine). PAIRS names the series as np:coll;
# each of RUNS runs writes gdr-bench's CSV to OUT/np<N>/<coll>.run<i>.csv
# and appends `uptime` before and after it to OUT/load.txt. Meant for a
# quiet (frozen) machine; every mpirun is bounded by STEP_S seconds.
#
#   scripts/sim/measure-host-large.sh BIN_DIR OUT_DIR
#   RUNS=3 ITERS=200 PAIRS="2:alltoall 4:reducescatter" scripts/sim/measure-host-large.sh build/bin /tmp/x
#
# --iters 200 is 20 timed calls per size from 1 MiB (gdr-bench times a
# tenth of --iters above 1 MiB); --warmup 10 is 2 untimed calls there.
set -euo pipefail
BIN=${1:?bin dir holding gdr-bench}
OUT=${2:?out dir}
RUNS=${RUNS:-3}
ITERS=${ITERS:-200}
STEP_S=${STEP_S:-60}
PAIRS=${PAIRS:-"2:alltoall 2:alltoallv 4:reducescatter 4:allgather 4:reduce 8:reducescatter 8:reduce"}
mkdir -p "$OUT"
ROOT_OK=()
[ "$(id -u)" = 0 ] && ROOT_OK=(--allow-run-as-root)
for run in $(seq 1 "$RUNS"); do
  for pair in $PAIRS; do
    np=${pair%%:*} coll=${pair#*:}
    mkdir -p "$OUT/np$np"
    echo "$(date -u +%FT%TZ) np $np $coll run $run before: $(uptime)" >> "$OUT/load.txt"
    timeout "$STEP_S" mpirun "${ROOT_OK[@]}" --oversubscribe -np "$np" "$BIN/gdr-bench" "$coll" --min 1m --max 64m \
      --iters "$ITERS" --warmup 10 --compare mpi --csv "$OUT/np$np/$coll.run$run.csv" > /dev/null ||
      echo "$(date -u +%FT%TZ) np $np $coll run $run: exit $?" >> "$OUT/load.txt"
    echo "$(date -u +%FT%TZ) np $np $coll run $run after:  $(uptime)" >> "$OUT/load.txt"
  done
done
echo "$(date -u +%FT%TZ) done" >> "$OUT/load.txt"
