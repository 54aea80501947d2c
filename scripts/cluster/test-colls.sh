#!/usr/bin/env bash
# Cluster test: 3 emulated hosts x 2 ranks launched by mpirun through the
# namespace rsh agent. Ranks are placed round robin (--map-by node), so the
# topology module must reorder the ring host by host (0 3 1 4 2 5) and say so
# in the log; every collective x type x op at a few sizes is checked
# (gdr-env-colls, PMIx bootstrap, no MPI call), shm must carry traffic inside
# a host and socket across; then gdr-bench all-reduce with the MPI bootstrap,
# checked and compared with Open MPI. ENCRYPT=1 runs it all under GDR_ENCRYPT=1.
#   test-colls.sh BUILD [ENCRYPT]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD="$(realpath "${1:-build}")"
ENCRYPT="${2:-0}"
source scripts/cluster/lib.sh
cluster_skip_unless_able
cluster_up 3
log="$CLUSTER_DIR/colls.log"

CLUSTER_TIMEOUT=150 cluster_mpirun -np 6 --map-by node -x GDR_ENCRYPT="$ENCRYPT" -x GDR_DEBUG=INFO \
  -x GDR_DEBUG_SUBSYS=TOPO,BOOT,INIT -x GDR_TIMEOUT_MS=60000 \
  "$BUILD/bin/gdr-env-colls" --counts "${COUNTS:-0,1,37,1001,65539}" >"$log" 2>&1 || { tail -40 "$log"; fail "gdr-env-colls"; }
grep "gdr-env-colls:" "$log"
grep -q "gdr-env-colls: 6 ranks, .* 0 failed checks" "$log" || fail "collective checks failed"
grep -q "bootstrap pmix" "$log" || fail "the PMIx bootstrap was not chosen"
order="$(grep -m1 -o "ring/tree order (hosts together, closest GPUs adjacent): [0-9 ]*" "$log" | sed 's/.*: //')"
echo "ring order: $order"
[ "$(echo $order)" = "0 3 1 4 2 5" ] || fail "ring order is '$order', not host by host (0 3 1 4 2 5)"
# Rank 0 (host 1) reaches rank 3 (host 1) by shm, the others by socket.
grep -q "r0:.*rank 0 -> rank 3: shm" "$log" || fail "rank 0 -> rank 3 (same host) is not shm"
for peer in 1 2 4 5; do
  grep -q "r0:.*rank 0 -> rank $peer: socket.*(other host)" "$log" || fail "rank 0 -> rank $peer (other host) is not socket"
done
hosts="$(grep -o "^gc[0-9]*h[0-9]" "$log" | sort -u | wc -l)"
[ "$hosts" -eq 3 ] || fail "log lines come from $hosts hostnames, not 3"

# The MPI bootstrap across the same hosts, Open MPI's TCP BTL beside it.
CLUSTER_TIMEOUT=90 cluster_mpirun -np 6 --map-by node -x GDR_ENCRYPT="$ENCRYPT" --mca btl self,vader,tcp \
  "$BUILD/bin/gdr-bench" allreduce --check --compare mpi --max 1m --iters 5 --warmup 1 >"$log.bench" 2>&1 ||
  { cat "$log.bench"; fail "gdr-bench under mpirun"; }
grep -q "launcher mpi" "$log.bench" || fail "gdr-bench did not take the MPI launcher under mpirun"
if grep -q FAIL "$log.bench"; then cat "$log.bench"; fail "gdr-bench --check"; fi
tail -3 "$log.bench"
echo "PASS: 3 hosts x 2 ranks, GDR_ENCRYPT=$ENCRYPT"
