#!/usr/bin/env bash
# Counts the sched_yield calls and context switches of gdr-bench's host
# collectives where ranks outnumber the cores, beside the yields the
# simulator's turns model makes for the same call (gdr-sim's JSON field
# yields_per_rank_call): a check of the model's mechanism, not only of its
# times. One 64 B call per collective, np 4 and 8; RUNS launches each.
# Needs root (perf stat -a and the syscall tracepoint; tracefs is mounted
# if missing).
#
#   scripts/sim/measure-yields.sh [build dir] [out dir]
#   RUNS=3 NPS="4 8" ITERS=5000 REPS=5 scripts/sim/measure-yields.sh build bench/results/sim/yields
#
# Writes OUT/yields.csv: run,coll,ranks,avg_us,yields,switches,calls,
# yields_per_rank_call,switches_per_rank_call,model_us,model_yields_per_rank_call.
# (perf's tracepoint makes each call slower than gdr-bench alone reads.)
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-bench/results/sim/yields}
RUNS=${RUNS:-3}
NPS=${NPS:-"4 8"}
COLLS=${COLLS:-"reducescatter allgather allreduce alltoall bcast reduce"}
ITERS=${ITERS:-5000}
REPS=${REPS:-5}
WARMUP=${WARMUP:-100}
command -v perf > /dev/null || { echo "measure-yields: perf is not installed (Debian: linux-perf)" >&2; exit 1; }
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing
mkdir -p "$OUT"
CALLS=$((ITERS * REPS + WARMUP))
echo "run,coll,ranks,avg_us,yields,switches,calls,yields_per_rank_call,switches_per_rank_call,model_us,model_yields_per_rank_call" \
  > "$OUT/yields.csv"
echo "$(date -u +%FT%TZ) before: $(uptime)" >> "$OUT/load.txt"
for run in $(seq 1 "$RUNS"); do
  for c in $COLLS; do
    for np in $NPS; do
      out=$(perf stat -a -x, -e syscalls:sys_enter_sched_yield,context-switches \
        mpirun --allow-run-as-root --oversubscribe -np "$np" "$BUILD/bin/gdr-bench" "$c" --min 64 --max 64 \
        --iters "$ITERS" --reps "$REPS" --warmup "$WARMUP" 2>&1)
      t=$(echo "$out" | awk '$1 == "64" {print $3}')
      y=$(echo "$out" | grep sched_yield | cut -d, -f1)
      cs=$(echo "$out" | grep context-switches | cut -d, -f1)
      model=$("$BUILD/bin/gdr-sim" "$c" --ranks "$np" --min 64 --max 64 --format json |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["rows"][0]; print("%.3f,%.3f" % (r["avg_us"], r["yields_per_rank_call"]))')
      python3 -c "print('$run,$c,$np,$t,$y,$cs,$CALLS,%.3f,%.3f,$model' % ($y / $CALLS / $np, $cs / $CALLS / $np))" >> "$OUT/yields.csv"
    done
  done
done
echo "$(date -u +%FT%TZ) after: $(uptime)" >> "$OUT/load.txt"
cat "$OUT/yields.csv"
