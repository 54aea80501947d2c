#!/usr/bin/env bash
# A/B of shm variants on the small rooted path: loop (200k calls, steady state) and gdr-bench
# (the command, 8-256 B). VARIANTS="base batch ..." (libs in /tmp/v-<name>); REPS
set -u
cd /tmp/l21
REPS=${REPS:-3}
VARIANTS=${VARIANTS:-"base batch demote-s demote-sr"}
B=/work/main/build/bin/gdr-bench
for rep in $(seq 1 $REPS); do
  for np in ${NPS:-2 4}; do
    OS=(); [ $np -gt 2 ] && OS=(--oversubscribe)
    for c in bcast reduce; do
      for v in mpi $VARIANTS; do
        if [ $v = mpi ]; then L=/tmp/v-base; lib=mpi; else L=/tmp/v-$v; lib=gdr; fi
        r=$(LD_LIBRARY_PATH=$L mpirun --allow-run-as-root "${OS[@]}" -x LD_LIBRARY_PATH -np $np ./loop $c $lib 8 200000 2>/dev/null | awk '{s+=$3} END {printf "%.3f", s/NR}')
        echo "loop np$np $c $v rep$rep $r"
      done
      for v in $VARIANTS; do
        r=$(LD_LIBRARY_PATH=/tmp/v-$v mpirun --allow-run-as-root "${OS[@]}" -x LD_LIBRARY_PATH -np $np $B $c --min 8 --max 256 --iters 300 --compare mpi 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {printf "%s:%s/%s=%s ", $1, $3, $9, $11}')
        echo "bench np$np $c $v rep$rep $r"
      done
    done
  done
done
