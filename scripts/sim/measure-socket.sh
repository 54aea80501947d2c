#!/usr/bin/env bash
# Re-measures the emulated-cluster (socket) validation set from 1 MiB with
# enough timed calls per size: bench/results/sim/socket was taken with
# --iters 20, which gdr-bench turns into 2 timed calls above 1 MiB, so a
# call that a socket's buffers absorb (8 MiB per direction) reads as half a
# call there. One rank per emulated host (scripts/cluster/lib.sh), every
# link shaped by tbf to RATE both ways, gdrcoll only (no peer: the set
# validates the model). Each of RUNS runs writes gdr-bench's CSV to
# OUT/np<N>/<coll>.run<i>.csv and `uptime` before and after it to
# OUT/load.txt. Meant for a quiet (frozen) machine; needs root.
#
#   scripts/sim/measure-socket.sh BIN_DIR OUT_DIR [LIB_SH]
#   RUNS=1 HOSTS="2 4" ITERS=100 MAX=16m scripts/sim/measure-socket.sh build/bin /tmp/x
#
# --iters 100 is 10 timed calls per size above 1 MiB (a tenth), 100 at 1 MiB;
# --warmup 10 is 2 untimed calls above 1 MiB. BIN_DIR may hold a copy of
# libgdrcoll.so.0 (it goes first on LD_LIBRARY_PATH).
set -euo pipefail
BIN=$(realpath "${1:?bin dir holding gdr-bench}")
OUT=${2:?out dir}
LIB=${3:-$(dirname "$0")/../cluster/lib.sh}
RUNS=${RUNS:-1} HOSTS=${HOSTS:-"2 4"} RATE=${RATE:-1gbit} ITERS=${ITERS:-100} MIN=${MIN:-1m} MAX=${MAX:-16m}
COLLS=${COLLS:-"allreduce allgather reducescatter bcast reduce alltoall alltoallv"}
# Every step ends by the deadline (BUDGET_S from the start), the namespaces
# removed after: a caller's own time limit never has to kill it midway.
END=$(( $(date +%s) + ${BUDGET_S:-225} ))
mkdir -p "$OUT"
# shellcheck source=../cluster/lib.sh
source "$LIB"
cluster_skip_unless_able
export LD_LIBRARY_PATH="$BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Runs outermost, so that a run cut short by a time limit loses its last run only.
for run in $(seq 1 "$RUNS"); do
  for n in $HOSTS; do
    cluster_up "$n" > /dev/null
    for i in $(seq 1 "$n"); do cluster_rate "$i" "$RATE"; done
    mkdir -p "$OUT/np$n"
    for coll in $COLLS; do
      left=$(( END - $(date +%s) ))
      [ "$left" -ge 5 ] || { echo "$(date -u +%FT%TZ) deadline: stopped before hosts $n $coll run $run" >> "$OUT/load.txt"; break 3; }
      echo "$(date -u +%FT%TZ) hosts $n $coll run $run before: $(uptime)" >> "$OUT/load.txt"
      CLUSTER_TIMEOUT=$(( left < 60 ? left : 60 )) cluster_mpirun -np "$n" --map-by node -x LD_LIBRARY_PATH --mca btl self,vader,tcp \
        "$BIN/gdr-bench" "$coll" --min "$MIN" --max "$MAX" --iters "$ITERS" --warmup 10 \
        --csv "$OUT/np$n/$coll.run$run.csv" > /dev/null ||
        { rc=$?; echo "$(date -u +%FT%TZ) hosts $n $coll run $run: exit $rc" >> "$OUT/load.txt"; }
      echo "$(date -u +%FT%TZ) hosts $n $coll run $run after:  $(uptime)" >> "$OUT/load.txt"
    done
    cluster_down
  done
done
cluster_down
echo "$(date -u +%FT%TZ) done" >> "$OUT/load.txt"
