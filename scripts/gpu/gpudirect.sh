#!/usr/bin/env bash
# The GPUDirect data path through the software NIC (softnic.h) on the lent
# GPU machine, which has no RDMA NIC: one call builds (CUDA + verbs headers),
# runs gdr-softnic-gpu-test (zero-copy into GPU memory between two verbs
# endpoints of one process, 1 GPU and 2 where there are two, host <-> device,
# a failed write naming the peer), the unit tests of the protocol over the
# software NIC in host mode (gdr-unit IbZcopy.*), then the bench (direct
# against staged, both through the software NIC: bandwidth and CPU time per
# GB). Every step is bounded; everything lands in $OUT/gpudirect.tgz (and
# $OUT/summary.txt). Usage, from the repo root: scripts/gpu/gpudirect.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0  # never NVLink multicast
B=${GDR_GPU_BUILD:-build-gpu-gpudirect}
OUT=${OUT:-$B/out}
O=$OUT/gpudirect
mkdir -p "$O"
status=0
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
timeout 420 bash -c "cmake -S . -B '$B' -G Ninja -DGDR_ENABLE_IB=ON -DGDR_ENABLE_CUDA=ON \
  -DCMAKE_BUILD_TYPE=Release -DGDR_BUILD_BENCH=OFF ${VERBS_FLAG[*]} && \
  ninja -C '$B' -j32 gdr-softnic-gpu-test gdr-info" >"$O/build.log" 2>&1
rc=$?
note "build rc=$rc in $(( $(date +%s) - t0 )) s"
if [ $rc -ne 0 ]; then tail -40 "$O/build.log"; exit $rc; fi

GDR_DEBUG=INFO GDR_DEBUG_SUBSYS=NET timeout 120 "$B/bin/gdr-softnic-gpu-test" >"$O/softnic-gpu-test.log" 2>&1
r=$?
note "gdr-softnic-gpu-test rc=$r"
grep -E "^(FAIL|direct|host|failed write|software NIC|passed|FAILED)" "$O/softnic-gpu-test.log" | tee -a "$O/summary.txt"
[ $r -ne 0 ] && status=$r

timeout 300 ninja -C "$B" -j32 gdr-unit >>"$O/build.log" 2>&1 &&
  timeout 120 "$B/bin/gdr-unit" --gtest_filter='IbZcopy.*' >"$O/unit-ibzcopy.log" 2>&1
r=$?
note "gdr-unit IbZcopy.* rc=$r: $(grep -E '^\[  (PASSED|FAILED) ' "$O/unit-ibzcopy.log" | tr '\n' ' ')"
[ $r -ne 0 ] && status=$r

timeout 240 "$B/bin/gdr-softnic-gpu-test" --bench >"$O/bench.log" 2>&1
r=$?
note "bench rc=$r (direct: device -> device through softnic0; staged: device -> pinned host, softnic0, host -> device)"
grep -E '^\|' "$O/bench.log" | tee -a "$O/summary.txt"
[ $r -ne 0 ] && status=$r
"$B/bin/gdr-info" >"$O/gdr-info.log" 2>&1
nvidia-smi topo -m >"$O/topo.txt" 2>&1
note "overall status $status"
exit $status
