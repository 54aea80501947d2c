#!/usr/bin/env bash
# Cluster test: a link cut in the middle of an all-reduce loop. 3 emulated
# hosts x 2 ranks, started inside their namespaces with a torchrun-style
# environment (GDR_COMM_ID at host 1, RANK, WORLD_SIZE, LOCAL_RANK; key from
# GDR_AUTH_KEY_FILE); once every rank has finished an all-reduce, host 3's
# link goes down (ip link set down). Every rank must report an error naming
# a peer within 2 x GDR_TIMEOUT_MS of the cut, and every process must end.
#   test-linkcut.sh BUILD
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD="$(realpath "${1:-build}")"
TIMEOUT_MS="${TIMEOUT_MS:-4000}"
source scripts/cluster/lib.sh
cluster_skip_unless_able
cluster_up 3
nowMs() { date +%s%3N; }
key="$CLUSTER_DIR/key"
head -c 32 /dev/urandom >"$key"
chmod 600 "$key"
port=$(( 20000 + RANDOM % 20000 ))
pids=()
for h in 1 2 3; do
  for l in 0 1; do
    r=$(( (h - 1) * 2 + l ))
    cluster_exec "$h" env GDR_COMM_ID="${CLUSTER_ADDRS[0]}:$port" RANK="$r" WORLD_SIZE=6 LOCAL_RANK="$l" \
      GDR_AUTH_KEY_FILE="$key" GDR_TIMEOUT_MS="$TIMEOUT_MS" GDR_DEBUG=WARN \
      "$BUILD/bin/gdr-allreduce-loop" "$CLUSTER_DIR" 60 >"$CLUSTER_DIR/rank$r.log" 2>&1 &
    pids+=($!)
  done
done
deadline=$(( $(nowMs) + 30000 ))
until [ "$(ls "$CLUSTER_DIR"/ready.* 2>/dev/null | wc -l)" -eq 6 ]; do
  [ "$(nowMs)" -lt "$deadline" ] || { cat "$CLUSTER_DIR"/rank*.log; fail "not every rank finished a first all-reduce"; }
  sleep 0.1
done
sleep 0.5
cut=$(nowMs)
cluster_cut 3
echo "cut host 3's link at $cut (GDR_TIMEOUT_MS=$TIMEOUT_MS)"
deadline=$(( cut + 3 * TIMEOUT_MS ))
until [ "$(ls "$CLUSTER_DIR"/result.* 2>/dev/null | wc -l)" -eq 6 ]; do
  [ "$(nowMs)" -lt "$deadline" ] || break
  sleep 0.1
done
bad=0
for r in 0 1 2 3 4 5; do
  f="$CLUSTER_DIR/result.$r"
  if [ ! -s "$f" ]; then echo "rank $r: no error reported within $(( 3 * TIMEOUT_MS )) ms"; bad=1; continue; fi
  at="$(cut -d' ' -f1 "$f")"
  text="$(cut -d' ' -f2- "$f")"
  took=$(( at - cut ))
  echo "rank $r: +$took ms: $text"
  [ "$took" -le $(( 2 * TIMEOUT_MS )) ] || { echo "  later than 2 x GDR_TIMEOUT_MS"; bad=1; }
  echo "$text" | grep -Eq "rank [0-5]" || { echo "  names no peer"; bad=1; }
done
# Every process ends on its own (exit 3: it reported the failure).
deadline=$(( $(nowMs) + 10000 ))
for i in "${!pids[@]}"; do
  while kill -0 "${pids[$i]}" 2>/dev/null && [ "$(nowMs)" -lt "$deadline" ]; do sleep 0.1; done
  if kill -0 "${pids[$i]}" 2>/dev/null; then echo "rank $i still running"; bad=1; continue; fi
  rc=0; wait "${pids[$i]}" || rc=$?
  [ "$rc" -eq 3 ] || { echo "rank $i exited $rc, not 3"; cat "$CLUSTER_DIR/rank$i.log"; bad=1; }
done
[ "$bad" -eq 0 ] || fail "link cut not handled on every rank"
echo "PASS: every rank reported the cut within 2 x GDR_TIMEOUT_MS, naming a peer"
