#!/usr/bin/env bash
# The NCCL drop-in under PyTorch, in one call on the GPU machine (repo root):
#
#   bash scripts/gpu/torch.sh
#
#  1. builds gdrcoll (Release, sm_90, -j16): libnccl.so.2, the NCCL-API and
#     gpu tests, nccl-api-bench;
#  2. checks the library itself: exported names, NEEDED lists (no MPI, no
#     shared CUDA runtime);
#  3. our NCCL-API tests (host buffers, forked ranks; device buffers np 1, 2);
#  4. PyTorch with our libnccl.so.2 preloaded: import torch, then
#     tests/torch/dist_check.py under torchrun (world size 1, and 2 ranks
#     sharing GPU 0; 2 GPUs too where present), lazy and eager init;
#  5. nccl-api-bench with one rank, real NCCL and ours in the same run:
#     in-place all-reduce (< 2 us wanted at every size) and every
#     collective out of place (>= 0.95x the real NCCL from 1 MiB wanted);
#  6. the gpu suite (gdr-gpu-test --quick np 1, np 2 on one GPU, the staged
#     checks, one process on every GPU), last since it takes longest.
# Every step is bounded by timeout(1) and the whole by BUDGET (530 s); logs go
# to $OUT (default build-gpu-run/out-torch); a summary table ends the output.
GPU_PART=torch
. "$(dirname "$0")/common.sh"  # B, O, MPI ("... -np"), status, NVLink multicast off
OURS="$PWD/$B/lib/nccl-compat/libnccl.so.2"
ROWS="$O/rows.txt"
: >"$ROWS"
T_START=$(date +%s)

