#!/usr/bin/env bash
# Small sizes with more iterations: 4 B - 512 KiB, --iters 2000, RUNS runs, np 2 4 8, main aac89ef build.
set -euo pipefail
cd /work/main
OUT=/tmp/host-quiet2-small
for run in 1 2 3; do
  for np in 2 4 8; do
    mkdir -p $OUT/np$np
    for coll in allreduce allgather reducescatter bcast reduce alltoall alltoallv; do
      echo "$(date -u +%FT%TZ) np $np $coll run $run before: $(uptime)" >> $OUT/load.txt
      mpirun --allow-run-as-root --oversubscribe -np $np build/bin/gdr-bench $coll --min 4 --max 512k \
        --iters 2000 --compare mpi --csv $OUT/np$np/$coll.run$run.csv > /dev/null
      echo "$(date -u +%FT%TZ) np $np $coll run $run after:  $(uptime)" >> $OUT/load.txt
    done
  done
done
