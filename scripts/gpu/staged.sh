#!/usr/bin/env bash
# The staged device path (GPU buffers through pinned host memory and the
# socket transport, pipelined by the progress thread), forced on one host
# with GDR_TRANSPORT=socket: builds into build-gpu-run, runs the GPU suite at
# np 1 and 2, the staged checks (tests/gpu/gpu_staged_check.cc: the caller is
# not blocked, order, multi-segment, a peer that never joins), and the staged
# benchmarks beside NCCL. Logs under $OUT (or build-gpu-run/out-staged).
# Usage (repo root): scripts/gpu/staged.sh
GPU_PART=staged
source "$(dirname "$0")/common.sh"
gpu_build gdr-gpu-test gdr-gpu-staged-check gdr-bench gdrcoll

for np in 1 2; do
  t0=$(date +%s)
  GDR_TRANSPORT=socket GDR_TIMEOUT_MS=60000 timeout 300 $MPI $np "$B/bin/gdr-gpu-test" --quick \
    >"$O/gpu-test-socket-np$np.log" 2>&1
  r=$?
  note "gpu tests (GDR_TRANSPORT=socket) np=$np rc=$r in $(( $(date +%s) - t0 )) s"
  grep -E "^\[|gpu tests" "$O/gpu-test-socket-np$np.log" | grep -v "^\[ ok" | tee -a "$O/summary.txt"
  grep -m5 -E "element|failed|error" "$O/gpu-test-socket-np$np.log"
  [ $r -ne 0 ] && status=$r
done

run_staged_check

C="--mem cuda --check --compare nccl"
bench_staged allreduce -- allreduce $C --min 8 --max 256M
bench_staged sendrecv -- sendrecv $C --min 8 --max 64M
bench_staged allgather -- allgather $C --min 1K --max 256M
# The segment size: the default (1 MiB) against 4 MiB on the large all-reduce.
bench_staged allreduce-seg4M GDR_STAGED_CHUNK_BYTES=4194304 -- allreduce $C --min 1M --max 256M
note "done, status $status"
exit $status
