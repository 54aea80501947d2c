#!/usr/bin/env bash
# GDR_FAULT on the staged device path, in one call on the GPU machine (well
# under 8 minutes): builds gdr-gpu-fault-staged (tests/gpu/gpu_fault_staged.cc;
# Release, no verbs) and runs its matrix, every collective x the first, a
# middle and the last message step x kill, close, corrupt, plus a stalled
# middle all-reduce step: three forked ranks that count as three hosts
# (GDR_HOST_ID) on device buffers, so the staged path runs, sharing the GPUs.
# Every survivor must fail within 2 x GDR_TIMEOUT_MS naming rank 1 and the
# step. Three collectives run at once (each case is three processes).
# Results: $OUT/summary.txt and every log in $OUT/fault-staged.tgz (two
# files; without $OUT both stay in build-gpu-run/out-fault-staged).
# Usage (repo root): scripts/gpu/fault-staged.sh
GPU_PART=fault-staged
GPU_ARCHIVE=1  # logs gather in the build tree; $OUT gets the summary and one archive
source "$(dirname "$0")/common.sh"
gpu_build gdr-gpu-fault-staged
nvidia-smi -L 2>&1 | head -4 | tee -a "$O/summary.txt"

COLLS="allreduce bcast reduce allgather reducescatter alltoall barrier"
run_coll() {  # coll: its cases, log and exit status in $O
  local c=$1 t0 r
  t0=$(date +%s)
  timeout -s KILL 300 "$B/bin/gdr-gpu-fault-staged" --coll "$c" >"$O/fault-$c.log" 2>&1
  r=$?
  echo "$r $(( $(date +%s) - t0 ))" >"$O/rc-$c"
}
running=0
for c in $COLLS; do
  run_coll "$c" &
  running=$((running + 1))
  if [ $running -ge 3 ]; then wait -n; running=$((running - 1)); fi
done
wait

cases=0
bad=0
for c in $COLLS; do
  read -r r secs <"$O/rc-$c"
  n=$(grep -c '^case ' "$O/fault-$c.log")
  f=$(grep -c '^case .*FAILED' "$O/fault-$c.log")
  cases=$((cases + n))
  bad=$((bad + f))
  note "$c: rc=$r, $n cases, $f failed, $secs s"
  grep -E '^case .*FAILED|^skipped|check failed' "$O/fault-$c.log" | head -20 | tee -a "$O/summary.txt"
  [ "$r" -ne 0 ] && status=$r
done
# Survivors' errors, one per case and rank: how long, and what they name.
grep -h '^\[rank [02]\]' "$O"/fault-*.log | awk '{for (i = 1; i <= NF; i++) if ($i == "after") {print $(i+1); break}}' |
  sort -n | awk '{a[NR] = $1} END {if (NR) printf "survivor errors: %d, median %s ms, max %s ms\n", NR, a[int((NR + 1) / 2)], a[NR]}' |
  tee -a "$O/summary.txt"
note "fault matrix on the staged path: $cases cases, $bad failed"
part_finish
