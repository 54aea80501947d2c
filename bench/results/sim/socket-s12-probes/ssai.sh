#!/bin/bash
# np 4 shaped, tcp_slow_start_after_idle as $1 in every emulated host.
set -euo pipefail
source /work/wt12-19/scripts/cluster/lib.sh
export LD_LIBRARY_PATH=/tmp/i19-sockbin
OUT=${OUT:-/tmp/i19-ssai$1}; mkdir -p $OUT
cluster_up 4 >/dev/null
for i in 1 2 3 4; do cluster_rate $i 1gbit; ip netns exec "$(_cluster_ns $i)" sysctl -qw net.ipv4.tcp_slow_start_after_idle=$1; done
for coll in alltoall allreduce; do
  echo "$coll before: $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/load.txt
  CLUSTER_TIMEOUT=60 cluster_mpirun -np 4 --map-by node -x LD_LIBRARY_PATH --mca btl self,vader,tcp \
    /tmp/i19-sockbin/gdr-bench $coll --min 1m --max 16m --iters 100 --warmup 10 --csv $OUT/$coll.csv >/dev/null
  echo "$coll after: $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/load.txt
done
cluster_down
