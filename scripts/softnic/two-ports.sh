#!/bin/sh
# two-ports.sh [--build-dir DIR] [REPEATS]
# Scenario 5 of bench/results/congestion.md through the software NIC (no
# VM, no RDMA NIC): rank 0 -> rank 1 send bandwidth (gdr-rdma-test bw, 1 MiB
# messages) with every port limited to RATE MB/s (GDR_SOFTNIC_PORT_MBPS):
# one port, two ports (aggregate against 2 x RATE), and two ports with
# rank 0's port 2 going down in the middle of the measured pass. Eager
# chunks (GDR_IB_ZCOPY_BYTES=0, 256 KiB) for all rows, so the failover row
# differs only by the failure; zero-copy rows as well for the aggregate.
# The same with two devices of one port each (GDR_SOFTNIC_DEVICES=2: separate
# keys, CQs and registrations), and softnic1 going down mid-pass.
# What it measures is the placement and the failover (hash balance, the
# credit window over two lanes), not a wire: the NIC is the CPU.
set -u
BUILD=build
if [ "${1:-}" = --build-dir ]; then BUILD=$2; shift 2; fi
REP=${1:-3}
RATE=${RATE:-100}
ITERS=${ITERS:-50}
BIN=$BUILD/bin/gdr-rdma-test
RUN=$(dirname "$0")/../../tests/rdma/run_ranks.sh
[ -x "$BIN" ] || { echo "no $BIN: build gdr-rdma-test first" >&2; exit 2; }
export GDR_IB_PROVIDER=softnic GDR_TRANSPORT=ib GDR_TIMEOUT_MS=60000 GDR_SOFTNIC_PORT_MBPS=$RATE \
       GDR_TEST_BW_ITERS=$ITERS GDR_IB_CHUNK=262144 GDR_IB_TIMEOUT=10
# rank 0's writes per pass: 4 chunks per message; the warm-up pass comes first
DOWN_AT=$((ITERS * 4 + ITERS * 2))
row() {  # row NAME PORTS QPS ZCOPY [extra env]; DEVS=2: two devices of PORTS each
  name=$1 ports=$2 qps=$3 z=$4; shift 4
  devs=${DEVS:-1}
  hca=softnic0; [ "$devs" = 2 ] && hca=softnic0,softnic1
  for i in $(seq 1 "$REP"); do
    out=$(env GDR_SOFTNIC_DEVICES="$devs" GDR_IB_HCA="$hca" GDR_SOFTNIC_PORTS="$ports" \
          GDR_IB_QPS_PER_PEER="$qps" GDR_IB_ZCOPY_BYTES="$z" "$@" "$RUN" 2 120 "$BIN" bw 2>&1)
    bw=$(echo "$out" | sed -n 's/.*bandwidth: .* = \([0-9.]*\) MB\/s.*/\1/p')
    down=$(echo "$out" | grep -c "WARN .*failed (")
    echo "| $name | $((ports * devs)) | $qps | ${bw:-FAILED} | $(awk -v b="${bw:-0}" -v p="$((ports * devs))" -v r="$RATE" 'BEGIN{printf "%.2f", b/(p*r)}') | $down | $(cut -d' ' -f1 /proc/loadavg) |"
    [ -n "$bw" ] || echo "$out" | tail -20 >&2
  done
}
echo "rate $RATE MB/s per port, $ITERS x 1 MiB per pass, $(nproc) cores"
echo "| run | ports (all devices) | QPs | MB/s | / (ports x rate) | failover warnings | load |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
row "one port, eager" 1 2 0
row "two ports, eager" 2 2 0
row "two ports, 4 QPs, eager" 2 4 0
row "two ports, zero-copy" 2 2 262144
row "two ports, port 2 down mid-pass, eager" 2 2 0 GDR_SOFTNIC_PORT_DOWN=2:$DOWN_AT
DEVS=2 row "two devices of one port, eager" 1 2 0
DEVS=2 row "two devices of one port, zero-copy" 1 2 262144
DEVS=2 row "two devices, softnic1 down mid-pass, eager" 1 2 0 GDR_SOFTNIC_PORT_DOWN=softnic1:1:$DOWN_AT
