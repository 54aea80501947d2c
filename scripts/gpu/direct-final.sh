#!/usr/bin/env bash
# The GPUDirect path's checks in at most ~100 s of GPU time, on a tree the
# caller has configured and built already (default build-gpu-suite: CUDA
# for sm_90 + verbs, Release; the targets gdr-gpu-direct-test
# gdr-gpu-direct-bench gdr-wait-probe, built here if missing). In order of
# worth, each step under the time left:
#  1. gdr-gpu-direct-test (host order): np 2, np 3 (the ring), the failed
#     write; capture refused in all three capture modes;
#  2. gdr-wait-probe: do copies and kernels on other streams of a process
#     complete while one stream sits in cuStreamWaitValue32? Plain (it
#     blocked the host in session 10), with the kernel loaded before the
#     wait (--preload), under CUDA_MODULE_LOADING=EAGER, across processes;
#  3. gdr-gpu-direct-test np2 under GDR_DIRECT_ORDER=flags: the polling
#     kernel's wait (GDR_DIRECT_WAIT=kernel, the default), the same under
#     CUDA_MODULE_LOADING=EAGER, and cuStreamWaitValue32 under EAGER;
#  3b. gdr-reg-cost --device (built by suite.sh) when time is left;
#  4. gdr-gpu-direct-bench rounds (staged against GPUDirect, and flags when
#     step 3 passed) while time is left; the medians as a table.
# Everything in $OUT/direct-final.tgz and $OUT/summary.txt.
#   scripts/gpu/direct-final.sh
PART=direct-final BUDGET=${GDR_FINAL_BUDGET:-100} BUILD=build-gpu-suite NEED_VERBS_HEADERS=0
source "$(dirname "$0")/verbs-run.sh"
bin=$B/bin
t0=$(date +%s)
ninja -C "$B" -j16 gdr-gpu-direct-test gdr-gpu-direct-bench gdr-wait-probe >"$O/build.log" 2>&1
rc=$?
note "ninja rc=$rc in $(( $(date +%s) - t0 )) s"
if [ $rc -ne 0 ]; then tail -30 "$O/build.log" | tee -a "$O/summary.txt"; exit $rc; fi
T0=$(date +%s)  # the budget counts GPU time from here

# 1. The path in host order (the default).
GDR_DEBUG=INFO GDR_DEBUG_SUBSYS=NET timeout -s KILL $(left 25) "$bin/gdr-gpu-direct-test" \
  >"$O/direct.log" 2>&1
r=$?
note "gdr-gpu-direct-test rc=$r after $(( $(date +%s) - T0 )) s"
grep -E "(passed|FAILED|check failed|stream order|capture refused|failed write|correctness done|scratch|skipped)" \
  "$O/direct.log" | head -24 | tee -a "$O/summary.txt"
note "lines 'take the GPUDirect path': $(grep -c 'device buffers take the GPUDirect path' "$O/direct.log")"
[ $r -ne 0 ] && status=$r

# 2. The probe.
for v in default preload eager fork; do
  arg=(); envs=()
  [ $v = preload ] && arg=(--preload)
  [ $v = eager ] && envs=(CUDA_MODULE_LOADING=EAGER)
  [ $v = fork ] && arg=(--fork)
  env "${envs[@]}" timeout -s KILL $(left 8) "$bin/gdr-wait-probe" "${arg[@]}" >"$O/wait-probe-$v.log" 2>&1
  note "wait_probe $v rc=$? (0: all drained after the word; 137: cut)"
  grep -E "^(blocked|after|stream W|cu|other|the other|CUDA_DEVICE)" "$O/wait-probe-$v.log" | tee -a "$O/summary.txt"
  grep -c BLOCKED "$O/wait-probe-$v.log" | sed 's/^/  lines with BLOCKED: /' | tee -a "$O/summary.txt"
done

# 3. Flags order: the polling kernel's wait, then the stream memory wait.
flags_ok=0
# (eager: CUDA_MODULE_LOADING=EAGER, so the test's own kernels are loaded
# up front too; the path loads its own in flags order either way.)
for w in kernel kernel-eager stream-eager; do
  [ "$(left 15)" -lt 8 ] && { note "flags ($w): no time left"; continue; }
  envs=(GDR_DIRECT_WAIT=${w%-eager})
  [ "$w" != "${w%-eager}" ] && envs+=(CUDA_MODULE_LOADING=EAGER)
  env "${envs[@]}" GDR_DIRECT_ORDER=flags GDR_DEBUG=INFO GDR_DEBUG_SUBSYS=COLL \
    timeout -s KILL $(left 15) "$bin/gdr-gpu-direct-test" np2 >"$O/flags-$w.log" 2>&1
  r=$?
  note "gdr-gpu-direct-test np2 GDR_DIRECT_ORDER=flags ${envs[*]} rc=$r (137: killed at the bound)"
  grep -E "(passed|FAILED|timed out|correctness done|order by)" "$O/flags-$w.log" | head -6 | tee -a "$O/summary.txt"
  [ $w = kernel-eager ] && [ $r -eq 0 ] && flags_ok=1
done

# 3b. A receive target's registration per operation against cached, device
# memory (an IPC export per registration on the software NIC).
if [ -x "$bin/gdr-reg-cost" ] && [ "$(left 8)" -ge 6 ]; then
  GDR_IB_PROVIDER=softnic timeout -s KILL $(left 8) "$bin/gdr-reg-cost" --device 50 >"$O/reg-cost-device.log" 2>&1
  note "gdr-reg-cost --device 50 rc=$?"
  tee -a "$O/summary.txt" <"$O/reg-cost-device.log"
fi

# 4. The bench, a round at a time while time is left.
paths=direct,staged
[ $flags_ok = 1 ] && paths=direct,staged,flags
bench_rounds $paths 30 14
note "overall status $status after $(( $(date +%s) - T0 )) s of GPU time"
exit $status
