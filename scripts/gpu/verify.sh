#!/usr/bin/env bash
# Short verification on the lent GPU machine, one call (~3 min after the
# build): the staged path's checks (scripts/gpu/staged_check.cu), the GPU
# AES-256-GCM test, a staged all-reduce with --check (device buffers,
# GDR_TRANSPORT=socket), and the same with GDR_ENCRYPT=1 for its cost.
# Usage (repo root): scripts/gpu/verify.sh; logs under $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0  # never NVLink multicast
B=${GDR_GPU_BUILD:-build-gpu-run}
O=${OUT:-$B/out-verify}
mkdir -p "$O"
MPI="mpirun --allow-run-as-root --oversubscribe -np"
t0=$(date +%s)
cmake -S . -B "$B" -G Ninja -DGDR_ENABLE_IB=OFF -DCMAKE_BUILD_TYPE=Release >"$O/build.log" 2>&1 &&
  ninja -C "$B" -j32 gdrcoll gdr-bench gdr-crypto-gpu-test >>"$O/build.log" 2>&1
rc=$?
echo "build rc=$rc in $(( $(date +%s) - t0 )) s"
[ $rc -ne 0 ] && { grep -m20 -E "error" "$O/build.log"; exit $rc; }
nvcc -O2 -arch=sm_90 -ccbin mpicxx -Iinclude scripts/gpu/staged_check.cu -o "$B/bin/gdr-staged-check" \
  -L"$B/lib" -lgdrcoll -Xlinker -rpath -Xlinker "$PWD/$B/lib" >>"$O/build.log" 2>&1 || echo "staged_check build failed"

t0=$(date +%s)
GDR_TIMEOUT_MS=20000 timeout 90 $MPI 2 "$B/bin/gdr-staged-check" >"$O/staged-check.txt" 2>&1
echo "staged checks np 2 rc=$? in $(( $(date +%s) - t0 )) s"
grep -E "^rank|staged checks" "$O/staged-check.txt" | cut -c1-220 | head -24

CUDA_VISIBLE_DEVICES=0 timeout 60 "$B/bin/gdr-crypto-gpu-test" >"$O/crypto-test.txt" 2>&1
echo "crypto gpu test rc=$?"
grep -E "FAILED|PASSED|Failure|differ" "$O/crypto-test.txt" | head -12

for enc in 0 1; do
  t0=$(date +%s)
  GDR_ENCRYPT=$enc GDR_TRANSPORT=socket timeout 90 $MPI 2 "$B/bin/gdr-bench" allreduce --mem cuda --check \
    --min 64K --max 64M --iters 5 --warmup 2 >"$O/staged-allreduce-enc$enc.txt" 2>&1
  echo "staged all-reduce GDR_ENCRYPT=$enc rc=$? in $(( $(date +%s) - t0 )) s"
  grep -E "^#|^ +[0-9]" "$O/staged-allreduce-enc$enc.txt" | cut -c1-130
done
