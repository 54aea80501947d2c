#!/usr/bin/env bash
# One call on the GPU machine for what the session's merges need seen there:
#  1. the NCCL-API host tests (np 2: a shrunk one-rank communicator);
#  2. the one-rank out-of-place bench, real NCCL and ours interleaved RUNS
#     times (one process each; the median per size, since two processes of
#     the same binary differ by up to 25 % on this machine);
#  3. the mixed group on this checkout and on OLD_SRC (the code before the
#     router);
#  4. scripts/gpu/gpudirect.sh (the software NIC's device mode);
#  5. with what time is left, the gpu suite with GDR_ALGO forcing the fused kernels.
# Everything goes into $OUT/final.tgz (and $OUT/summary.txt).
GPU_PART=final
. "$(dirname "$0")/common.sh"
T0=$(date +%s)
left() { echo $(( ${BUDGET:-560} - ($(date +%s) - T0) )); }
pack() { tar -C "$O" -czf "$OUT/final.tgz" . 2>/dev/null; cp "$O/summary.txt" "$OUT/summary.txt" 2>/dev/null; }
trap pack EXIT
gpu_build gdr_nccl gdrcoll nccl-api-bench gdr-nccl-api-test gdr-nccl-api-test-sysheader gdr-gpu-test \
  gdr-gpu-mixed-group-test
OURS="$PWD/$B/lib/nccl-compat/libnccl.so.2"
for t in gdr-nccl-api-test gdr-nccl-api-test-sysheader; do
  LD_LIBRARY_PATH="$(dirname "$OURS")" timeout 90 "$B/bin/$t" 2 nccl-compat >"$O/$t-np2.log" 2>&1
  note "$t np2 rc=$?: $(tail -1 "$O/$t-np2.log")"
done
onerank_interleaved "${RUNS:-5}" "$OURS"
python3 scripts/gpu/onerank_medians.py "$O" | tee -a "$O/summary.txt"
if [ "$(left)" -gt 200 ]; then
  GDR_TIMEOUT_MS=20000 OUT="$O/mixed" OLD_SRC=${OLD_SRC:-old-src} timeout $(( $(left) - 170 )) \
    bash scripts/gpu/mixed-group.sh >"$O/mixed-group.txt" 2>&1
  note "mixed-group.sh rc=$?"; grep -E "mixed group|status" "$O/mixed-group.txt" | tee -a "$O/summary.txt"
fi
if [ "$(left)" -gt 150 ]; then
  [ -f /usr/include/infiniband/verbs.h ] || export GDR_VERBS_INCLUDE="$PWD/gpu-verbs-include"
  OUT="$O/gpudirect-out" timeout $(( $(left) - 10 )) bash scripts/gpu/gpudirect.sh >"$O/gpudirect.txt" 2>&1
  note "gpudirect.sh rc=$?"; cat "$O/gpudirect-out/summary.txt" >>"$O/summary.txt" 2>/dev/null
fi
for algo in oneshot twoshot; do  # last: a --quick run takes about 150 s here
  [ "$(left)" -gt 40 ] || break
  GDR_ALGO=allreduce=$algo GDR_TIMEOUT_MS=60000 GDR_DEBUG=INFO timeout $(( $(left) - 10 )) $MPI 2 "$B/bin/gdr-gpu-test" --quick >"$O/gpu-$algo.log" 2>&1
  note "gdr-gpu-test np2 GDR_ALGO=allreduce=$algo rc=$? (124: cut by the budget)"
done
note "final.sh done in $(( $(date +%s) - T0 )) s"
