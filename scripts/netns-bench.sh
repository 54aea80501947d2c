#!/usr/bin/env bash
# GDR_ENCRYPT cost between two network namespaces on this machine (needs root):
# a veth pair joins namespaces gdrnsA (10.77.0.1) and gdrnsB (10.77.0.2); one
# rank runs in each (scripts/netns_allreduce.cc, compiled here against
# BUILD/lib/libgdrcoll.so; gdrcoll's TCP bootstrap, the unique id handed over
# in a file, since mpirun's launcher cannot reach ranks in other namespaces),
# and gdrcoll's socket transport carries the data over the veth.
# For each link rate (RATES: "none" = the bare veth, else a tc tbf rate on both
# ends, e.g. 10gbit 1gbit) and GDR_ENCRYPT=0/1, all-reduce float32 sum from
# MIN to MAX bytes is run RUNS times (interleaved); per-run CSVs go to OUT_DIR
# and the median per size is printed as a markdown table. Cleans up on exit.
#   BUILD (build) RATES ("none 10gbit 1gbit") RUNS (3) MIN (1024) MAX (67108864)
#   OUT_DIR (/tmp/gdr-netns) EXTRA_ENV (more VAR=val for both ranks)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${BUILD:-build}"
RATES="${RATES:-none 10gbit 1gbit}"
RUNS="${RUNS:-3}"
MIN="${MIN:-1024}" MAX="${MAX:-67108864}"
OUT_DIR="${OUT_DIR:-/tmp/gdr-netns}"
A=gdrnsA B=gdrnsB
[ "$(id -u)" -eq 0 ] || { echo "netns-bench: needs root (ip netns, tc)" >&2; exit 1; }
[ -e "$BUILD/lib/libgdrcoll.so" ] || { echo "netns-bench: $BUILD/lib/libgdrcoll.so not built" >&2; exit 1; }
mkdir -p "$OUT_DIR"
BIN="$OUT_DIR/netns_allreduce"
g++ -O2 -std=c++17 -Iinclude scripts/netns_allreduce.cc -L"$BUILD/lib" -lgdrcoll -Wl,-rpath,"$(realpath "$BUILD/lib")" \
  -o "$BIN"

cleanup() {
  ip netns del "$A" 2>/dev/null || true
  ip netns del "$B" 2>/dev/null || true  # deleting a namespace removes its end of the veth
}
trap cleanup EXIT INT TERM
cleanup
ip netns add "$A"
ip netns add "$B"
ip link add vethA netns "$A" type veth peer name vethB netns "$B"
ip -n "$A" addr add 10.77.0.1/24 dev vethA
ip -n "$B" addr add 10.77.0.2/24 dev vethB
for ns in "$A" "$B"; do ip -n "$ns" link set lo up; done
ip -n "$A" link set vethA up
ip -n "$B" link set vethB up
ip -n "$A" route get 10.77.0.2 >/dev/null

setRate() {  # $1: none or a tc rate
  for pair in "$A vethA" "$B vethB"; do
    set -- "$1" $pair
    ip netns exec "$2" tc qdisc del dev "$3" root 2>/dev/null || true
    # burst: about 1 ms at the rate (at least 128 KiB: veth hands tbf 64 KiB
    # GSO packets); latency bounds the queue.
    local burst=128kb
    case "$1" in *gbit) [ "${1%gbit}" -ge 8 ] && burst=$(( ${1%gbit} * 125 ))kb ;; esac
    [ "$1" = none ] || ip netns exec "$2" tc qdisc add dev "$3" root tbf rate "$1" burst "$burst" latency 50ms
  done
}

echo "# $(date -u +%FT%TZ) $(uname -r); load: $(cut -d' ' -f1-3 /proc/loadavg)"
runPair() {  # $1 enc, $2 csv, $3 log
  local id="$OUT_DIR/id.$$"
  rm -f "$id"
  env GDR_TRANSPORT=socket GDR_HOST_ID=nsB GDR_ENCRYPT="$1" ${EXTRA_ENV:-} \
    ip netns exec "$B" "$BIN" 1 "$id" "$MIN" "$MAX" /dev/null >"$3.r1" 2>&1 &
  local pid=$!
  env GDR_TRANSPORT=socket GDR_HOST_ID=nsA GDR_ENCRYPT="$1" ${EXTRA_ENV:-} \
    ip netns exec "$A" "$BIN" 0 "$id" "$MIN" "$MAX" "$2" >"$3" 2>&1 || { cat "$3" "$3.r1" >&2; kill "$pid"; exit 1; }
  wait "$pid" || { cat "$3.r1" >&2; exit 1; }
  rm -f "$id"
}
for rate in $RATES; do
  setRate "$rate"
  for run in $(seq 1 "$RUNS"); do
    for enc in 0 1; do
      runPair "$enc" "$OUT_DIR/ar-$rate-enc$enc-run$run.csv" "$OUT_DIR/ar-$rate-enc$enc-run$run.log"
      echo "# done rate=$rate enc=$enc run=$run load: $(cut -d' ' -f1-3 /proc/loadavg)"
    done
  done
done

# Median avg_us per size over the runs, off vs on.
python3 - "$OUT_DIR" "$RUNS" $RATES <<'PY'
import csv, statistics, sys
out, runs, rates = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def load(rate, enc):
    per = {}
    for r in range(1, runs + 1):
        with open(f"{out}/ar-{rate}-enc{enc}-run{r}.csv") as f:
            for row in csv.DictReader(f):
                per.setdefault(int(row["size"]), []).append(float(row["avg_us"]))
    return {s: statistics.median(v) for s, v in per.items()}
def human(b):
    for u, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k: return f"{b // k} {u}"
    return f"{b} B"
for rate in rates:
    off, on = load(rate, 0), load(rate, 1)
    print(f"\nlink: {'veth, no limit' if rate == 'none' else 'veth + tbf ' + rate}\n")
    print("| size | off (us) | on (us) | on/off | cost | busbw off (GB/s) | busbw on (GB/s) |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for s in sorted(off):
        bw = lambda t: s / t / 1e3  # np 2: busbw = algbw
        print(f"| {human(s)} | {off[s]:.1f} | {on[s]:.1f} | {on[s]/off[s]:.2f} | {100*(on[s]/off[s]-1):+.0f}% | {bw(off[s]):.2f} | {bw(on[s]):.2f} |")
PY
