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
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0  # never NVLink multicast
B=build-gpu-run
O=${OUT:-$B/out-sealed}
mkdir -p "$O"
MPI="mpirun --allow-run-as-root --oversubscribe -np"
status=0
note() { echo "$*" | tee -a "$O/summary.txt"; }
{ nvidia-smi --query-gpu=index,name,driver_version --format=csv; lscpu | head -20; git log --oneline -1 2>/dev/null; } >"$O/machine.txt" 2>&1

t0=$(date +%s)
cmake -S . -B "$B" -G Ninja -DGDR_ENABLE_IB=OFF -DCMAKE_BUILD_TYPE=Release >"$O/build.log" 2>&1 &&
  ninja -C "$B" -j32 gdr-gpu-test gdr-bench gdrcoll >>"$O/build.log" 2>&1
rc=$?
note "build rc=$rc in $(( $(date +%s) - t0 )) s"
if [ $rc -ne 0 ]; then tail -40 "$O/build.log"; exit $rc; fi

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

# The staged path's own checks (caller not blocked, order, a peer that
# never joins releases the stream), against this build.
if nvcc -O2 -arch=sm_90 -ccbin mpicxx -Iinclude scripts/gpu/staged_check.cu -o "$B/bin/gdr-staged-check" \
     -L"$B/lib" -lgdrcoll -Xlinker -rpath -Xlinker "$PWD/$B/lib" >>"$O/build.log" 2>&1; then
  timeout 120 $MPI 2 "$B/bin/gdr-staged-check" >"$O/staged-check.log" 2>&1
  r=$?
  note "staged checks np=2 rc=$r"
  grep -E "rank|staged checks" "$O/staged-check.log" | head -20 | tee -a "$O/summary.txt"
  [ $r -ne 0 ] && status=$r
else
  note "staged_check build failed"
fi

bench() {  # name, env..., -- bench args...
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  echo "## $name: ${envs[*]} GDR_TRANSPORT=socket gdr-bench $*" >>"$O/bench.log"
  env "${envs[@]}" GDR_TRANSPORT=socket timeout 120 $MPI 2 "$B/bin/gdr-bench" "$@" >"$O/bench-$name.txt" 2>&1
  note "bench $name rc=$?"
  cat "$O/bench-$name.txt" >>"$O/bench.log"
}
C="--mem cuda --check --min 64K --max ${GDR_SEALED_MAX:-128M} --iters 10 --warmup 3"
for coll in allgather bcast alltoall sendrecv allreduce; do
  for enc in 0 1; do bench "$coll-enc$enc" GDR_ENCRYPT=$enc -- $coll $C; done
done
# Helper threads left on the one core mpirun binds each rank to (before the
# fix: the progress thread ran only when the scheduler tick preempted the
# caller's spinning cudaStreamSynchronize).
bench allreduce-inherit GDR_HELPER_AFFINITY=inherit GDR_ENCRYPT=0 -- allreduce $C
# Larger segments (fewer kernel launches and handshakes per byte) and more
# CPU crypto workers for the all-reduce (sealed on the CPU by the transport).
if [ -z "${GDR_SEALED_SHORT:-}" ]; then
  for coll in allgather sendrecv; do
    bench "$coll-seg4M-enc0" GDR_STAGED_CHUNK_BYTES=4194304 GDR_ENCRYPT=0 -- $coll $C
    bench "$coll-seg4M-enc1" GDR_STAGED_CHUNK_BYTES=4194304 GDR_ENCRYPT=1 -- $coll $C
  done
  bench allreduce-threads16-enc1 GDR_ENCRYPT_THREADS=16 GDR_ENCRYPT=1 -- allreduce $C
fi
echo "== allreduce, GDR_HELPER_AFFINITY=inherit (us) vs auto (us)" | tee -a "$O/summary.txt"
awk 'NR == FNR { if ($1 ~ /^[0-9]+$/) a[$1] = $3; next }
     ($1 ~ /^[0-9]+$/) && ($1 in a) { printf "%12d %12.1f %12.1f\n", $1, a[$1], $3 }' \
  "$O/bench-allreduce-inherit.txt" "$O/bench-allreduce-enc0.txt" | tee -a "$O/summary.txt"
mpirun --allow-run-as-root -np 2 --report-bindings true 2>&1 | head -4 | tee -a "$O/summary.txt"
# Side by side: size, avg us with GDR_ENCRYPT=0 and 1, their ratio.
pairs="allgather bcast alltoall sendrecv allreduce"
[ -z "${GDR_SEALED_SHORT:-}" ] && pairs="$pairs allgather-seg4M sendrecv-seg4M"
for coll in $pairs; do
  echo "== $coll: size(B) plain(us) encrypted(us) enc/plain" | tee -a "$O/summary.txt"
  awk 'NR == FNR { if ($1 ~ /^[0-9]+$/) plain[$1] = $3; next }
       ($1 ~ /^[0-9]+$/) && ($1 in plain) { printf "%12d %12.1f %12.1f %6.2f\n", $1, plain[$1], $3, $3 / plain[$1] }' \
    "$O/bench-$coll-enc0.txt" "$O/bench-$coll-enc1.txt" | tee -a "$O/summary.txt"
done
if [ -f "$O/bench-allreduce-threads16-enc1.txt" ]; then
  echo "== allreduce encrypted: GDR_ENCRYPT_THREADS default (us) vs 16 (us)" | tee -a "$O/summary.txt"
  awk 'NR == FNR { if ($1 ~ /^[0-9]+$/) a[$1] = $3; next }
       ($1 ~ /^[0-9]+$/) && ($1 in a) { printf "%12d %12.1f %12.1f\n", $1, a[$1], $3 }' \
    "$O/bench-allreduce-enc1.txt" "$O/bench-allreduce-threads16-enc1.txt" | tee -a "$O/summary.txt"
fi
note "done, status $status"
tar czf "$O/logs.tgz" -C "$O" $(cd "$O" && ls *.log *.txt 2>/dev/null)
exit $status
