#!/usr/bin/env bash
# Drop-in compatibility on the GPU machine, in one call from the
# repo root: builds the compat targets into build-gpu-run, then
#  1. the device NCCL-API test (tests/compat/nccl_gpu_test.cc), built against
#     the SYSTEM nccl.h (linked to the system libnccl) and against OURS,
#     on 1 and 2 GPUs: one process per GPU under mpirun, and one process
#     driving both GPUs (ncclCommInitAll + grouped calls); with the real
#     NCCL, with ours on LD_LIBRARY_PATH and with ours through LD_PRELOAD.
#     Every run checks its exact cases itself (every type incl. fp8, every
#     op, PreMulSum with host and device scalars) and dumps all outputs;
#     each run of ours is compared with the real NCCL's dump of the same
#     seed (integers, max/min and exact cases identical; floats identical or
#     within one ulp of the type, tests/compat/gpu_compare.h).
#  2. the PMPI program on device buffers with and without LD_PRELOAD.
#  3. nccl-api-bench through the NCCL API, real NCCL vs ours, 2 GPUs,
#     8 B .. 512 MiB: tables for bench/results/compat.md.
# Logs under $OUT (default build-gpu-run/out-compat); SUMMARY.txt at the end.
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
B=${GDR_GPU_BUILD:-build-gpu-run}
O=${OUT:-$B/out-compat}
mkdir -p "$O"
OURS="$PWD/$B/lib/nccl-compat"
MPI="mpirun --allow-run-as-root --oversubscribe --bind-to none"
SUM="$O/SUMMARY.txt"
: >"$SUM"
status=0
note() { echo "$*" | tee -a "$SUM"; }
result() {  # name rc
  if [ "$2" -eq 0 ]; then note "PASS $1"; else note "FAIL $1 (rc $2)"; status=1; fi
}

{ nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv; nvidia-smi topo -m;
  ls -l /usr/include/nccl.h; ldconfig -p | grep libnccl; mpirun --version | head -1; } >"$O/machine.txt" 2>&1
head -4 "$O/machine.txt"

t0=$(date +%s)
cmake -S . -B "$B" -G Ninja -DGDR_ENABLE_IB=OFF -DCMAKE_BUILD_TYPE=Release >"$O/build.log" 2>&1 &&
  ninja -C "$B" -j32 gdr_nccl gdrcoll_mpi gdr-nccl-gpu-test gdr-nccl-gpu-test-ours gdr-pmpi-prog nccl-api-bench \
    >>"$O/build.log" 2>&1
rc=$?
note "build rc=$rc in $(( $(date +%s) - t0 )) s"
if [ $rc -ne 0 ]; then tail -40 "$O/build.log"; exit $rc; fi
ldd "$B/bin/gdr-nccl-gpu-test" | grep nccl >>"$O/machine.txt"

SEED=${SEED:-$(( (RANDOM << 15) ^ RANDOM ))}
note "seed $SEED"
SYS="$B/bin/gdr-nccl-gpu-test"   # system nccl.h, system libnccl
OWN="$B/bin/gdr-nccl-gpu-test-ours"  # our nccl.h, our libnccl

# run NAME np mode lib binary; lib: real or linked (as built), ours (LD_LIBRARY_PATH), preload (LD_PRELOAD)
run() {
  local name=$1 np=$2 mode=$3 lib=$4 bin=$5 envs=() launch=()
  case $lib in
    ours) envs=(LD_LIBRARY_PATH="$OURS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}") ;;
    preload) envs=(LD_PRELOAD="$OURS/libnccl.so.2") ;;
  esac
  local args=("$np" --seed "$SEED" --mode "$mode" --dump "$O/dump-$name")
  if [ "$mode" = env ]; then
    rm -f "$O/id-$name"
    launch=($MPI -np "$np")
    for e in "${envs[@]}"; do launch+=(-x "$e"); done
    args+=(--id-file "$O/id-$name")
    timeout 180 "${launch[@]}" "$bin" "${args[@]}" >"$O/$name.log" 2>&1
  else
    env "${envs[@]}" timeout 180 "$bin" "${args[@]}" >"$O/$name.log" 2>&1
  fi
  local r=$?
  grep -m1 libnccl "$O/$name.log" | sed 's/^/    /' | tee -a "$SUM"
  result "$name" $r
  [ $r -ne 0 ] && grep -m8 -vE "^libnccl|^PASS" "$O/$name.log" | sed 's/^/    /'
}
compare() {  # name-of-ours name-of-real np
  local r=0
  for ((k = 0; k < $3; ++k)); do
    "$SYS" --compare "$O/dump-$2.rank$k" "$O/dump-$1.rank$k" >>"$O/compare-$1.log" 2>&1 || r=1
  done
  tail -1 "$O/compare-$1.log" | sed 's/^/    /' | tee -a "$SUM"
  result "compare $1 vs $2" $r
}

