#!/usr/bin/env bash
# Builds gdrcoll and runs the GPU tests and the device benchmark in one go,
# for the lent 2xH200 machine (one process per GPU). Logs go under $OUT
# (or build-gpu-run/out). Usage: scripts/gpu-run.sh [tests|bench|all] [quick]
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
  ninja -C "$B" -j32 gdr-gpu-test gdr-bench >>"$O/build.log" 2>&1
rc=$?
echo "build rc=$rc in $(( $(date +%s) - t0 )) s"
if [ $rc -ne 0 ]; then tail -40 "$O/build.log"; exit $rc; fi

status=0
if [ "$what" = tests ] || [ "$what" = all ]; then
  for np in 1 $NP; do
    t0=$(date +%s)
    GDR_TIMEOUT_MS=60000 timeout 400 $MPI $np "$B/bin/gdr-gpu-test" $quick >"$O/gpu-test-np$np.log" 2>&1
    r=$?
    echo "gpu tests np=$np rc=$r in $(( $(date +%s) - t0 )) s"
    grep -E "^\[|gpu tests" "$O/gpu-test-np$np.log" | grep -v "^\[ ok" ; grep -m5 -E "element|failed|error" "$O/gpu-test-np$np.log"
    [ $r -ne 0 ] && status=$r
  done
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
  bench allreduce GDR_X=1 -- allreduce $C --min 8 --max 512M
  bench sendrecv GDR_X=1 -- sendrecv $C --min 8 --max 64M
  bench allgather GDR_X=1 -- allgather $C --min 1K --max 512M
  bench alltoall GDR_X=1 -- alltoall $C --min 1K --max 512M
  bench reduce_scatter GDR_X=1 -- reducescatter $C --min 1K --max 512M
  bench broadcast GDR_X=1 -- bcast $C --min 8 --max 512M
  bench allreduce-bf16 GDR_X=1 -- allreduce $C --type bfloat16 --min 8 --max 512M
  bench allreduce-twoshot GDR_CUDA_IPC_ALGO=twoshot -- allreduce $C --min 1M --max 512M
  bench allreduce-b128 GDR_CUDA_IPC_BLOCKS=128 -- allreduce $C --min 1M --max 512M
  bench allreduce-staged GDR_TRANSPORT=socket -- allreduce $C --min 8 --max 64M
  grep -hE "^#|^  " "$B"/bench-allreduce.txt | cut -c1-150
fi
exit $status
