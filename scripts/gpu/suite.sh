#!/usr/bin/env bash
# The whole `gpu` CTest label in bounded calls on the lent GPU machine:
# builds (Release, CUDA for sm_90, verbs when the headers are there) every
# target a gpu test runs, then runs the label one test at a time (JOBS:
# tests sharing the one GPU at once ran 4x slower each), each under its own
# timeout, until BUDGET seconds of the call are spent. A second call on the
# same warm machine (the build folder stays) with TESTS="name ..." runs only
# those. The ctest output and each failed test's log land in $OUT.
# EXTRA_TARGETS adds targets to the build; BUILD_ONLY=1 stops after it.
# Usage (repo root): [TESTS="..."] [BUDGET=540] [JOBS=1] scripts/gpu/suite.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never multicast
B=${GDR_GPU_BUILD:-build-gpu-suite}
OUT=${OUT:-$B/out}
mkdir -p "$OUT" "$B"
T0=$(date +%s)
left() { echo $(( ${BUDGET:-540} - ($(date +%s) - T0) )); }
note() { echo "$*" | tee -a "$OUT/summary.txt"; }

VERBS=()
if [ -f /usr/include/infiniband/verbs.h ]; then IB=ON
elif [ -f gpu-verbs-include/infiniband/verbs.h ]; then
  IB=ON; VERBS=(-DIBVERBS_INCLUDE_DIR="$PWD/gpu-verbs-include")
else IB=OFF; fi
note "commit $(git rev-parse --short HEAD 2>/dev/null); $(nvidia-smi -L | wc -l) GPU(s); verbs $IB"
TARGETS="gdr-gpu-test gdr-gpu-multidev-test gdr-gpu-staged-check gdr-gpu-fault-staged
  gdr-gpu-mixed-group-test gdr-gpu-device-copy-test gdr-gpu-device-board gdr_nccl gdr-nccl-gpu-test
  gdr-nccl-gpu-test-ours gdr-crypto-gpu-test gdr-gpu-ll-test gdr-gpu-window-test"
[ $IB = ON ] && TARGETS="$TARGETS gdr-gpu-direct-test gdr-gdr-gpu-test gdr-softnic-gpu-test gdr-reg-cost"
TARGETS="$TARGETS ${EXTRA_TARGETS:-}"  # what other parts of the same call run
t0=$(date +%s)
cmake -S . -B "$B" -G Ninja -DGDR_ENABLE_IB=$IB -DGDR_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_BUILD_TYPE=Release "${VERBS[@]}" >"$OUT/build.log" 2>&1 &&
  ninja -C "$B" -j16 $TARGETS >>"$OUT/build.log" 2>&1
rc=$?
note "build rc=$rc in $(( $(date +%s) - t0 )) s"
if [ $rc -ne 0 ]; then grep -E "error|FAILED" "$OUT/build.log" | head -20 | tee -a "$OUT/summary.txt"; exit $rc; fi

[ -n "${BUILD_ONLY:-}" ] && exit 0
sel=(-L gpu)
[ -n "${TESTS:-}" ] && sel=(-R "^($(echo $TESTS | tr ' ' '|'))\$")
(cd "$B" && timeout -k 5 $(( $(left) - 10 )) ctest "${sel[@]}" -j"${JOBS:-1}" --timeout 420 \
  --output-on-failure) >"$OUT/ctest.txt" 2>&1
rc=$?
[ $rc -eq 124 ] && note "ctest cut at the call's budget: the tests without a line below have no verdict"
grep -E "Test +#|tests passed|tests failed" "$OUT/ctest.txt" | tee -a "$OUT/summary.txt"
note "suite rc=$rc after $(( $(date +%s) - T0 )) s"
exit $rc