note "== 1. device NCCL-API test: real NCCL vs ours"
for np in 1 2; do
  for mode in env initall; do
    [ "$mode" = initall ] && [ "$np" -eq 1 ] && continue
    real=real-$mode-np$np
    run "$real" $np $mode real "$SYS"
    for variant in sysheader-ours:ours:$SYS ourheader:linked:$OWN sysheader-preload:preload:$SYS; do
      IFS=: read -r tag lib bin <<<"$variant"
      run "$tag-$mode-np$np" $np $mode $lib "$bin"
      compare "$tag-$mode-np$np" "$real" $np
    done
  done
done

note "== 2. PMPI program on device buffers, with and without LD_PRELOAD"
PMPI_LIB="$B/lib/libgdrcoll_mpi.so"
[ -f "$PMPI_LIB" ] || PMPI_LIB=$(find "$B" -name 'libgdrcoll_mpi.so' | head -1)
for np in 1 2; do
  # Without the layer Open MPI may not be CUDA-aware: the reference run keeps
  # host buffers; with it, device buffers (PMPI_PROG_DEVICE=1 in the program).
  timeout 120 $MPI -np $np "$B/bin/gdr-pmpi-prog" "$SEED" >"$O/pmpi-plain-np$np.log" 2>&1
  result "pmpi plain host buffers np$np" $?
  timeout 120 $MPI -np $np -x LD_PRELOAD="$PWD/$PMPI_LIB" -x PMPI_PROG_DEVICE=1 -x GDR_DEBUG=INFO \
    -x GDR_DEBUG_SUBSYS=INIT,COLL "$B/bin/gdr-pmpi-prog" "$SEED" >"$O/pmpi-preload-np$np.log" 2>&1
  result "pmpi LD_PRELOAD device buffers np$np" $?
  if diff <(grep -E '^(digest|errors)' "$O/pmpi-plain-np$np.log") \
          <(grep -E '^(digest|errors)' "$O/pmpi-preload-np$np.log") >"$O/pmpi-diff-np$np.log"; then
    result "pmpi digests equal np$np" 0
  else
    result "pmpi digests equal np$np" 1
  fi
  grep -m1 'PMPI summary' "$O/pmpi-preload-np$np.log" | sed 's/^/    /' | tee -a "$SUM"
done

note "== 3. nccl-api-bench, 2 GPUs, one process per GPU (float32 sum, out of place)"
for coll in allreduce allgather reducescatter alltoall bcast; do
  for lib in real ours; do
    envs=()
    [ $lib = ours ] && envs=(-x LD_LIBRARY_PATH="$OURS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    rm -f "$O/id-bench"
    timeout 120 $MPI -np 2 "${envs[@]}" "$B/bin/nccl-api-bench" $coll --min 8 --max 512M --mode env \
      --id-file "$O/id-bench" >"$O/bench-$coll-$lib.txt" 2>&1
    result "bench $coll $lib" $?
  done
  # One table per collective: size, then time and busbw of each, and the ratio.
  {
    echo "### $coll"
    echo '| size (B) | NCCL time (us) | NCCL busbw (GB/s) | ours time (us) | ours busbw (GB/s) | NCCL time / ours |'
    echo '| ---: | ---: | ---: | ---: | ---: | ---: |'
    join <(grep -vE '^#|^$' "$O/bench-$coll-real.txt" | awk '$1 ~ /^[0-9]+$/ {print $1, $3, $5}' | sort -k1,1) \
         <(grep -vE '^#|^$' "$O/bench-$coll-ours.txt" | awk '$1 ~ /^[0-9]+$/ {print $1, $3, $5}' | sort -k1,1) |
      sort -n | awk '{printf "| %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", $1, $2, $3, $4, $5, ($4 > 0 ? $2 / $4 : 0)}'
    echo
  } >>"$O/compat-tables.md"
done
head -2 "$O/bench-allreduce-real.txt" "$O/bench-allreduce-ours.txt" | tee -a "$SUM"
note "tables for bench/results/compat.md: $O/compat-tables.md"
note "overall: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
exit $status
