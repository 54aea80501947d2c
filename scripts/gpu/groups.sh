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
GPU_ARCHIVE=1
source "$(dirname "$0")/common.sh"
gpu_build gdr_nccl gdr-nccl-gpu-test gdr-nccl-gpu-test-ours gdr-gpu-staged-check \
  gdr-gpu-mixed-group-test gdr-gpu-multidev-test gdr-gpu-test gdr-gpu-fault-staged
nvidia-smi -L 2>&1 | head -2 | tee -a "$O/summary.txt"

for t in nccl_gpu_ours_np1 nccl_gpu_ourheader_np1 nccl_gpu_ours_np2 nccl_gpu_ourheader_np2; do run_ctest $t 20; done
run_ctest gpu_staged_check 30
run_ctest gpu_mixed_group 30
run_ctest gpu_one_process_all_gpus 60
run_ctest gpu_np1 130
run_ctest gpu_fault_staged 60
part_finish
