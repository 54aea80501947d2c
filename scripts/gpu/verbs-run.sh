# Sourced by the GPU scripts that build with verbs (the software NIC):
# direct-check.sh, gpudirect-bench.sh. Set before sourcing: PART (the name
# of the logs' folder and tarball), BUDGET (seconds of the whole call),
# BUILD (the default build folder). Sets B, OUT, O, T0, status; defines
# left N (seconds left of the budget, at most N, at least 5), note (echo +
# summary) and a trap packing $O into $OUT/$PART.tgz with $OUT/summary.txt;
# finds the verbs headers (VERBS, below); bench_rounds (below). Never
# NVLink multicast.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export NCCL_NVLS_ENABLE=0
B=${GDR_GPU_BUILD:-$BUILD}
OUT=${OUT:-$B/out}
O=$OUT/$PART
mkdir -p "$O" "$B"
status=0
T0=$(date +%s)
left() { local l=$(( BUDGET - ($(date +%s) - T0) )); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 5 ] && l=5; echo $l; }
note() { echo "$*" | tee -a "$O/summary.txt"; }
pack() { tar -C "$OUT" -czf "$OUT/$PART.tgz" "$PART" && cp "$O/summary.txt" "$OUT/summary.txt"; }
trap pack EXIT

# The verbs headers (all the build needs: libibverbs is dlopened): the
# system's, else a folder gpu-verbs-include/ (or $GDR_VERBS_INCLUDE) holding
# infiniband/verbs.h; VERBS holds the cmake flag for the latter. A script
# that only runs an already built tree sets NEED_VERBS_HEADERS=0.
VERBS=()
vi=${GDR_VERBS_INCLUDE:-$PWD/gpu-verbs-include}
if [ -f /usr/include/infiniband/verbs.h ]; then :
elif [ -f "$vi/infiniband/verbs.h" ]; then VERBS=(-DIBVERBS_INCLUDE_DIR="$vi")
elif [ "${NEED_VERBS_HEADERS:-1}" = 1 ]; then
  note "no verbs headers: the software NIC needs them to build (apt-get install libibverbs-dev)"
  exit 1
fi
note "$(nvidia-smi -L 2>/dev/null | wc -l) GPU(s), $(nproc) cores; commit $(git rev-parse --short HEAD 2>/dev/null)"

# bench_rounds PATHS BOUND LEAST: gdr-gpu-direct-bench a round at a time
# (each bounded by BOUND s) while at least LEAST s are left, into
# $O/bench-N.txt; then the load and the medians table. Sets status on a
# failed round.
bench_rounds() {
  local paths=$1 bound=$2 least=$3 n=0 f r
  while [ "$(left "$bound")" -ge "$least" ]; do
    n=$((n + 1))
    f=$O/bench-$n
    timeout -s KILL "$(left "$bound")" "$B/bin/gdr-gpu-direct-bench" --rounds 1 --paths "$paths" \
      >"$f.txt" 2>"$f.err"
    r=$?
    note "bench round $n ($paths) rc=$r after $(( $(date +%s) - T0 )) s"
    grep -E "passed|FAILED|skipped" "$f.txt" | tee -a "$O/summary.txt"
    grep -E "check failed|exception" "$f.err" | head -4 | tee -a "$O/summary.txt"
    [ $r -ne 0 ] && { status=$r; break; }
  done
  note "load: $(uptime)"
  python3 scripts/gpu/gpudirect_table.py "$O"/bench-*.txt 2>&1 | tee -a "$O/summary.txt"
}
