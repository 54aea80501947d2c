#!/bin/bash
# usage: runs.sh N OUT [lib dir]
N=$1; OUT=$2
for run in $(seq 1 $N); do for np in 2 3 4 8; do for c in bcast reduce; do echo "== run $run np $np $c"; mpirun --allow-run-as-root --oversubscribe -np $np ${LIBDIR:+-x LD_LIBRARY_PATH=$LIBDIR} build/bin/gdr-bench $c --min 8 --max 64k --compare mpi --iters 300 2>&1 | grep -v "^#" ; done; done; done > $OUT 2>&1
