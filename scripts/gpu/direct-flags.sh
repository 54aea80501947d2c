#!/usr/bin/env bash
# The GPUDirect path's stream-flags order in one bounded call (~150 s of GPU
# time), on a tree suite.sh configured (default build-gpu-suite: CUDA for
# sm_90 + verbs, Release; with EXTRA_TARGETS="gdr-gpu-direct-bench" the
# targets below are built already, else built here):
#  1. ctest gpu_direct (CUDA_MODULE_LOADING=LAZY: GDR_DIRECT_ORDER=auto must
#     take host order) and gpu_direct_flags (EAGER: auto must take flags
#     order, the stream waiting by cuStreamWaitValue32): np 2, np 3 ring,
#     failed write, stream order, capture refused, every operation in the
#     expected order (GDR_TEST_EXPECT_ORDER);
#  2. gdr-gpu-direct-test under EAGER with GDR_DIRECT_WAIT=kernel (the
#     polling-kernel wait), flags order expected;
#  3. gdr-gpu-direct-bench rounds (host order, staged, flags, flags-kernel)
#     while time is left; the medians as a table.
# Everything in $OUT/direct-flags.tgz and $OUT/summary.txt.
#   scripts/gpu/direct-flags.sh
PART=direct-flags BUDGET=${GDR_FLAGS_BUDGET:-150} BUILD=build-gpu-suite NEED_VERBS_HEADERS=0
source "$(dirname "$0")/verbs-run.sh"
bin=$B/bin
t0=$(date +%s)
ninja -C "$B" -j16 gdr-gpu-direct-test gdr-gpu-direct-bench >"$O/build.log" 2>&1
rc=$?
note "ninja rc=$rc in $(( $(date +%s) - t0 )) s"
if [ $rc -ne 0 ]; then tail -30 "$O/build.log" | tee -a "$O/summary.txt"; exit $rc; fi
T0=$(date +%s)  # the budget counts GPU time from here

# 1. Both CTest cases (their ENVIRONMENT sets the loading mode and the order expected).
(cd "$B" && timeout -k 5 $(left 70) ctest -R '^gpu_direct(_flags)?$' --timeout 60 -V) \
  >"$O/ctest.log" 2>&1
r=$?
note "ctest gpu_direct gpu_direct_flags rc=$r after $(( $(date +%s) - T0 )) s"
grep -E "(Test +#|tests passed|tests failed|: passed|FAILED|check failed|GPUDirect path in|stream-flags order|failed write:|stream order)" \
  "$O/ctest.log" | sed 's/^[0-9]*: //' | sort | uniq -c | head -40 | tee -a "$O/summary.txt"
[ $r -ne 0 ] && status=$r

# 2. The polling-kernel wait, eager loading, flags order expected.
CUDA_MODULE_LOADING=EAGER GDR_DIRECT_WAIT=kernel GDR_TEST_EXPECT_ORDER=flags GDR_DEBUG=INFO \
  GDR_DEBUG_SUBSYS=NET timeout -s KILL $(left 40) "$bin/gdr-gpu-direct-test" >"$O/flags-kernel.log" 2>&1
r=$?
note "gdr-gpu-direct-test EAGER GDR_DIRECT_WAIT=kernel rc=$r after $(( $(date +%s) - T0 )) s"
grep -E "(: passed|FAILED|check failed|stream-flags order|GPUDirect path in)" "$O/flags-kernel.log" |
  sort | uniq -c | head -12 | tee -a "$O/summary.txt"
[ $r -ne 0 ] && status=$r

# 3. The bench, a round at a time while time is left.
bench_rounds direct,staged,flags,flags-kernel 45 30
note "overall status $status after $(( $(date +%s) - T0 )) s of GPU time"
exit $status
