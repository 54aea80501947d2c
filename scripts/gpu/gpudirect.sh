#!/usr/bin/env bash
# The GPUDirect data path through the software NIC (softnic.h) on the lent
# GPU machine, which has no RDMA NIC: one call builds (CUDA for sm_90 + verbs
# headers), then runs
#  1. gdr-gpu-direct-test: two forked ranks sharing the GPU as two hosts
#     (GDR_HOST_ID), verbs over the software NIC (device memory across the
#     processes by CUDA IPC): every collective and send/recv on device
#     buffers takes the GPUDirect path (src/paths/direct) and is correct,
#     host <-> device, stream order, capture refused, a failed write;
#  2. the bench (one round; scripts/gpu/gpudirect-bench.sh runs more): staged
#     (GDR_NET_GDR=0) against GPUDirect, both through the software NIC:
#     latency, bandwidth, CPU time per GB moved, as a table;
#     then the test once more with GDR_DIRECT_ORDER=flags, for the record;
#  3. gdr-softnic-gpu-test: zero-copy into GPU memory between two verbs
#     endpoints of one process, 1 GPU and 2 where there are two.
# Every step is bounded; everything lands in $OUT/gpudirect.tgz (and
# $OUT/summary.txt). Usage, from the repo root: scripts/gpu/gpudirect.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0  # never NVLink multicast
B=${GDR_GPU_BUILD:-build-gpu-gpudirect}
OUT=${OUT:-$B/out}
O=$OUT/gpudirect
mkdir -p "$O"
status=0
T0=$(date +%s)
# Seconds left of the call's 340 s budget, at most $1.
left() { local l=$(( 340 - ($(date +%s) - T0) )); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 5 ] && l=5; echo $l; }
note() { echo "$*" | tee -a "$O/summary.txt"; }
pack() { tar -C "$OUT" -czf "$OUT/gpudirect.tgz" gpudirect && cp "$O/summary.txt" "$OUT/summary.txt"; }
trap pack EXIT

# GDR_VERBS_INCLUDE: a folder holding infiniband/verbs.h where the system has
# none (the headers are all the build needs: libibverbs is dlopened).
VERBS_FLAG=()
if [ -f /usr/include/infiniband/verbs.h ]; then IB=ON
elif [ -n "${GDR_VERBS_INCLUDE:-}" ] && [ -f "$GDR_VERBS_INCLUDE/infiniband/verbs.h" ]; then
  IB=ON; VERBS_FLAG=(-DIBVERBS_INCLUDE_DIR="$GDR_VERBS_INCLUDE")
else IB=OFF; fi
note "infiniband/verbs.h: $([ $IB = ON ] && echo present || echo absent); $(nvidia-smi -L 2>/dev/null | wc -l) GPU(s)"
if [ $IB = OFF ]; then
  note "no verbs headers: the software NIC needs them to build (apt-get install libibverbs-dev)"
  exit 1
fi
t0=$(date +%s)
timeout $(left 240) bash -c "cmake -S . -B '$B' -G Ninja -DGDR_ENABLE_IB=ON -DGDR_ENABLE_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release -DGDR_BUILD_BENCH=OFF ${VERBS_FLAG[*]} && \
  ninja -C '$B' -j16 gdr-gpu-direct-test gdr-gpu-direct-bench gdr-softnic-gpu-test gdr-info" >"$O/build.log" 2>&1
rc=$?
note "build rc=$rc in $(( $(date +%s) - t0 )) s"
if [ $rc -ne 0 ]; then tail -40 "$O/build.log"; exit $rc; fi

# 1. The GPUDirect path (the default order, GDR_DIRECT_ORDER=host).
GDR_DEBUG=INFO GDR_DEBUG_SUBSYS=NET,COLL timeout $(left 90) "$B/bin/gdr-gpu-direct-test" >"$O/direct-host.log" 2>&1
r=$?
note "gdr-gpu-direct-test (GDR_DIRECT_ORDER=host) rc=$r"
log="$O/direct-host.log"
grep -E "(passed|FAILED|check failed|stream order|capture refused|failed write|correctness done|skipped)" "$log" |
  head -40 | tee -a "$O/summary.txt"
note "ranks logging 'take the GPUDirect path': $(grep -c 'device buffers take the GPUDirect path' "$log")," \
  "'take the staged path': $(grep -c 'device buffers take the staged path' "$log")"
grep -m2 'device buffers take the' "$log" | tee -a "$O/summary.txt"
[ $r -ne 0 ] && status=$r

# 2. The bench.
timeout $(left 90) "$B/bin/gdr-gpu-direct-bench" --rounds 1 >"$O/bench-direct.log" 2>&1
r=$?
note "bench rc=$r (staged: device -> pinned host -> softnic0 -> host -> device; direct: softnic0 device -> device)"
grep -E '^\||passed|FAILED|check failed' "$O/bench-direct.log" | tee -a "$O/summary.txt"
[ $r -ne 0 ] && status=$r

# 2b. Stream flags (GDR_DIRECT_ORDER=flags), for the record: they hung here
# once the transport's own CUDA copies ran while the stream waited.
GDR_DIRECT_ORDER=flags timeout $(left 45) "$B/bin/gdr-gpu-direct-test" >"$O/direct-flags.log" 2>&1
note "gdr-gpu-direct-test (GDR_DIRECT_ORDER=flags) rc=$? (3: a rank hung; not counted in the status)"
grep -E "(passed|FAILED|timed out)" "$O/direct-flags.log" | head -4 | tee -a "$O/summary.txt"

# 3. Zero-copy between two endpoints of one process.
GDR_DEBUG=INFO GDR_DEBUG_SUBSYS=NET timeout $(left 40) "$B/bin/gdr-softnic-gpu-test" >"$O/softnic-gpu-test.log" 2>&1
r=$?
note "gdr-softnic-gpu-test rc=$r"
grep -E "^(FAIL|direct|host|failed write|software NIC|passed|FAILED)" "$O/softnic-gpu-test.log" | tee -a "$O/summary.txt"
[ $r -ne 0 ] && status=$r

"$B/bin/gdr-info" >"$O/gdr-info.log" 2>&1
nvidia-smi topo -m >"$O/topo.txt" 2>&1
note "overall status $status after $(( $(date +%s) - T0 )) s"
exit $status
