#!/usr/bin/env bash
# The one group engine on device buffers, in one call on the GPU machine
# (under 6 minutes): NCCL groups are dispatch groups (src/dispatch/group.h)
# and the staged path is split into files (src/paths/staged/). Builds
# (Release, no verbs, sm_90) the NCCL face, its device test (our header and
# the system one), the staged checks, the mixed-group test and the
# one-process test, then runs through ctest, each while time is left of
# 330 s: nccl_gpu_ours_np1/np2 and nccl_gpu_ourheader_np1/np2 (device
# groups through the NCCL API: a ring in a group on a fresh communicator,
# one process driving every GPU in one group, every type x op), the staged
# path's own checks, gpu_mixed_group (a staged all-reduce then a host one
# in one group), gpu_one_process_all_gpus, gpu_np1, gpu_fault_staged.
# Results: $OUT/summary.txt and $OUT/groups.tgz (the ctest logs).
# Usage (repo root): scripts/gpu/groups.sh
GPU_PART=groups
FINAL=${OUT:-}
unset OUT
source "$(dirname "$0")/common.sh"
rm -f "$O"/*.log "$O/summary.txt"
t_start=$(date +%s)
t0=$(date +%s)
cmake -S . -B "$B" -G Ninja -DGDR_ENABLE_IB=OFF -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  >"$O/build.log" 2>&1 &&
  ninja -C "$B" -j32 gdr_nccl gdr-nccl-gpu-test gdr-nccl-gpu-test-ours gdr-gpu-staged-check \
    gdr-gpu-mixed-group-test gdr-gpu-multidev-test gdr-gpu-test gdr-gpu-fault-staged >>"$O/build.log" 2>&1
rc=$?
note "build rc=$rc in $(( $(date +%s) - t0 )) s"
finish() {
  note "groups: status $status, $(( $(date +%s) - t_start )) s in all"
  if [ -n "$FINAL" ]; then
    mkdir -p "$FINAL"
    cp "$O/summary.txt" "$FINAL/summary.txt"
    tar czf "$FINAL/groups.tgz" -C "$O" .
  fi
  exit $status
}
if [ $rc -ne 0 ]; then
  tail -40 "$O/build.log" | tee -a "$O/summary.txt"
  status=$rc
  finish
fi
nvidia-smi -L 2>&1 | head -2 | tee -a "$O/summary.txt"

# One ctest test with what is left of 330 s (skipped under `need` s).
run_test() {  # name need
  local left=$(( 330 - ($(date +%s) - t_start) )) r t0
  if [ $left -lt "$2" ]; then note "SKIP $1 ($left s left)"; return; fi
  t0=$(date +%s)
  (cd "$B" && timeout -k 5 $left ctest -R "^$1\$" --output-on-failure) >"$O/$1.log" 2>&1
  r=$?
  if [ $r -eq 124 ] || [ $r -eq 137 ]; then
    note "CUT $1 at the time budget ($left s): no verdict"
  else
    if grep -q "Not Run\|No tests were found" "$O/$1.log"; then r=1; fi
    note "$([ $r -eq 0 ] && echo PASS || echo FAIL) $1 rc=$r in $(( $(date +%s) - t0 )) s"
    [ $r -ne 0 ] && { status=1; grep -iE "fail|error|mismatch" "$O/$1.log" | head -8 | cut -c1-300 | tee -a "$O/summary.txt"; }
  fi
  # What is known so far comes back even if the call is cut short.
  [ -n "$FINAL" ] && mkdir -p "$FINAL" && cp "$O/summary.txt" "$FINAL/summary.txt"
}
for t in nccl_gpu_ours_np1 nccl_gpu_ourheader_np1 nccl_gpu_ours_np2 nccl_gpu_ourheader_np2; do run_test $t 20; done
run_test gpu_staged_check 30
run_test gpu_mixed_group 30
run_test gpu_one_process_all_gpus 60
run_test gpu_np1 130
run_test gpu_fault_staged 60
finish
