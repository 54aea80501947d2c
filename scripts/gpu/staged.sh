#!/usr/bin/env bash
# The staged device path (GPU buffers through pinned host memory and the
# socket transport, pipelined by the progress thread), forced on one host
# with GDR_TRANSPORT=socket: builds into build-gpu-run, runs the GPU suite at
# np 1 and 2, the staged checks (scripts/gpu/staged_check.cu: the caller is
# not blocked, order, multi-segment, a peer that never joins), and the staged
# benchmarks beside NCCL. Logs under $OUT (or build-gpu-run/out-staged).
# Usage (repo root): scripts/gpu/staged.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
B=build-gpu-run
O=${OUT:-$B/out-staged}
mkdir -p "$O"
MPI="mpirun --allow-run-as-root --oversubscribe -np"
status=0
note() { echo "$*" | tee -a "$O/summary.txt"; }

t0=$(date +%s)
cmake -S . -B "$B" -G Ninja -DGDR_ENABLE_IB=OFF -DCMAKE_BUILD_TYPE=Release >"$O/build.log" 2>&1 &&
  ninja -C "$B" -j32 gdr-gpu-test gdr-bench gdrcoll >>"$O/build.log" 2>&1
rc=$?
note "build rc=$rc in $(( $(date +%s) - t0 )) s"
if [ $rc -ne 0 ]; then tail -40 "$O/build.log"; exit $rc; fi
nvcc -O2 -arch=sm_90 -ccbin mpicxx -Iinclude scripts/gpu/staged_check.cu -o "$B/bin/gdr-staged-check" \
  -L"$B/lib" -lgdrcoll -Xlinker -rpath -Xlinker "$PWD/$B/lib" >>"$O/build.log" 2>&1
note "staged_check build rc=$?"

for np in 1 2; do
  t0=$(date +%s)
  GDR_TRANSPORT=socket GDR_TIMEOUT_MS=60000 timeout 300 $MPI $np "$B/bin/gdr-gpu-test" --quick \
    >"$O/gpu-test-socket-np$np.log" 2>&1
  r=$?
  note "gpu tests (GDR_TRANSPORT=socket) np=$np rc=$r in $(( $(date +%s) - t0 )) s"
  grep -E "^\[|gpu tests" "$O/gpu-test-socket-np$np.log" | grep -v "^\[ ok" | tee -a "$O/summary.txt"
  grep -m5 -E "element|failed|error" "$O/gpu-test-socket-np$np.log"
  [ $r -ne 0 ] && status=$r
done

if [ -x "$B/bin/gdr-staged-check" ]; then
  timeout 120 $MPI 2 "$B/bin/gdr-staged-check" >"$O/staged-check.log" 2>&1
  r=$?
  note "staged checks np=2 rc=$r"
  grep -E "rank|staged checks" "$O/staged-check.log" | head -20 | tee -a "$O/summary.txt"
  [ $r -ne 0 ] && status=$r
fi

bench() {  # name, bench args...
  local name=$1; shift
  echo "## $name: GDR_TRANSPORT=socket gdr-bench $*" >>"$O/bench.log"
  GDR_TRANSPORT=socket timeout 200 $MPI 2 "$B/bin/gdr-bench" "$@" >"$O/bench-$name.txt" 2>&1
  note "bench $name rc=$?"
  cat "$O/bench-$name.txt" >>"$O/bench.log"
}
C="--mem cuda --check --compare nccl"
bench allreduce allreduce $C --min 8 --max 256M
bench sendrecv sendrecv $C --min 8 --max 64M
bench allgather allgather $C --min 1K --max 256M
# The segment size: the default (1 MiB) against 4 MiB on the large all-reduce.
GDR_STAGED_CHUNK_BYTES=4194304 bench allreduce-seg4M allreduce $C --min 1M --max 256M
note "done, status $status"
exit $status
