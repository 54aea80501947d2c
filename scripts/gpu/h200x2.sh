#!/usr/bin/env bash
# Issue 20's measurements on 2 x H200 (nvidia-h200-x2), one process per
# GPU, gdrcoll and NCCL side by side in each run (NCCL_NVLS_ENABLE=0). Two
# calls of at most 10 minutes each, on one warm machine (the build stays):
#   scripts/gpu/h200x2.sh small   all-reduce 8 B - 1 MiB: the default (LL up
#                                 to 64 KiB), LL off (one-shot), LL without
#                                 PDL, and symmetric windows on both sides;
#                                 each with and without --graph; then the
#                                 window kernel and two-shot 1 MiB - 1 GiB
#   scripts/gpu/h200x2.sh all     all-gather, reduce-scatter, broadcast,
#                                 all-to-all 8 B - 1 GiB, NCCL default and
#                                 NCCL with symmetric windows, with and
#                                 without --graph; then compat.sh's NCCL-API
#                                 broadcast (part 3)
# The gpu suite on both GPUs is scripts/gpu/suite.sh (its own call).
# Every gdr-bench run has --check; its CSV lands in $O (summary.txt, and
# h200x2.tgz with every log and CSV).
# Usage (repo root): scripts/gpu/h200x2.sh small|all
GPU_PART=h200x2
GPU_ARCHIVE=1
GPU_BUDGET_S=${GPU_BUDGET_S:-570}
source "$(dirname "$0")/common.sh"
what=${1:-small}
gpu_build gdr-bench gdr_nccl nccl-api-bench
note "$(nvidia-smi -L | wc -l) GPU(s); $(uptime)"

# bench NAME [ENV=V ...] -- ARGS...: one gdr-bench run, bounded by what is left.
bench() {
  local name=$1 envs=() r t0
  shift
  while [ "$1" != "--" ]; do envs+=(-x "$1"); shift; done
  shift
  t0=$(date +%s)
  if [ "$(seconds_left)" -lt 20 ]; then note "$name: not run (the call's time is spent)"; return; fi
  timeout -s KILL $(( $(seconds_left) - 10 )) $MPI 2 -x NCCL_NVLS_ENABLE "${envs[@]}" \
    "$B/bin/gdr-bench" "$@" --mem cuda --check --compare nccl --csv "$O/$name.csv" >"$O/$name.log" 2>&1
  r=$?
  [ $r -ne 0 ] && status=$r
  note "$name: rc=$r in $(( $(date +%s) - t0 )) s"
  grep -E "^  +[0-9]" "$O/$name.log" | awk '{printf "  %s B: %s us, busbw %s, %s, nccl %s us, %s\n", $1, $3, $7, $8, $9, $11}' \
    >>"$O/summary.txt"
  part_save
}

case $what in
  small)
    for g in "" --graph; do
      bench "ar-default$g" -- allreduce --min 8 --max 1M $g
      bench "ar-ll-off$g" GDR_CUDA_IPC_LL_BYTES=0 -- allreduce --min 8 --max 1M $g
      bench "ar-ll-plain$g" GDR_CUDA_IPC_PDL=0 -- allreduce --min 8 --max 64K $g
      bench "ar-window$g" -- allreduce --min 8 --max 1M --window $g
      bench "ar-window-ll-off$g" GDR_CUDA_IPC_LL_BYTES=0 -- allreduce --min 8 --max 1M --window $g
    done
    bench ar-large -- allreduce --min 1M --max 1G
    bench ar-large-window -- allreduce --min 1M --max 1G --window
    ;;
  all)
    for c in allgather reducescatter bcast alltoall; do
      for g in "" --graph; do
        bench "$c$g" -- $c --min 8 --max 1G $g
        bench "$c-window$g" -- $c --min 8 --max 1G --window $g
      done
    done
    if [ "$(seconds_left)" -gt 60 ]; then
      GDR_GPU_BUILD=$B OUT=$O/compat timeout -s KILL $(( $(seconds_left) - 5 )) bash scripts/gpu/compat.sh \
        >"$O/compat.log" 2>&1
      note "compat.sh rc=$? (its part 3: nccl-api-bench bcast, real NCCL vs ours)"
    fi
    ;;
  *) echo "usage: scripts/gpu/h200x2.sh small|all" >&2; exit 2 ;;
esac
part_finish
