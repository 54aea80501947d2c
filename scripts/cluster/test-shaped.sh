#!/usr/bin/env bash
# Cluster test: host 3's link limited to 100 Mbit/s each way (tc tbf).
# gdr-bench all-reduce (ring forced) across 3 hosts x 2 ranks must be correct
# and its busbw within 10% of what the limit allows the ring:
#   ring all-reduce: every rank sends 2(n-1)/n x S bytes to its successor,
#   and busbw = S/t x 2(n-1)/n, so busbw is the rate of the slowest hop. Two
#   hops of the host-by-host ring cross host 3's link, one in each direction
#   (host 2 -> host 3 and host 3 -> host 1), each shaped to 100 Mbit/s. Of
#   each 1514-byte Ethernet frame tbf counts, 1448 bytes are payload (MTU
#   1500 - 20 IP - 32 TCP with timestamps), so the ceiling is
#   100e6 / 8 x 1448 / 1514 = 11.955 MB/s = 0.011955 GB/s.
# The check allows 0.9x to 1.1x of that at 8 MiB.
#   test-shaped.sh BUILD
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD="$(realpath "${1:-build}")"
source scripts/cluster/lib.sh
cluster_skip_unless_able
cluster_up 3
cluster_rate 3 100mbit
log="$CLUSTER_DIR/shaped.log"
CLUSTER_TIMEOUT=120 cluster_mpirun -np 6 --map-by node -x GDR_ALGO=allreduce=ring \
  "$BUILD/bin/gdr-bench" allreduce --check --min 8m --max 8m --iters 3 --warmup 1 >"$log" 2>&1 ||
  { cat "$log"; fail "gdr-bench"; }
cat "$log"
python3 - "$log" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
n = int(next(l for l in lines if l.startswith("# gdr-bench")).split("ranks")[1].split()[0])
rows = [l.split() for l in lines if l.strip() and l.split()[0].isdigit()]
assert rows, "no result row"
# busbw from the average time (the table rounds it to 1 MB/s)
size, avg_us, check = int(rows[-1][0]), float(rows[-1][2]), rows[-1][7]
busbw = size / avg_us / 1e3 * 2 * (n - 1) / n
limit = 100e6 / 8 * 1448 / 1514 / 1e9
print(f"size {size} busbw {busbw:.5f} GB/s, the limit allows {limit:.5f} GB/s: {busbw / limit:.3f}x")
if check != "ok": sys.exit("FAIL: result check " + check)
if not 0.9 * limit <= busbw <= 1.1 * limit: sys.exit("FAIL: busbw not within 10% of the shaped link's ceiling")
print("PASS: correct, busbw within 10% of the 100 Mbit/s ceiling")
PY
