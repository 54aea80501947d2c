#!/usr/bin/env bash
# GPU AES-256-GCM on the lent GPU machine, in one go: builds the
# crypto test and benchmark into build-gpu-run, runs the test (GPU against
# OpenSSL: identical ciphertext and tags), compute-sanitizer memcheck on a
# short pass of it, and the throughput benchmark (GPU against OpenSSL on this
# machine's CPU, one thread and all cores). Logs under $OUT (or
# build-gpu-run/out). About 2 minutes after the build.
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0  # never NVLink multicast
B=${GDR_GPU_BUILD:-build-gpu-run}
O=${OUT:-$B/out}
mkdir -p "$O"
{ nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv; lscpu | head -20; } >"$O/crypto-machine.txt" 2>&1

t0=$(date +%s)
cmake -S . -B "$B" -G Ninja -DGDR_ENABLE_IB=OFF -DCMAKE_BUILD_TYPE=Release >"$O/crypto-build.log" 2>&1 &&
  ninja -C "$B" -j32 gdr-crypto-gpu-test gdr-crypto-bench >>"$O/crypto-build.log" 2>&1
rc=$?
echo "build rc=$rc in $(( $(date +%s) - t0 )) s"
if [ $rc -ne 0 ]; then tail -40 "$O/crypto-build.log"; exit $rc; fi

status=0
t0=$(date +%s)
CUDA_VISIBLE_DEVICES=0 timeout 240 "$B/bin/gdr-crypto-gpu-test" >"$O/crypto-test.log" 2>&1
r=$?
echo "crypto gpu test rc=$r in $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED)|^\[ +(OK|FAILED) +\]|Failure|skipped" "$O/crypto-test.log" | head -30
[ $r -ne 0 ] && status=$r

# The sanitizers slow kernels a lot: memcheck without the 64 MiB case,
# racecheck (shared memory) on the small cases only.
for tool in memcheck racecheck; do
  filter='*'
  [ $tool = racecheck ] && filter='GpuAesGcm.SpecTestCases:GpuAesGcm.BadArgumentsAreRefused'
  t0=$(date +%s)
  GDR_CRYPTO_TEST_QUICK=1 CUDA_VISIBLE_DEVICES=0 timeout 120 compute-sanitizer --tool $tool --error-exitcode 1 --print-limit 20 \
    "$B/bin/gdr-crypto-gpu-test" --gtest_filter="$filter" >"$O/crypto-$tool.log" 2>&1
  r=$?
  echo "compute-sanitizer $tool rc=$r in $(( $(date +%s) - t0 )) s"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)" "$O/crypto-$tool.log" | head -5
  [ $r -ne 0 ] && status=$r
done

t0=$(date +%s)
CUDA_VISIBLE_DEVICES=0 timeout 200 "$B/bin/gdr-crypto-bench" --min 64K --max 512M --ms 40 >"$O/crypto-bench.txt" 2>&1
r=$?
echo "crypto bench rc=$r in $(( $(date +%s) - t0 )) s"
cat "$O/crypto-bench.txt"
[ $r -ne 0 ] && status=$r
exit $status
