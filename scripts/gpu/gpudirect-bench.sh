#!/usr/bin/env bash
# The bench of bench/results/gpudirect.md on the lent GPU machine (no RDMA
# NIC): the staged path against the GPUDirect path, both through the
# software NIC, on device buffers between two "hosts" (two forked ranks
# sharing the GPU, each with its own GDR_HOST_ID): latency, bandwidth and
# both ranks' CPU time per GB moved (tests/gpu/gpu_direct_bench.cc), the
# paths interleaved over GDR_BENCH_ROUNDS rounds (default 3), then the
# medians as one table (scripts/gpu/gpudirect_table.py). One call of under
# 4 minutes with its build; everything in $OUT/gpudirect-bench.tgz and
# $OUT/summary.txt.
#   scripts/gpu/gpudirect-bench.sh
# GDR_BENCH_PATHS: the paths, comma separated (default direct,staged; add
# flags for GDR_DIRECT_ORDER=flags).
PART=gpudirect-bench BUDGET=225 BUILD=build-gpu-gpudirect-bench
source "$(dirname "$0")/verbs-run.sh"
t0=$(date +%s)
timeout $(left 170) bash -c "cmake -S . -B '$B' -G Ninja -DGDR_ENABLE_IB=ON -DGDR_ENABLE_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release ${VERBS[*]} -DGDR_BUILD_BENCH=OFF && \
  ninja -C '$B' -j16 gdr-gpu-direct-bench" >"$O/build.log" 2>&1
rc=$?
note "build rc=$rc in $(( $(date +%s) - t0 )) s"
if [ $rc -ne 0 ]; then tail -40 "$O/build.log" | tee -a "$O/summary.txt"; exit $rc; fi

note "load before: $(uptime)"
t0=$(date +%s)
timeout $(left 200) "$B/bin/gdr-gpu-direct-bench" --rounds "${GDR_BENCH_ROUNDS:-3}" \
  --paths "${GDR_BENCH_PATHS:-direct,staged}" >"$O/bench.txt" 2>"$O/bench-stderr.log"
status=$?
note "gdr-gpu-direct-bench rc=$status in $(( $(date +%s) - t0 )) s (124: cut at the deadline; the rows so far count)"
note "load after: $(uptime)"
grep -E "passed|FAILED|skipped" "$O/bench.txt" | tee -a "$O/summary.txt"
grep -E "check failed|exception" "$O/bench-stderr.log" | head -10 | tee -a "$O/summary.txt"
note ""
note "staged: device -> pinned host -> softnic0 (process_vm_writev) -> pinned host -> device;"
note "direct: softnic0 device -> device (a CUDA copy through a CUDA IPC mapping); CPU: getrusage"
note "of each whole rank process per GB its links carried (n - 1 blocks per collective)."
python3 scripts/gpu/gpudirect_table.py "$O/bench.txt" 2>&1 | tee -a "$O/summary.txt"
note "overall status $status after $(( $(date +%s) - T0 )) s"
exit $status
