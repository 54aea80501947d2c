#!/usr/bin/env bash
# The GPUDirect path's checks on the lent GPU machine (no RDMA NIC: verbs
# over the software NIC), in one bounded call of under 6 minutes:
#  0. wait_probe (scripts/gpu/wait_probe.cu): does work on other streams of
#     a process complete while one stream waits on a flag word? Default
#     CUDA_DEVICE_MAX_CONNECTIONS and 32, and across two processes (--fork)
#     (the GDR_DIRECT_ORDER=flags hang);
#  1. gdr-gpu-direct-test: correctness at np 2 (one-shot reductions) and at
#     np 3 (three processes, three host ids: the ring), the failed write;
#  2. gdr-gpu-device-board: the status board and revoke cases, the
#     GPUDirect path's among them (board_direct, revoke_direct_*);
#  3. gdr-reg-cost --device: a receive target's registration on the software
#     NIC per operation against the cached one (device memory: IPC export);
#  4. if time is left: gdr-gpu-direct-test under GDR_DIRECT_ORDER=flags
#     with CUDA_DEVICE_MAX_CONNECTIONS=32, for the record.
# Everything lands in $OUT/direct-check.tgz and $OUT/summary.txt.
# Usage, from the repo root: scripts/gpu/direct-check.sh
PART=direct-check BUDGET=330 BUILD=build-gpu-direct
source "$(dirname "$0")/verbs-run.sh"
t0=$(date +%s)
timeout $(left 240) bash -c "cmake -S . -B '$B' -G Ninja -DGDR_ENABLE_IB=ON -DGDR_ENABLE_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release ${VERBS[*]} && \
  ninja -C '$B' -j16 gdr-gpu-direct-test gdr-gpu-device-board gdr-reg-cost" >"$O/build.log" 2>&1 &
build=$!

# 0. The probe, while the library builds (its own nvcc call).
if nvcc -O2 -arch=sm_90 -o "$B/wait_probe" scripts/gpu/wait_probe.cu -lcuda >"$O/probe-build.log" 2>&1; then
  for c in "" 32; do
    if [ -n "$c" ]; then export CUDA_DEVICE_MAX_CONNECTIONS=$c; else unset CUDA_DEVICE_MAX_CONNECTIONS; fi
    timeout 40 "$B/wait_probe" >"$O/wait-probe${c:+-$c}.log" 2>&1
    note "wait_probe (CUDA_DEVICE_MAX_CONNECTIONS=${c:-unset}) rc=$?"
    grep -E "^(blocked|after|stream W|cu)" "$O/wait-probe${c:+-$c}.log" | tee -a "$O/summary.txt"
  done
  unset CUDA_DEVICE_MAX_CONNECTIONS
  # Across processes: another context's copies while this one's stream waits.
  timeout 40 "$B/wait_probe" --fork >"$O/wait-probe-fork.log" 2>&1
  note "wait_probe --fork rc=$?"
  grep -E "^(other|the other|after|stream W|cu)" "$O/wait-probe-fork.log" | tee -a "$O/summary.txt"
else
  note "wait_probe did not build"; tail -5 "$O/probe-build.log"
fi

wait $build
rc=$?
note "build rc=$rc in $(( $(date +%s) - t0 )) s"
if [ $rc -ne 0 ]; then tail -40 "$O/build.log" | tee -a "$O/summary.txt"; exit $rc; fi

# 1. The GPUDirect path, np 2 and np 3.
GDR_DEBUG=INFO GDR_DEBUG_SUBSYS=NET,COLL timeout $(left 150) "$B/bin/gdr-gpu-direct-test" >"$O/direct.log" 2>&1
r=$?
note "gdr-gpu-direct-test rc=$r"
grep -E "(passed|FAILED|check failed|stream order|capture refused|failed write|correctness done|skipped|timed out)" \
  "$O/direct.log" | head -40 | tee -a "$O/summary.txt"
note "lines 'take the GPUDirect path': $(grep -c 'device buffers take the GPUDirect path' "$O/direct.log")," \
  "'take the staged path': $(grep -c 'device buffers take the staged path' "$O/direct.log")"
[ $r -ne 0 ] && status=$r

# 2. The board and revoke cases.
timeout $(left 120) "$B/bin/gdr-gpu-device-board" >"$O/device-board.log" 2>&1
r=$?
note "gdr-gpu-device-board rc=$r"
grep -E "^(case|device board|skipped)|FAILED|check failed|\[rank" "$O/device-board.log" | head -60 |
  tee -a "$O/summary.txt"
[ $r -ne 0 ] && status=$r

# 3. Registration per operation against cached, device and host memory.
for m in --device ""; do
  GDR_IB_PROVIDER=softnic timeout 30 "$B/bin/gdr-reg-cost" $m 100 >"$O/reg-cost${m}.log" 2>&1
  note "gdr-reg-cost $m rc=$?"
  cat "$O/reg-cost${m}.log" | tee -a "$O/summary.txt"
done

# 4. Flags order with more hardware queues, for the record (not counted).
if [ "$(left 60)" -ge 40 ]; then
  CUDA_DEVICE_MAX_CONNECTIONS=32 GDR_DIRECT_ORDER=flags timeout $(left 60) "$B/bin/gdr-gpu-direct-test" \
    >"$O/direct-flags-32.log" 2>&1
  note "gdr-gpu-direct-test (GDR_DIRECT_ORDER=flags, CUDA_DEVICE_MAX_CONNECTIONS=32) rc=$? (not counted)"
  grep -E "(passed|FAILED|timed out|correctness done)" "$O/direct-flags-32.log" | head -8 | tee -a "$O/summary.txt"
fi
note "overall status $status after $(( $(date +%s) - T0 )) s"
exit $status