# log NAME: the log file of step NAME (spaces and slashes become _).
log() { local f=${1// /_}; echo "$O/${f//\//_}.log"; }
# step NAME SECONDS CMD...: runs CMD under timeout, logs to $(log NAME), adds a row.
# The whole script stays within BUDGET seconds (the device call's limit is
# 600): a step gets at most what is left, and none starts in the last 20 s.
BUDGET=${BUDGET:-530}
step() {
  local name=$1 limit=$2 t0 r left
  shift 2
  t0=$(date +%s)
  left=$(( BUDGET - (t0 - T_START) ))
  if [ $left -lt 20 ]; then
    printf '%-44s %-7s (out of time)\n' "$name" "NOT RUN" | tee -a "$ROWS"
    status=1
    return 1
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  timeout "$limit" "$@" >"$(log "$name")" 2>&1
  r=$?
  local verdict=PASS
  [ $r -eq 124 ] && verdict=TIMEOUT
  [ $r -ne 0 ] && [ $r -ne 124 ] && verdict=FAIL
  [ $r -eq 77 ] && verdict=SKIP
  printf '%-44s %-7s rc=%-3s %4ss\n' "$name" "$verdict" "$r" "$(( $(date +%s) - t0 ))" | tee -a "$ROWS"
  if [ "$verdict" = FAIL ] || [ "$verdict" = TIMEOUT ]; then
    status=1
    grep -E "FAIL|Error|error" "$(log "$name")" | head -8 | sed 's/^/      /'
  fi
  return $r
}

{ nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv; nvidia-smi topo -m
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'
  ls -l /usr/include/nccl.h; ldconfig -p | grep libnccl; mpirun --version | head -1; nproc; uptime; } \
  >"$O/machine.txt" 2>&1
head -3 "$O/machine.txt"
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)

# ---- 1. build --------------------------------------------------------------
TARGETS="gdr_nccl gdrcoll gdr-nccl-api-test gdr-nccl-api-test-sysheader gdr-nccl-gpu-test gdr-nccl-gpu-test-ours
  nccl-api-bench gdr-gpu-test gdr-gpu-multidev-test gdr-gpu-staged-check gdr-gpu-device-copy-test"
step build 330 bash -c "cmake -S . -B '$B' -G Ninja -DGDR_ENABLE_IB=OFF -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 && ninja -C '$B' -j16 $(echo $TARGETS)" ||
  { tail -30 "$(log build)"; cat "$ROWS"; exit 1; }

# ---- 2. the library itself ---------------------------------------------------
step exports 30 tests/compat/check_exports.sh "$OURS" src/compat/nccl/exports.txt
step needed-libnccl 30 tests/compat/check_needed.sh "$OURS" 'libmpi|libcudart|libopen-'
step needed-libgdrcoll 30 tests/compat/check_needed.sh "$B/lib/libgdrcoll.so" 'libmpi|libopen-'

# ---- 3. our NCCL-API tests --------------------------------------------------
export GDR_TIMEOUT_MS=60000
for np in 2 3; do
  step "nccl-api host np$np" 90 env LD_LIBRARY_PATH="$(dirname "$OURS")" "$B/bin/gdr-nccl-api-test" $np nccl-compat
done
step "nccl-api host sysheader np2" 90 env LD_LIBRARY_PATH="$(dirname "$OURS")" \
  "$B/bin/gdr-nccl-api-test-sysheader" 2 nccl-compat
for np in 1 2; do
  step "nccl-api gpu ours np$np" 120 "$B/bin/gdr-nccl-gpu-test-ours" $np
  step "nccl-api gpu sysheader preloaded np$np" 120 env LD_PRELOAD="$OURS" "$B/bin/gdr-nccl-gpu-test" $np
done
# ---- 4. PyTorch ---------------------------------------------------------------
export GDR_EXPECT_NCCL="$OURS"
step "torch import" 60 env LD_PRELOAD="$OURS" NCCL_DEBUG=INFO python3 -c \
  'import torch, torch.distributed as d; print("import ok", torch.__version__, torch.cuda.nccl.version(), d.is_nccl_available())'
# torchrun: the rendezvous is local (--standalone), the launcher preloads too.
torchrun_step() {  # name nproc init [env...]
  local name=$1 np=$2 init=$3
  shift 3
  step "$name" 150 env LD_PRELOAD="$OURS" GDR_DEBUG=INFO GDR_DEBUG_SUBSYS=INIT OMP_NUM_THREADS=1 "$@" \
    torchrun --standalone --nproc-per-node "$np" tests/torch/dist_check.py --init "$init"
  local f
  f=$(log "$name")
  [ -f "$f" ] || return 0  # not run (out of time): its row says so
  grep -h "CHECK" "$f" | grep -c " ok" | sed "s/^/      checks ok: /"
  grep -h "CHECK" "$f" | grep -E " (FAIL|skip)" | sed 's/^/      /' | head -12
  if grep -q "this is gdrcoll" "$f"; then
    grep -m1 -h "this is gdrcoll" "$f" | sed 's/^.*\(this is gdrcoll\)/      INFO: \1/'
  else
    printf '%-44s %-7s (no "this is gdrcoll" INFO line: not our library?)\n' "$name" FAIL | tee -a "$ROWS"
    status=1
  fi
}
for init in lazy eager; do
  torchrun_step "torch ws1 $init" 1 $init CUDA_VISIBLE_DEVICES=0
  torchrun_step "torch ws2 one GPU $init" 2 $init CUDA_VISIBLE_DEVICES=0
  if [ "$NGPU" -ge 2 ]; then torchrun_step "torch ws2 two GPUs $init" 2 $init CUDA_VISIBLE_DEVICES=0,1; fi
done

# ---- 5. nccl-api-bench, one rank: real NCCL and ours ---------------------------
bench() {  # name lib coll inplace
  local envs=()
  [ "$2" = ours ] && envs=(-x LD_PRELOAD="$OURS")
  rm -f "$O/id-$1"
  step "bench $1" 90 $MPI 1 "${envs[@]}" -x CUDA_VISIBLE_DEVICES=0 "$B/bin/nccl-api-bench" "$3" --min 8 \
    --max 256M --mode env --id-file "$O/id-$1" --inplace "$4"
  cp "$(log "bench $1")" "$O/bench-$1.txt" 2>/dev/null || : >"$O/bench-$1.txt"
}
TABLES="$O/compat-np1-tables.md"
: >"$TABLES"
for spec in allreduce:1 allreduce:0 allgather:0 reducescatter:0 alltoall:0 bcast:0; do
  coll=${spec%:*} ip=${spec#*:}
  tag=$coll$([ "$ip" = 1 ] && echo -inplace)
  bench "$tag-real" real "$coll" "$ip"
  bench "$tag-ours" ours "$coll" "$ip"
  {
    echo "### $tag, 1 rank"
    echo '| size (B) | NCCL time (us) | ours time (us) | NCCL time / ours |'
    echo '| ---: | ---: | ---: | ---: |'
    join <(awk '$1 ~ /^[0-9]+$/ {print $1, $3}' "$O/bench-$tag-real.txt" | sort -k1,1) \
         <(awk '$1 ~ /^[0-9]+$/ {print $1, $3}' "$O/bench-$tag-ours.txt" | sort -k1,1) |
      sort -n | awk '{printf "| %s | %.2f | %.2f | %.2f |\n", $1, $2, $3, ($3 > 0 ? $2 / $3 : 0)}'
    echo
  } >>"$TABLES"
done
# The targets: in-place all-reduce under 2 us at every size; out of place at
# least 0.95x NCCL's speed (NCCL time / ours >= 0.95) from 1 MiB.
# No rows at all (a failed run) is a failure too.
verdicts() {
  awk '$1 ~ /^[0-9]+$/ {n++; if ($3 >= 2.0) bad = bad " " $1 "B:" $3 "us"} END {print (!n ? "FAIL in-place allreduce: no data" : bad ? "FAIL in-place allreduce >= 2 us at" bad : "PASS in-place allreduce < 2 us at every size")}' \
    "$O/bench-allreduce-inplace-ours.txt"
  for tag in allreduce allgather reducescatter alltoall bcast; do
    join <(awk '$1 ~ /^[0-9]+$/ {print $1, $3}' "$O/bench-$tag-real.txt" | sort -k1,1) \
         <(awk '$1 ~ /^[0-9]+$/ {print $1, $3}' "$O/bench-$tag-ours.txt" | sort -k1,1) | sort -n |
      awk -v t=$tag '$1 >= 1048576 {n++; if ($3 <= 0 || $2 / $3 < 0.95) bad = bad sprintf(" %sB:%.2fx", $1, $3 > 0 ? $2 / $3 : 0)} END {print (!n ? "FAIL " t ": no data" : bad ? "INFO " t " out of place, one process each: < 0.95x NCCL at" bad : "INFO " t " out of place, one process each: >= 0.95x NCCL from 1 MiB")}'
  done
}
# The out-of-place rows above are one process per library, and two
# processes of one binary differ by up to 25 % on this machine (in one run
# the same code measured 0.84x there and 1.17x in one process): they are
# shown, but the 0.95x verdict is the one-process comparison below, whose
# own noise (the real library against a copy of itself) is 0.96-1.04x.
verdicts | tee "$O/bench-verdicts.txt"
# The same comparison in one process (scripts/gpu/onerank_ab.cc: both
# libraries loaded side by side, alternated batch by batch), free of the
# 25 % that separates two processes of one binary on this machine.
REAL=$(ldconfig -p | awk '/libnccl.so.2 / {print $NF; exit}')
step "one-rank copy checks" 60 "$B/bin/gdr-gpu-device-copy-test"
step "one-process A/B build" 60 nvcc -O2 -std=c++17 -o "$B/onerank_ab" scripts/gpu/onerank_ab.cc -ldl &&
  step "one-process A/B real vs ours" 60 taskset -c 2 "$B/onerank_ab" "$REAL" "$OURS" 200 15 &&
  awk '$2 ~ /^[0-9]+$/ && $2 >= 1048576 {c[$1]++; if ($5 + 0 < 0.95) bad[$1] = bad[$1] " " $2 "B:" $5}
       END {for (k in c) print (bad[k] ? "FAIL " k " out of place < 0.95x NCCL in one process at" bad[k] : "PASS " k " out of place >= 0.95x NCCL from 1 MiB, in one process")}' \
    "$(log "one-process A/B real vs ours")" | sort | tee -a "$O/bench-verdicts.txt"
grep -q '^FAIL' "$O/bench-verdicts.txt" && status=1

# ---- 6. the gpu suite last: it is the longest and the oldest part ----------
for np in 1 2; do
  step "gpu suite gdr-gpu-test np$np" 200 $MPI $np "$B/bin/gdr-gpu-test" --quick
done
step "gpu suite staged check np2" 90 $MPI 2 "$B/bin/gdr-gpu-staged-check"
step "gpu suite one process all GPUs" 120 "$B/bin/gdr-gpu-multidev-test" --quick


echo
echo "==== summary ($(( $(date +%s) - T_START )) s; logs in $O) ===="
cat "$ROWS"
cat "$O/bench-verdicts.txt"
echo "torch checks that failed or were skipped (rank, check, detail):"
cat "$O"/torch_*.log 2>/dev/null | grep -hE "^CHECK .* (FAIL|skip)" | sort | uniq -c | sort -rn | head -40
echo "bench tables: $TABLES"
echo "overall: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
exit $status
