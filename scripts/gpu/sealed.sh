#!/usr/bin/env bash
# GDR_ENCRYPT on device buffers, the staged path forced on one host
# (GDR_TRANSPORT=socket), on the lent GPU machine: builds into build-gpu-run,
# runs the GPU suite at np 2 (its last sections: the encrypted staged path,
# GPU-sealed data movement, a flipped bit refused), then gdr-bench on device
# buffers with GDR_ENCRYPT=0 and 1 interleaved per collective, the all-reduce
# with helper threads left on mpirun's one-core binding
# (GDR_HELPER_AFFINITY=inherit), larger segments and more crypto workers.
# Logs under $OUT (or build-gpu-run/out-sealed).
# Usage (repo root): scripts/gpu/sealed.sh
GPU_PART=sealed
source "$(dirname "$0")/common.sh"
{ nvidia-smi --query-gpu=index,name,driver_version --format=csv; lscpu | head -20; git log --oneline -1 2>/dev/null; } >"$O/machine.txt" 2>&1

gpu_build gdr-gpu-test gdr-gpu-staged-check gdr-bench gdrcoll

g++ -O2 -std=c++17 scripts/gpu/timer_probe.cc -o "$B/timer-probe" && "$B/timer-probe" | tee "$O/timer-probe.txt"

if [ -z "${GDR_SEALED_SKIP_TEST:-}" ]; then
t0=$(date +%s)
GDR_TIMEOUT_MS=60000 timeout ${GDR_SEALED_TEST_S:-240} $MPI 2 "$B/bin/gdr-gpu-test" --quick >"$O/gpu-test-np2.log" 2>&1
r=$?
note "gpu tests np=2 rc=$r in $(( $(date +%s) - t0 )) s"
grep -E "^\[|gpu tests|sealed tamper" "$O/gpu-test-np2.log" | tee -a "$O/summary.txt"
grep -m5 -E "element|error" "$O/gpu-test-np2.log"
[ $r -ne 0 ] && status=$r
fi

run_staged_check

C="--mem cuda --check --min 64K --max ${GDR_SEALED_MAX:-128M} --iters 10 --warmup 3"
for coll in allgather bcast alltoall sendrecv allreduce; do
  for enc in 0 1; do bench_staged "$coll-enc$enc" GDR_ENCRYPT=$enc -- $coll $C; done
done
# Helper threads left on the one core mpirun binds each rank to (before the
# fix: the progress thread ran only when the scheduler tick preempted the
# caller's spinning cudaStreamSynchronize).
bench_staged allreduce-inherit GDR_HELPER_AFFINITY=inherit GDR_ENCRYPT=0 -- allreduce $C
# Larger segments (fewer kernel launches and handshakes per byte) and more
# CPU crypto workers for the all-reduce (sealed on the CPU by the transport).
if [ -z "${GDR_SEALED_SHORT:-}" ]; then
  for coll in allgather sendrecv; do
    bench_staged "$coll-seg4M-enc0" GDR_STAGED_CHUNK_BYTES=4194304 GDR_ENCRYPT=0 -- $coll $C
    bench_staged "$coll-seg4M-enc1" GDR_STAGED_CHUNK_BYTES=4194304 GDR_ENCRYPT=1 -- $coll $C
  done
  bench_staged allreduce-threads16-enc1 GDR_ENCRYPT_THREADS=16 GDR_ENCRYPT=1 -- allreduce $C
fi
# compare TITLE A B: per size, avg us of bench-A and bench-B and B / A.
compare() {
  echo "== $1" | tee -a "$O/summary.txt"
  [ -f "$O/bench-$2.txt" ] && [ -f "$O/bench-$3.txt" ] || return 0
  awk 'NR == FNR { if ($1 ~ /^[0-9]+$/) a[$1] = $3; next }
       ($1 ~ /^[0-9]+$/) && ($1 in a) { printf "%12d %12.1f %12.1f %6.2f\n", $1, a[$1], $3, $3 / a[$1] }' \
    "$O/bench-$2.txt" "$O/bench-$3.txt" | tee -a "$O/summary.txt"
}
compare "allreduce: size(B) GDR_HELPER_AFFINITY=inherit(us) auto(us) auto/inherit" allreduce-inherit allreduce-enc0
mpirun --allow-run-as-root -np 2 --report-bindings true 2>&1 | head -4 | tee -a "$O/summary.txt"
pairs="allgather bcast alltoall sendrecv allreduce"
[ -z "${GDR_SEALED_SHORT:-}" ] && pairs="$pairs allgather-seg4M sendrecv-seg4M"
for coll in $pairs; do compare "$coll: size(B) plain(us) encrypted(us) enc/plain" "$coll-enc0" "$coll-enc1"; done
compare "allreduce encrypted: size(B) GDR_ENCRYPT_THREADS default(us) 16(us) ratio" allreduce-enc1 allreduce-threads16-enc1
note "done, status $status"
tar czf "$O/logs.tgz" -C "$O" $(cd "$O" && ls *.log *.txt 2>/dev/null)
exit $status
