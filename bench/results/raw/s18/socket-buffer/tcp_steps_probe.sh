cd /work/main; source scripts/cluster/lib.sh; n=4
cluster_up $n >/dev/null; for i in $(seq 1 $n); do cluster_rate $i ${RATE:-250mbit}; done
base=$CLUSTER_NET
for p in pairwise ring; do
  for i in $(seq 1 $n); do cluster_exec $i timeout 120 env SNDBUF=${SNDBUF:-4194304} python3 /tmp/pw.py $((i-1)) $n $base $p ${SIZE:-1048576} ${CALLS:-10} & done; wait
done
cluster_down
