#!/usr/bin/env bash
# The lead's quiet measurements at the end of session 8 (no helper running): issue 21's command
# (two runs each, np 2 3 4 8, bcast and reduce) and host-ab against main aac89ef (/tmp/v-base).
set -u
cd /work/main
R=bench/results/raw/s8/small-rooted; mkdir -p $R
echo "start $(date -u +%FT%TZ) $(uptime)" > $R/load.txt
for run in 1 2; do for np in 2 3 4 8; do for c in bcast reduce; do
  OS=(); [ $np -gt 2 ] && OS=(--oversubscribe)
  mpirun --allow-run-as-root "${OS[@]}" -np $np build/bin/gdr-bench $c --min 8 --max 64k --compare mpi --iters 300 \
    > $R/issue-$c-np$np-run$run.txt 2>&1
done; done; done
echo "issue runs done $(date -u +%FT%TZ) $(uptime)" >> $R/load.txt
A=/tmp/v-base MIN=8 MAX=256 ITERS=20000 RUNS=5 COLLS="bcast reduce allreduce" scripts/host-ab.sh > $R/host-ab-small.txt 2>&1
echo "host-ab small done $(date -u +%FT%TZ) $(uptime)" >> $R/load.txt
A=/tmp/v-base MIN=512 MAX=4m ITERS=1000 RUNS=3 COLLS="bcast reduce allreduce" scripts/host-ab.sh > $R/host-ab-large.txt 2>&1
echo "host-ab large done $(date -u +%FT%TZ) $(uptime)" >> $R/load.txt
# Steady state: one collective in a loop of 200000 calls, 8 B, gdrcoll and Open MPI alone, 5 runs interleaved
# (bench/results/raw/small-rooted/loop.c.txt, linked against build/lib), mean over ranks of each rank's us/call.
for run in 1 2 3 4 5; do for np in 2 4; do OS=(); [ $np -gt 2 ] && OS=(--oversubscribe); for c in bcast reduce; do
  for lib in gdr mpi; do
    r=$(mpirun --allow-run-as-root "${OS[@]}" -np $np /tmp/l21/loop $c $lib 8 200000 2>/dev/null | awk '{s+=$3} END {printf "%.3f", s/NR}')
    echo "np$np $c $lib run$run $r" >> $R/loop-steady.txt
  done
done; done; done
echo "loop done $(date -u +%FT%TZ) $(uptime)" >> $R/load.txt
