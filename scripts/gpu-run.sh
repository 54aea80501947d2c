#!/usr/bin/env bash
# Builds gdrcoll and runs the GPU tests and the device benchmark in one go,
# for the lent 2xH200 machine: one process per GPU under mpirun, and one
# process driving every GPU (gdr-gpu-multidev-test). Logs go under $OUT
# (or build-gpu-run/out). Usage: scripts/gpu-run.sh [tests|bench|sanitize|all] [quick]
# (SANITIZE=1 adds the compute-sanitizer step to any of them).
set -uo pipefail
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
what=${1:-all}
quick=${2:-}
B=${GDR_GPU_BUILD:-build-gpu-run}
O=${OUT:-$B/out}
mkdir -p "$O"
MPI="mpirun --allow-run-as-root --oversubscribe -np"
NP=${NP:-2}

{ nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv; nvidia-smi topo -m; } >"$O/machine.txt" 2>&1
cat "$O/machine.txt" | head -8

t0=$(date +%s)
cmake -S . -B "$B" -G Ninja -DGDR_ENABLE_IB=OFF -DCMAKE_BUILD_TYPE=Release >"$O/build.log" 2>&1 &&
  ninja -C "$B" -j32 gdr-gpu-test gdr-gpu-multidev-test gdr-bench >>"$O/build.log" 2>&1
rc=$?
echo "build rc=$rc in $(( $(date +%s) - t0 )) s"
if [ $rc -ne 0 ]; then tail -40 "$O/build.log"; exit $rc; fi

status=0
if [ "$what" = tests ] || [ "$what" = all ]; then
  for np in ${TEST_NPS:-1 $NP}; do
    t0=$(date +%s)
    GDR_TIMEOUT_MS=60000 timeout 400 $MPI $np "$B/bin/gdr-gpu-test" $quick >"$O/gpu-test-np$np.log" 2>&1
    r=$?
    echo "gpu tests np=$np rc=$r in $(( $(date +%s) - t0 )) s"
    grep -E "^\[|gpu tests" "$O/gpu-test-np$np.log" | grep -v "^\[ ok" ; grep -m5 -E "element|failed|error" "$O/gpu-test-np$np.log"
    [ $r -ne 0 ] && status=$r
  done
  # One process, one communicator per GPU (made inside a group); rc 77 = skipped.
  t0=$(date +%s)
  GDR_TIMEOUT_MS=60000 timeout 400 "$B/bin/gdr-gpu-multidev-test" $quick >"$O/gpu-multidev.log" 2>&1
  r=$?
  echo "gpu tests one process, all GPUs rc=$r in $(( $(date +%s) - t0 )) s"
  grep -E "^\[|gpu multi|skipped" "$O/gpu-multidev.log" | grep -v "^\[ ok" ; grep -m5 -E "element|failed|error" "$O/gpu-multidev.log"
  [ $r -ne 0 ] && [ $r -ne 77 ] && status=$r
fi

