#!/usr/bin/env bash
# Device work on the status board and gdrCommRevoke racing the staged path,
# in one call on the GPU machine (under 6 minutes): builds
# gdr-gpu-device-board (tests/gpu/gpu_device_board.cc), gdr-gpu-staged-check
# and gdr-gpu-test (Release, no verbs, sm_90), then runs the board and revoke
# cases (forked ranks sharing GPU 0, np 1 and 2), the staged path's own
# checks (np 2), a smoke run of gdr-bench's device all-reduce 8 B-64 KiB at
# np 2 with GDR_STATUS=1 and 0 (not a cost measurement: the two ranks
# time-slice one GPU) and the quick collective test at np 2 (the fused
# kernels now count their completions and long waits for the board).
# Results: $OUT/summary.txt and every log in $OUT/device-board.tgz (without
# $OUT both stay in build-gpu-run/out-device-board).
# Usage (repo root): scripts/gpu/device-board.sh
GPU_PART=device-board
GPU_ARCHIVE=1  # logs gather in the build tree; $OUT gets the summary and one archive
source "$(dirname "$0")/common.sh"
gpu_build gdr-gpu-device-board gdr-gpu-staged-check gdr-gpu-test gdr-bench
nvidia-smi -L 2>&1 | head -2 | tee -a "$O/summary.txt"

t0=$(date +%s)
timeout -s KILL 150 "$B/bin/gdr-gpu-device-board" >"$O/device-board.log" 2>&1
r=$?
note "device board + revoke rc=$r in $(( $(date +%s) - t0 )) s"
grep -E '^case |^skipped|^device board' "$O/device-board.log" | tee -a "$O/summary.txt"
grep -E 'check failed' "$O/device-board.log" | head -20 | cut -c1-400 | tee -a "$O/summary.txt"
grep -E '^\[rank [01]\] (revoked|failed)' "$O/device-board.log" | head -20 | cut -c1-300 | tee -a "$O/summary.txt"
[ $r -ne 0 ] && status=$r

run_staged_check

# The device all-reduce once per GDR_STATUS value, as a smoke check only:
# two processes time-slice the one GPU (no MPS), so each fused call waits
# about a time slice for the peer's kernel (ms) and the times say nothing
# of the board's cost (that needs two GPUs).
t0=$(date +%s)
for st in 1 0; do
  GDR_STATUS=$st timeout -s KILL 40 $MPI 2 -x GDR_STATUS "$B/bin/gdr-bench" allreduce --mem cuda --min 8 \
    --max 64k --iters 20 --warmup 2 >"$O/bench-status$st.txt" 2>&1
  note "bench allreduce cuda np=2 (one GPU, time-sliced) GDR_STATUS=$st rc=$?"
  grep -E '^ *[0-9]' "$O/bench-status$st.txt" | head -14 | cut -c1-160 >>"$O/summary.txt"
done
note "bench smoke in $(( $(date +%s) - t0 )) s"

# The quick collective test last, in what is left of 330 s (the call's
# limit is 6 minutes), only if that is enough: on one GPU it takes about
# 145 s (bench/results/compat.md), a warm build leaves room, a cold one not.
left=$(seconds_left)
if [ $left -gt 170 ]; then
  t0=$(date +%s)
  GDR_TIMEOUT_MS=60000 timeout -s KILL $left $MPI 2 "$B/bin/gdr-gpu-test" --quick >"$O/gpu-test-np2.log" 2>&1
  r=$?
  note "gdr-gpu-test --quick np=2 rc=$r in $(( $(date +%s) - t0 )) s (limit $left s)"
  grep -iE 'fail|error|passed|mismatch' "$O/gpu-test-np2.log" | head -15 | cut -c1-300 | tee -a "$O/summary.txt"
  tail -3 "$O/gpu-test-np2.log" | tee -a "$O/summary.txt"
  [ $r -ne 0 ] && status=$r
else
  note "gdr-gpu-test --quick np=2 skipped: $left s left (it needs about 150 s here)"
fi

part_finish
