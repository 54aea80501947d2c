#!/usr/bin/env bash
# The LL all-reduce on ONE GPU, in one call on the GPU machine (under 5
# minutes with its build): builds gdr-gpu-ll-test and gdr-gpu-test (Release,
# no verbs, sm_90), then the LL tests (one process with 2 communicators on
# the GPU), the launch-path latency (tests/gpu/gpu_ll_test.cc --bench, the
# same 2 communicators), the LL tests again with two processes sharing the
# GPU and with 3 (and 8, time allowing) communicators in one process, then
# gdr-gpu-test --quick --ipc-only at np 2 with GDR_ALGO=allreduce=ll in what
# is left of 285 s (LIMIT). "tests" leaves out the bench, "bench" the
# gdr-gpu-test run.
# One-GPU figures only: the "peer" is the same GPU (its memory through L2,
# no NVLink), so they say what one rank's launch path costs, not what two
# GPUs would measure.
# Results: $OUT/summary.txt and every log in $OUT/ll.tgz.
# Usage (repo root): scripts/gpu/ll.sh [all|tests|bench]
GPU_PART=ll
FINAL=${OUT:-}
unset OUT
source "$(dirname "$0")/common.sh"
what=${1:-all}
rm -f "$O"/*.log "$O"/*.txt
t_start=$(date +%s)
left() { echo $(( ${LIMIT:-285} - ($(date +%s) - t_start) )); }

t0=$(date +%s)
cmake -S . -B "$B" -G Ninja -DGDR_ENABLE_IB=OFF -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  >"$O/build.log" 2>&1 && ninja -C "$B" -j16 gdr-gpu-ll-test gdr-gpu-test >>"$O/build.log" 2>&1
rc=$?
note "build rc=$rc in $(( $(date +%s) - t0 )) s"
[ $rc -ne 0 ] && { grep -E 'error|FAILED' "$O/build.log" | head -30 | tee -a "$O/summary.txt"; status=$rc; }
nvidia-smi -L 2>&1 | head -2 | tee -a "$O/summary.txt"

# ll_test NAME LIMIT NP [ARGS...]: one run of the LL tests, forced.
ll_test() {
  local name=$1 limit=$2 np=$3 r t0
  shift 3
  t0=$(date +%s)
  GDR_ALGO=allreduce=ll GDR_TIMEOUT_MS=20000 timeout -s KILL "$limit" $MPI "$np" -x GDR_ALGO -x GDR_TIMEOUT_MS \
    "$B/bin/gdr-gpu-ll-test" "$@" >"$O/ll-$name.log" 2>&1
  r=$?
  note "gdr-gpu-ll-test $name rc=$r in $(( $(date +%s) - t0 )) s"
  grep -E '^\[|checks' "$O/ll-$name.log" | tee -a "$O/summary.txt"
  grep -vE '^\[|checks' "$O/ll-$name.log" | head -12 | cut -c1-300 | tee -a "$O/summary.txt"
  [ $r -ne 0 ] && status=$r
}

# The launch-path latency, one process holding both communicators (two
# processes time-slice the GPU without MPS: their figures would be the
# slices).
ll_bench() {
  local r
  timeout -s KILL 40 $MPI 1 "$B/bin/gdr-gpu-ll-test" --bench --local 2 >"$O/bench-local2.txt" 2>&1
  r=$?
  note "latency bench local2 rc=$r"
  head -30 "$O/bench-local2.txt" | cut -c1-200 | tee -a "$O/summary.txt"
  uptime | tee -a "$O/summary.txt"
}

if [ $rc -eq 0 ]; then
  ll_test local2 60 1 --local 2
  [ "$what" != tests ] && ll_bench
  ll_test np2 90 2
  ll_test local3 60 1 --local 3
  [ "$(left)" -gt 70 ] && ll_test local8 30 1 --local 8
  l=$(left)
  if [ "$what" != bench ] && [ "$l" -gt 40 ]; then
    t0=$(date +%s)
    GDR_ALGO=allreduce=ll GDR_TIMEOUT_MS=60000 timeout -s KILL "$l" $MPI 2 -x GDR_ALGO -x GDR_TIMEOUT_MS \
      "$B/bin/gdr-gpu-test" --quick --ipc-only >"$O/gpu-test-np2-ll.log" 2>&1
    r=$?
    note "gdr-gpu-test --quick --ipc-only np=2 GDR_ALGO=allreduce=ll rc=$r in $(( $(date +%s) - t0 )) s (limit $l s)"
    grep -E '^\[|checks|host cost' "$O/gpu-test-np2-ll.log" | tee -a "$O/summary.txt"
    grep -iE 'mismatch|error|expected' "$O/gpu-test-np2-ll.log" | head -10 | cut -c1-300 | tee -a "$O/summary.txt"
    [ $r -ne 0 ] && status=$r
  fi
fi

note "ll $what: status $status, $(( $(date +%s) - t_start )) s in all"
if [ -n "$FINAL" ]; then
  mkdir -p "$FINAL"
  cp "$O/summary.txt" "$FINAL/summary.txt"
  tar czf "$FINAL/ll.tgz" -C "$O" .
fi
exit $status
