# Sourced by scripts/gpu/<part>.sh: the shared set-up of a run on the lent
# GPU machine. Sets B (build dir), O (logs: $OUT, or $B/out-<part>), MPI,
# status, t_start; defines note (echo + summary), gpu_build (configure
# Release without verbs for sm_90 and build the named targets; exits on
# failure), seconds_left and run_ctest (one ctest test in what is left of
# the call), run_staged_check and bench_staged. Never NVLink multicast (the
# machine requires it).
#
# A part that sets GPU_ARCHIVE=1 before sourcing gathers its logs in the
# build tree (a run's logs are its own); $OUT then gets only summary.txt
# (part_save, after each step, so a call cut short still says what ran) and
# at the end $GPU_PART.tgz with every log (part_finish).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
FINAL=
if [ -n "${GPU_ARCHIVE:-}" ]; then
  FINAL=${OUT:-}
  unset OUT
fi
B=${GDR_GPU_BUILD:-build-gpu-run}
O=${OUT:-$B/out-$GPU_PART}
mkdir -p "$O"
[ -n "${GPU_ARCHIVE:-}" ] && rm -f "$O"/*.log "$O"/rc-* "$O/summary.txt"
MPI="mpirun --allow-run-as-root --oversubscribe -np"
status=0
t_start=$(date +%s)
note() { echo "$*" | tee -a "$O/summary.txt"; }

part_save() {
  if [ -n "$FINAL" ]; then mkdir -p "$FINAL" && cp "$O/summary.txt" "$FINAL/summary.txt"; fi
}

# The part's last line, the summary and the archive; exits with the status.
part_finish() {
  note "$GPU_PART: status $status, $(( $(date +%s) - t_start )) s in all"
  part_save
  if [ -n "$FINAL" ]; then tar czf "$FINAL/$GPU_PART.tgz" -C "$O" .; fi
  exit $status
}

gpu_build() {  # targets...
  local t0 rc
  t0=$(date +%s)
  cmake -S . -B "$B" -G Ninja -DGDR_ENABLE_IB=OFF -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    >"$O/build.log" 2>&1 &&
    ninja -C "$B" -j32 "$@" >>"$O/build.log" 2>&1
  rc=$?
  note "build rc=$rc in $(( $(date +%s) - t0 )) s"
  if [ $rc -ne 0 ]; then
    tail -40 "$O/build.log" | tee -a "$O/summary.txt"
    status=$rc
    part_finish
  fi
}

# Seconds left of the call's budget (GPU_BUDGET_S, 330 s: a call may run 6
# minutes) since the part started.
seconds_left() { echo $(( ${GPU_BUDGET_S:-330} - ($(date +%s) - t_start) )); }

# One ctest test in what is left of the budget, skipped when under `need`
# seconds are left; a test cut by the budget has no verdict.
run_ctest() {  # name need
  local left r t0
  left=$(seconds_left)
  if [ "$left" -lt "$2" ]; then note "SKIP $1 ($left s left)"; return; fi
  t0=$(date +%s)
  (cd "$B" && timeout -k 5 "$left" ctest -R "^$1\$" --output-on-failure) >"$O/$1.log" 2>&1
  r=$?
  if [ $r -eq 124 ] || [ $r -eq 137 ]; then
    note "CUT $1 at the time budget ($left s): no verdict"
  else
    if grep -q "Not Run\|No tests were found" "$O/$1.log"; then r=1; fi
    note "$([ $r -eq 0 ] && echo PASS || echo FAIL) $1 rc=$r in $(( $(date +%s) - t0 )) s"
    if [ $r -ne 0 ]; then
      status=1
      grep -iE "fail|error|mismatch" "$O/$1.log" | head -8 | cut -c1-300 | tee -a "$O/summary.txt"
    fi
  fi
  part_save
}

# The staged path's own checks (tests/gpu/gpu_staged_check.cc), 2 ranks.
run_staged_check() {
  local r
  timeout 120 $MPI 2 "$B/bin/gdr-gpu-staged-check" >"$O/staged-check.log" 2>&1
  r=$?
  note "staged checks np=2 rc=$r"
  grep -E "rank|staged checks" "$O/staged-check.log" | head -20 | tee -a "$O/summary.txt"
  [ $r -ne 0 ] && status=$r
}

# bench_staged NAME [VAR=VALUE...] -- gdr-bench args: two ranks on the
# staged path (GDR_TRANSPORT=socket), output in $O/bench-NAME.txt.
bench_staged() {
  local name=$1 envs=()
  shift
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  echo "## $name: ${envs[*]} GDR_TRANSPORT=socket gdr-bench $*" >>"$O/bench.log"
  env "${envs[@]}" GDR_TRANSPORT=socket timeout 200 $MPI 2 "$B/bin/gdr-bench" "$@" >"$O/bench-$name.txt" 2>&1
  note "bench $name rc=$?"
  cat "$O/bench-$name.txt" >>"$O/bench.log"
}

# onerank_interleaved RUNS OURS: the one-rank out-of-place nccl-api-bench,
# real NCCL and ours (the libnccl.so.2 at OURS) interleaved RUNS times, one
# process each (two processes of one binary differ by up to 25 % here), then
# the medians per size (scripts/gpu/onerank_medians.py) into the summary.
onerank_interleaved() {
  local run coll lib envs
  for run in $(seq "$1"); do
    for coll in alltoall reducescatter allreduce allgather; do
      for lib in real ours; do
        envs=(); [ $lib = ours ] && envs=(-x LD_PRELOAD="$2")
        rm -f "$O/id"
        timeout 60 $MPI 1 "${envs[@]}" "$B/bin/nccl-api-bench" $coll --min 512K --max 16M --mode env \
          --id-file "$O/id" --inplace 0 >"$O/onerank-$coll-$lib-$run.txt" 2>&1
      done
    done
  done
  python3 scripts/gpu/onerank_medians.py "$O" | tee -a "$O/summary.txt"
}
