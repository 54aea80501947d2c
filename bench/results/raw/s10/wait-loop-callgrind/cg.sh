#!/usr/bin/env bash
# cg.sh LIBDIR OUTDIR: callgrind on gdr-bench bcast and reduce, 8 B, np 2, 2000 iterations + 20
# warm-up, collection on only inside gdrBroadcast/gdrReduce; once as is (the one-message path) and
# once with GDR_ALGO=bcast=binomial,reduce=binomial (the general path: the executor, whose
# immediate sendNow/recvNow falls back to Communicator::progressUntil when a message is not there).
# One gdr-bench binary (BENCH) for both libraries: LD_LIBRARY_PATH wins over its RUNPATH.
# Then: python3 table.py BEFORE_OUT AFTER_OUT (cgsum.py sums self Ir and calls per function).
set -u
LIB=$1; O=$2; mkdir -p "$O"
for v in one general; do
  for c in bcast reduce; do
    fn=gdrBroadcast; [ $c = reduce ] && fn=gdrReduce
    algo=; [ $v = general ] && algo=bcast=binomial,reduce=binomial
    GDR_ALGO=$algo LD_LIBRARY_PATH=$LIB mpirun --allow-run-as-root --oversubscribe -np 2 -x LD_LIBRARY_PATH -x GDR_ALGO \
      valgrind --tool=callgrind --toggle-collect=$fn --callgrind-out-file=$O/$v-$c.%q{OMPI_COMM_WORLD_RANK} \
      ${BENCH:-build/bin/gdr-bench} $c --min 8 --max 8 --iters 2000 --warmup 20 --reps 1 > $O/$v-$c.txt 2>&1
  done
done
