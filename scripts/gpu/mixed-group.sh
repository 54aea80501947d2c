#!/usr/bin/env bash
# The mixed group (tests/gpu/gpu_mixed_group_test.cc: one group with a
# device all-reduce on the staged path and then a host all-reduce, one
# communicator, np 2, GDR_TRANSPORT=socket) against this checkout's library
# and, with OLD_SRC set to another checkout (e.g. a `git worktree add ../old
# 00cdb4b`), against that one's too: the test uses only the public API, so
# the same source builds against both. Expected: it fails on code whose
# groups lack the rule "host work waits for staged device work" and passes
# after. Logs under $OUT (or build-gpu-run/out-mixed-group).
# Usage (repo root): [OLD_SRC=../old] scripts/gpu/mixed-group.sh
GPU_PART=mixed-group
source "$(dirname "$0")/common.sh"
gpu_build gdrcoll

CUDA=${CUDA_HOME:-/usr/local/cuda}
build_test() {  # source-dir lib-dir output
  mpicxx -O2 -std=c++17 -DOMPI_SKIP_MPICXX=1 -I"$1/include" -I"$CUDA/include" tests/gpu/gpu_mixed_group_test.cc \
    -L"$2" -Wl,-rpath,"$2" -lgdrcoll -L"$CUDA/lib64" -Wl,-rpath,"$CUDA/lib64" -lcudart -o "$3"
}
run_test() {  # name binary
  local r
  GDR_TRANSPORT=socket GDR_TIMEOUT_MS=20000 timeout 240 $MPI 2 "$2" >"$O/$1.log" 2>&1
  r=$?
  note "mixed group ($1) rc=$r: $(grep -m1 'mixed group checks' "$O/$1.log")"
  grep -m5 -E "failed|gdrGroupEnd|bad" "$O/$1.log" | tee -a "$O/summary.txt"
  return $r
}

build_test . "$PWD/$B/lib" "$B/bin/mixed-group-new" || exit 1
run_test new "$B/bin/mixed-group-new" || status=1
if [ -n "${OLD_SRC:-}" ]; then
  OB="$OLD_SRC/build-gpu-run"
  (cd "$OLD_SRC" && cmake -S . -B build-gpu-run -G Ninja -DGDR_ENABLE_IB=OFF -DCMAKE_BUILD_TYPE=Release \
     >"$O/build-old.log" 2>&1 && ninja -C build-gpu-run -j32 gdrcoll >>"$O/build-old.log" 2>&1) || {
    note "old build failed"; tail -20 "$O/build-old.log"; exit 1; }
  build_test "$OLD_SRC" "$(cd "$OB/lib" && pwd)" "$B/bin/mixed-group-old" || exit 1
  # Expected to fail on code without the rule; its outcome is reported, not the status.
  run_test old "$B/bin/mixed-group-old"
fi
note "done, status $status"
exit $status
