#!/usr/bin/env bash
# Runs pmpi_prog without and with libgdrcoll_mpi.so preloaded (host buffers
# routed with GDR_PMPI_HOST=1), and with the layer loaded but off
# (GDR_PMPI=0): the digests must agree, every intercepted collective must
# have gone through gdrcoll in the routed run and none in the others.
#   run_pmpi_test.sh <mpiexec> <np> <pmpi_prog> <libgdrcoll_mpi.so>
set -euo pipefail
mpiexec=$1 np=$2 prog=$3 lib=$4
seed=$(( (RANDOM << 30) ^ (RANDOM << 15) ^ RANDOM ))
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
launch() { "$mpiexec" --oversubscribe --allow-run-as-root -np "$np" "$@"; }
echo "seed $seed, $np ranks"

launch "$prog" "$seed" >"$out/plain" 2>"$out/plain.err" || { cat "$out/plain" "$out/plain.err"; echo "FAIL: plain run"; exit 1; }
launch -x LD_PRELOAD="$lib" -x GDR_PMPI_HOST=1 -x GDR_DEBUG=INFO -x GDR_DEBUG_SUBSYS=INIT,COLL \
  "$prog" "$seed" >"$out/routed" 2>"$out/routed.err" || { cat "$out/routed" "$out/routed.err"; echo "FAIL: routed run"; exit 1; }
launch -x LD_PRELOAD="$lib" -x GDR_PMPI=0 -x GDR_PMPI_HOST=1 -x GDR_DEBUG=INFO \
  "$prog" "$seed" >"$out/off" 2>"$out/off.err" || { cat "$out/off" "$out/off.err"; echo "FAIL: GDR_PMPI=0 run"; exit 1; }

fail=0
for run in routed off; do
  if ! diff <(grep -E '^(digest|errors)' "$out/plain") <(grep -E '^(digest|errors)' "$out/$run"); then
    echo "FAIL: $run results differ from plain MPI"; fail=1
  fi
done
grep -E '^errors 0$' "$out/plain" >/dev/null || { echo "FAIL: the program's own checks failed"; fail=1; }

# One summary line per rank, each showing every intercepted collective routed.
summaries=$(grep -c 'PMPI summary: routed to gdrcoll' "$out/routed.err" || true)
if [ "$summaries" -ne "$np" ]; then echo "FAIL: $summaries PMPI summaries for $np ranks"; fail=1; fi
for coll in allreduce reduce bcast allgather reduce_scatter_block alltoall barrier; do
  if grep 'PMPI summary' "$out/routed.err" | grep -qE " $coll=0( |\))"; then
    echo "FAIL: MPI_$coll never reached gdrcoll"; fail=1
  fi
done
# Calls gdrcoll cannot take (MPI_SHORT, MPI_MAXLOC) still went to MPI.
if grep 'PMPI summary' "$out/routed.err" | grep -qE 'passed to MPI 0$'; then
  echo "FAIL: nothing was passed to MPI"; fail=1
fi
if grep -q 'routed to gdrcoll' "$out/off.err"; then echo "FAIL: GDR_PMPI=0 still routed calls"; fail=1; fi
grep 'PMPI summary' "$out/routed.err" | head -1
[ "$fail" -eq 0 ] && echo PASS
exit "$fail"