if [ "$what" = bench ] || [ "$what" = all ]; then
  bench() {  # name, env..., -- bench args
    local name=$1; shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    echo "## $name: env ${envs[*]} gdr-bench $*" >>"$O/bench.log"
    env "${envs[@]}" timeout 300 $MPI $NP "$B/bin/gdr-bench" "$@" >"$B/bench-$name.txt" 2>&1
    echo "bench $name rc=$?"
    cat "$B/bench-$name.txt" >>"$O/bench.log"
  }
  C="--mem cuda --check --compare nccl"
  if [ "${BENCH_SET:-full}" = full ]; then
    bench allreduce GDR_X=1 -- allreduce $C --min 8 --max 512M
    bench allreduce-graph GDR_X=1 -- allreduce $C --graph --min 8 --max 4M
    bench allgather GDR_X=1 -- allgather $C --min 1K --max 512M
    bench alltoall GDR_X=1 -- alltoall $C --min 1K --max 512M
    bench reduce_scatter GDR_X=1 -- reducescatter $C --min 1K --max 512M
    bench broadcast GDR_X=1 -- bcast $C --min 8 --max 512M
    bench sendrecv GDR_X=1 -- sendrecv $C --min 8 --max 64M
    bench allreduce-staged GDR_TRANSPORT=socket -- allreduce $C --min 8 --max 64M
  fi
  if [ "${BENCH_SET:-full}" = sweep ]; then  # staging chunk of the large all-reduce
    bench allreduce GDR_X=1 -- allreduce $C --min 1M --max 512M
    bench allreduce-c64k GDR_CUDA_IPC_CHUNK_BYTES=65536 -- allreduce $C --min 1M --max 512M
    bench allreduce-c256k GDR_CUDA_IPC_CHUNK_BYTES=262144 -- allreduce $C --min 1M --max 512M
    bench allreduce-c32k GDR_CUDA_IPC_CHUNK_BYTES=32768 -- allreduce $C --min 1M --max 512M
  fi
  if [ "${BENCH_SET:-full}" = exchange ]; then  # grid of large all-gather / all-to-all / broadcast
    for coll in allgather alltoall bcast; do
      bench $coll GDR_CUDA_IPC_EXCHANGE_BLOCKS=128 -- $coll $C --min 1M --max 512M
      bench $coll-b256 GDR_CUDA_IPC_EXCHANGE_BLOCKS=256 -- $coll $C --min 1M --max 512M
    done
  fi
  if [ "${BENCH_SET:-full}" = allreduce ]; then
    bench allreduce GDR_X=1 -- allreduce $C --min 8 --max 512M
    bench allreduce-bf16 GDR_X=1 -- allreduce $C --type bfloat16 --min 1M --max 512M
  fi
  if [ "${BENCH_SET:-full}" = full ]; then
  # Variants of the all-reduce kernel (grid size, algorithm, staging chunk).
  bench allreduce-b256 GDR_CUDA_IPC_BLOCKS=256 -- allreduce $C --min 1M --max 512M
  bench allreduce-twoshot GDR_ALGO=allreduce=twoshot -- allreduce $C --min 1M --max 512M
  bench allreduce-twoshot-b256 GDR_ALGO=allreduce=twoshot GDR_CUDA_IPC_BLOCKS=256 -- allreduce $C --min 1M --max 512M
  bench allreduce-c512k GDR_CUDA_IPC_CHUNK_BYTES=524288 -- allreduce $C --min 1M --max 512M
  bench allreduce-b256-c512k GDR_CUDA_IPC_BLOCKS=256 GDR_CUDA_IPC_CHUNK_BYTES=524288 -- allreduce $C --min 1M --max 512M
  fi
  grep -hE "^#|^  " "$B"/bench-allreduce.txt | cut -c1-150
fi
if [ "$what" = sanitize ] || [ "${SANITIZE:-0}" = 1 ]; then
  # compute-sanitizer on the kernels of every collective (short runs: the
  # tools slow kernels down a lot). Sizes span the one-shot/two-shot and the
  # narrow/wide exchange grids where they fit in the time.
  san() {  # tool, name, bench args...
    local tool=$1 name=$2; shift 2
    timeout 200 $MPI $NP compute-sanitizer --tool $tool --print-limit 20 "$B/bin/gdr-bench" "$@" --mem cuda \
      --check --iters 2 --warmup 1 >"$B/san-$tool-$name.txt" 2>&1
    echo "compute-sanitizer $tool ($name: $*) rc=$?"
    grep -E "ERROR SUMMARY|========= [A-Z]" "$B/san-$tool-$name.txt" | sort | uniq -c | head -8
    { echo "## compute-sanitizer --tool $tool gdr-bench $*"; cat "$B/san-$tool-$name.txt"; } >>"$O/sanitize.log"
  }
  for tool in memcheck racecheck; do
    san $tool allreduce allreduce --min 8 --max 64M
    san $tool alltoall alltoall --min 1K --max 16M
    san $tool allgather allgather --min 8 --max 4M
    san $tool reducescatter reducescatter --min 8 --max 4M
    san $tool bcast bcast --min 8 --max 4M
    san $tool reduce reduce --min 8 --max 4M
    san $tool sendrecv sendrecv --min 8 --max 4M
  done
fi
exit $status
