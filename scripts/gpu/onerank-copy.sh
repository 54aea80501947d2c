#!/usr/bin/env bash
# The one-rank copy (device/device_copy) on the GPU machine, in one call: its
# own checks, our NCCL-API device tests at np 1 and 2 on one GPU, the
# one-rank out-of-place bench against the real NCCL (interleaved, medians)
# and the same calls of both libraries alternated in one process (onerank_ab.cc).
#   bash scripts/gpu/onerank-copy.sh    (logs in $OUT/onerank.tgz, $OUT/summary.txt)
GPU_PART=onerank-copy
. "$(dirname "$0")/common.sh"
O="$B/out-$GPU_PART"; rm -rf "$O"; mkdir -p "$O"  # not $OUT: at most 8 files come back
pack() { tar -C "$O" -czf "$OUT/onerank.tgz" . 2>/dev/null; cp "$O/summary.txt" "$OUT/summary.txt" 2>/dev/null; }
trap pack EXIT
gpu_build gdr_nccl gdr-gpu-device-copy-test gdr-nccl-gpu-test-ours nccl-api-bench
OURS="$PWD/$B/lib/nccl-compat/libnccl.so.2"
timeout 120 "$B/bin/gdr-gpu-device-copy-test" >"$O/device-copy.log" 2>&1
r=$?; note "gdr-gpu-device-copy-test rc=$r: $(tail -1 "$O/device-copy.log")"; [ $r -ne 0 ] && status=$r
for np in 1 2; do
  timeout 120 "$B/bin/gdr-nccl-gpu-test-ours" $np >"$O/nccl-gpu-np$np.log" 2>&1
  r=$?; note "gdr-nccl-gpu-test-ours np$np rc=$r: $(tail -1 "$O/nccl-gpu-np$np.log")"; [ $r -ne 0 ] && status=$r
done
onerank_interleaved "${RUNS:-7}" "$OURS"
# The same calls in one process, real against ours, and real against a copy
# of itself (the method's own noise):
REAL=$(ldconfig -p | awk '/libnccl.so.2 / {print $NF; exit}')
cp "$REAL" "$B/libnccl-real-copy.so.2"
nvcc -O2 -std=c++17 -o "$B/onerank_ab" scripts/gpu/onerank_ab.cc -ldl >>"$O/build.log" 2>&1 &&
  { taskset -c 2 "$B/onerank_ab" "$REAL" "$OURS" 200 15 | tee -a "$O/summary.txt";
    taskset -c 2 "$B/onerank_ab" "$REAL" "$B/libnccl-real-copy.so.2" 200 15 | tee -a "$O/summary.txt"; }
exit $status
