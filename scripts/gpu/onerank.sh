#!/usr/bin/env bash
# One-rank out-of-place collectives through the NCCL API, real NCCL and ours
# in the same run, beside the raw copy probe (scripts/gpu/copy_probe.cu):
#   bash scripts/gpu/onerank.sh      (GPU machine, repo root; logs in $OUT)
GPU_PART=onerank
. "$(dirname "$0")/common.sh"
gpu_build gdr_nccl nccl-api-bench
nvcc -O2 -arch=sm_90 -o "$B/copy_probe" scripts/gpu/copy_probe.cu >>"$O/build.log" 2>&1 || exit 1
"$B/copy_probe" 200 | tee "$O/copy_probe.txt"
OURS="$PWD/$B/lib/nccl-compat/libnccl.so.2"
for coll in ${COLLS:-alltoall allgather allreduce reducescatter}; do
  for lib in real ours; do
    envs=()
    [ $lib = ours ] && envs=(-x LD_PRELOAD="$OURS")
    rm -f "$O/id"
    timeout 90 $MPI 1 "${envs[@]}" "$B/bin/nccl-api-bench" $coll --min 64K --max 64M --mode env \
      --id-file "$O/id" --inplace 0 >"$O/$coll-$lib.txt" 2>&1
  done
  echo "== $coll: size, real us, ours us"
  join <(awk '$1 ~ /^[0-9]+$/ {print $1, $3}' "$O/$coll-real.txt" | sort -k1,1) \
       <(awk '$1 ~ /^[0-9]+$/ {print $1, $3}' "$O/$coll-ours.txt" | sort -k1,1) | sort -n |
    awk '{printf "%10s %8.2f %8.2f %5.2fx\n", $1, $2, $3, ($3 > 0 ? $2 / $3 : 0)}' | tee -a "$O/summary.txt"
done
