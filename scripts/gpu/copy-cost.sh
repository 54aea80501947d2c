#!/usr/bin/env bash
# The price of one one-rank copy, every way (scripts/gpu/copy_cost.cu and
# static_rt_copy.cu), with the real NCCL and with ours preloaded:
#   bash scripts/gpu/copy-cost.sh      (GPU machine, repo root; logs in $OUT)
GPU_PART=copycost
. "$(dirname "$0")/common.sh"
gpu_build gdr_nccl
nvcc -O2 -arch=sm_90 -Xcompiler -fPIC -shared -cudart static -o "$B/libsrt.so" scripts/gpu/static_rt_copy.cu &&
  nvcc -O2 -arch=sm_90 -o "$B/copy_cost" scripts/gpu/copy_cost.cu -lnccl -lcuda || exit 1
OURS="$PWD/$B/lib/nccl-compat/libnccl.so.2"
note "== real NCCL"
"$B/copy_cost" ${CALLS:-500} "$PWD/$B/libsrt.so" | tee -a "$O/summary.txt"
note "== ours preloaded (the nccl rows are ours)"
LD_PRELOAD="$OURS" "$B/copy_cost" ${CALLS:-500} | grep nccl | tee -a "$O/summary.txt"
