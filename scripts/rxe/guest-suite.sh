#!/bin/sh
# gdrcoll's rdma suite, run inside the VM between rxe0 and rxe1 (one rank
# per device: two "hosts"). Exit status: the number of failed steps.
up() { cut -d' ' -f1 /proc/uptime; }
FAILS=0; PASSES=0
step() {  # step NAME TIMEOUT_S CMD... ; prints the step's result line
    name=$1; to=$2; shift 2
    echo "===== [$name] $*"
    s=$(up); timeout -s KILL "$to" "$@"; rc=$?; e=$(up)
    t=$(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.1f", b-a}')
    if [ $rc -eq 0 ]; then PASSES=$((PASSES + 1)); r=PASS; else FAILS=$((FAILS + 1)); r="FAIL rc=$rc"; fi
    echo "===== [$name] $r in $t s"
}
T=/opt/gdr/gdr-rdma-test
R=/opt/gdr/run_ranks.sh
export GDR_TRANSPORT=ib GDR_TEST_EXPECT_TRANSPORT=ib RANK_HCAS="rxe0 rxe1" GDR_TIMEOUT_MS=60000
step devices 30 ibv_devices
step colls_2qp_adaptive 240 $R 2 200 $T colls
step colls_4qp 240 env GDR_IB_QPS_PER_PEER=4 $R 2 200 $T colls
step colls_1qp_chunk4k 240 env GDR_IB_QPS_PER_PEER=1 GDR_IB_CHUNK=4096 GDR_IB_SLOTS=4 $R 2 200 $T colls
step regcache 120 env GDR_IB_REG_CACHE=1 $R 2 100 $T regcache
step peer_killed 120 env GDR_TIMEOUT_MS=30000 $R 2 100 $T kill
if [ "${GDR_RXE_QUICK:-0}" != 1 ]; then
    step colls_4ranks 300 $R 4 280 $T colls
fi
echo "===== suite: $PASSES passed, $FAILS failed"
exit $FAILS
