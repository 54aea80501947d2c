# Sourced by the GPU scripts that build with verbs (the software NIC):
# direct-check.sh, gpudirect-bench.sh. Set before sourcing: PART (the name
# of the logs' folder and tarball), BUDGET (seconds of the whole call),
# BUILD (the default build folder). Sets B, OUT, O, T0, status; defines
# left N (seconds left of the budget, at most N, at least 5), note (echo +
# summary) and a trap packing $O into $OUT/$PART.tgz with $OUT/summary.txt;
# stops at once without the verbs headers. Never NVLink multicast.
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

if [ ! -f /usr/include/infiniband/verbs.h ]; then
  note "no verbs headers: the software NIC needs them to build (apt-get install libibverbs-dev)"
  exit 1
fi
note "$(nvidia-smi -L 2>/dev/null | wc -l) GPU(s), $(nproc) cores; commit $(git rev-parse --short HEAD 2>/dev/null)"
