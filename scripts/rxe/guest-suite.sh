#!/bin/sh
# gdrcoll's rdma suite, run inside the VM between rxe0 and rxe1 (one rank
# per device: two "hosts"). Exit status: the number of failed steps.
up() { cut -d' ' -f1 /proc/uptime; }
FAILS=0; PASSES=0
step() {  # step NAME TIMEOUT_S CMD... ; prints the step's result line
    name=$1; to=$2; shift 2
    if [ -n "${GDR_RXE_ONLY:-}" ]; then
        case ",$GDR_RXE_ONLY," in *",$name,"*) ;; *) return 0 ;; esac
    fi
    echo "===== [$name] $*"
    s=$(up); timeout -s KILL "$to" "$@"; rc=$?; e=$(up)
    t=$(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.1f", b-a}')
    if [ $rc -eq 0 ]; then PASSES=$((PASSES + 1)); r=PASS; else FAILS=$((FAILS + 1)); r="FAIL rc=$rc"; fi
    # A wait that timed out left a status report (what each rank waited on).
    for f in /tmp/gdr-status-*.txt; do
        [ -f "$f" ] || continue
        [ $rc -ne 0 ] && sed "s#^#  rank | status: #" "$f" | head -60
        rm -f "$f"
    done
    echo "===== [$name] $r in $t s"
}
T=/opt/gdr/gdr-rdma-test
R=/opt/gdr/run_ranks.sh
export GDR_TRANSPORT=ib GDR_TEST_EXPECT_TRANSPORT=ib RANK_HCAS="rxe0 rxe1" GDR_TIMEOUT_MS=60000
step devices 30 ibv_devices
step colls_2qp_adaptive 240 $R 2 200 $T colls
step colls_4qp 240 env GDR_IB_QPS_PER_PEER=4 $R 2 200 $T colls
step colls_1qp_chunk4k 240 env GDR_IB_QPS_PER_PEER=1 GDR_IB_CHUNK=4096 GDR_IB_SLOTS=4 $R 2 200 $T colls
# Transport auto between two "hosts" (GDR_HOST_ID differs): must pick ib.
step auto_picks_ib 240 env GDR_TRANSPORT=auto RANK_HOSTS="hostA hostB" $R 2 200 $T colls
step regcache 120 env $R 2 100 $T regcache
# Zero-copy receives (rendezvous): every collective x type x op both sides of
# the threshold; above it the data-moving ones copy nothing with the CPU.
step zcopy 300 $R 2 280 $T zcopy
step zcopy_4qp_chunk64k 300 env GDR_IB_QPS_PER_PEER=4 GDR_IB_ZCOPY_CHUNK=65536 $R 2 280 $T zcopy
step eager_only 240 env GDR_IB_ZCOPY_BYTES=0 $R 2 200 $T colls
step mismatch 60 $R 2 50 $T mismatch
step error_completion 60 $R 2 50 $T badkey
step peer_killed 120 env GDR_TIMEOUT_MS=30000 $R 2 100 $T kill
# Two NICs per host (rxe0+rxe2 and rxe1+rxe3), 4 QPs alternating over them;
# rank 0 sets veth2 (rxe2's link) down after its 4th collective: the QPs on
# rxe2/rxe3 fail (retries: GDR_IB_TIMEOUT=14, about 0.5 s), their chunks go
# on rxe0/rxe1, every result is checked.
step failover_2devs 240 env RANK_HCAS="rxe0,rxe2 rxe1,rxe3" GDR_IB_QPS_PER_PEER=4 GDR_IB_TIMEOUT=14 \
    GDR_IB_ZCOPY_BYTES=0 GDR_TEST_RAILS=2 GDR_TEST_EXPECT_DEVICES=2 GDR_TEST_DOWN_AT=4 \
    GDR_TEST_DOWN_CMD="ip link set veth2 down" $R 2 200 $T failover
ip link set veth2 up 2>/dev/null
# The same with zero-copy from 64 KiB (64 KiB writes), the link going down
# GDR_RXE_DOWN_DELAY into the 5th collective (kernel argument
# gdr.env=GDR_RXE_DOWN_DELAY=S; default 0.02 s for the eager step, 0.07 s
# for the zero-copy one: at 0.005-0.05 s no zero-copy write was in flight
# on rxe2 in any boot, at 0.07 s one was in 4 of 4), so zero-copy
# writes are in flight on rxe2: they are settled with the peer over the
# side connection and written again (ib_zfailover.cc); then under
# GDR_ENCRYPT=1, eager, where the failed QPs' chunks are asked about before
# any is written again.
step failover_2devs_async 240 env RANK_HCAS="rxe0,rxe2 rxe1,rxe3" GDR_IB_QPS_PER_PEER=4 GDR_IB_TIMEOUT=14 \
    GDR_IB_ZCOPY_BYTES=0 GDR_TEST_RAILS=2 GDR_TEST_EXPECT_DEVICES=2 GDR_TEST_DOWN_AT=4 \
    GDR_TEST_DOWN_CMD="(sleep ${GDR_RXE_DOWN_DELAY:-0.02}; ip link set veth2 down) &" $R 2 200 $T failover
ip link set veth2 up 2>/dev/null
step failover_2devs_zcopy 240 env RANK_HCAS="rxe0,rxe2 rxe1,rxe3" GDR_IB_QPS_PER_PEER=4 GDR_IB_TIMEOUT=14 \
    GDR_IB_ZCOPY_BYTES=65536 GDR_IB_ZCOPY_CHUNK=65536 GDR_TEST_RAILS=2 GDR_TEST_EXPECT_DEVICES=2 GDR_TEST_DOWN_AT=4 \
    GDR_TEST_DOWN_CMD="(sleep ${GDR_RXE_DOWN_DELAY:-0.07}; ip link set veth2 down) &" $R 2 200 $T failover
ip link set veth2 up 2>/dev/null
step failover_2devs_enc 240 env RANK_HCAS="rxe0,rxe2 rxe1,rxe3" GDR_IB_QPS_PER_PEER=4 GDR_IB_TIMEOUT=14 \
    GDR_IB_ZCOPY_BYTES=0 GDR_ENCRYPT=1 GDR_TEST_RAILS=2 GDR_TEST_EXPECT_DEVICES=2 GDR_TEST_DOWN_AT=4 \
    GDR_TEST_DOWN_CMD="ip link set veth2 down" $R 2 200 $T failover
ip link set veth2 up 2>/dev/null
# GDR_FAULT over rxe, np 3 (rank 1 on rxe1): rank 1 dies, closes or corrupts in its second all-reduce; 0 and 2
# must fail within 2 x GDR_TIMEOUT_MS naming it and the step, a kill as gdrRemoteError (seen, not timed out on).
for f in kill:first kill:middle kill:last close:middle corrupt:middle; do
    step fault_${f%:*}_${f#*:} 60 env GDR_TIMEOUT_MS=10000 GDR_FAULT=1:3:${f#*:}:${f%:*} $R 3 50 $T fault
done
# Bandwidth (informational: the VM is slow, only the ratio matters): the same
# 1 MiB writes by ib_write_bw between the two devices, then gdrcoll's send.
if [ -z "${GDR_RXE_ONLY:-}" ] || case ",$GDR_RXE_ONLY," in *,bandwidth,*) true ;; *) false ;; esac; then
    G0=$(grep -l '0000:0000:0000:0000:0000:ffff:' /sys/class/infiniband/rxe0/ports/1/gids/* | head -1)
    G1=$(grep -l '0000:0000:0000:0000:0000:ffff:' /sys/class/infiniband/rxe1/ports/1/gids/* | head -1)
    echo "===== [bandwidth] ib_write_bw -s 1048576 -n 100, rxe0 <- rxe1"
    timeout 120 ib_write_bw -d rxe0 -x "${G0##*/}" -s 1048576 -n 100 -F > /tmp/bw_srv.txt 2>&1 &
    sleep 1
    timeout 120 ib_write_bw -d rxe1 -x "${G1##*/}" -s 1048576 -n 100 -F 127.0.0.1 2>&1 | grep -A1 'BW average' | sed 's/^/  ib_write_bw| /'
    wait
    timeout 120 env GDR_TEST_BW_BYTES=1048576 GDR_TEST_BW_ITERS=100 $R 2 110 $T bw | grep -E 'bandwidth|ib to|rc='
    echo "===== [bandwidth] the same, eager (GDR_IB_ZCOPY_BYTES=0: one receive copy)"
    timeout 120 env GDR_IB_ZCOPY_BYTES=0 GDR_TEST_BW_BYTES=1048576 GDR_TEST_BW_ITERS=100 $R 2 110 $T bw | grep -E 'bandwidth|rc='
    echo "===== [bandwidth] the same, zero-copy, buffers registered per operation (no gdrCommRegister)"
    timeout 120 env GDR_TEST_BW_NOREG=1 GDR_TEST_BW_BYTES=1048576 GDR_TEST_BW_ITERS=100 $R 2 110 $T bw | grep -E 'bandwidth|rc='
fi
# Where zero-copy starts to pay (informational, for GDR_IB_ZCOPY_BYTES):
# each size eager (threshold 0) and zero-copy (threshold = the size).
if [ -n "${GDR_RXE_ONLY:-}" ] && case ",$GDR_RXE_ONLY," in *,zsweep,*) true ;; *) false ;; esac; then
    for b in 32768 65536 131072 262144 524288 1048576; do
        for z in 0 $b; do
            printf '===== [zsweep] bytes=%s zcopy_from=%s ' "$b" "$z"
            timeout 120 env GDR_IB_ZCOPY_BYTES=$z GDR_TEST_BW_BYTES=$b GDR_TEST_BW_ITERS=${GDR_RXE_SWEEP_ITERS:-60} \
                $R 2 110 $T bw | grep -E 'rank 0\] bandwidth' | sed 's/.*= //'
        done
    done
fi
# GDR_ENCRYPT=1 over verbs: every chunk AES-256-GCM sealed; the
# driver checks the data and that the ib endpoints really are encrypted.
step enc_colls_2qp 300 env GDR_ENCRYPT=1 GDR_IB_QPS_PER_PEER=2 $R 2 280 $T colls
step enc_tamper 60 env GDR_ENCRYPT=1 GDR_TIMEOUT_MS=20000 $R 2 50 $T tamper
step enc_presealed 60 env GDR_ENCRYPT=1 $R 2 50 $T presealed
# All-reduce bandwidth, plain then encrypted, in this boot (informational:
# TCG emulates the CPU, so the crypto is CPU-bound and far slower than on a
# real host; for bench/results/security.md).
if [ -z "${GDR_RXE_ONLY:-}" ] || [ "$GDR_RXE_ONLY" = enc_bandwidth ]; then
    echo "===== [enc_bandwidth] all-reduce float32 sum, 2 ranks, 2 QPs, GDR_ENCRYPT=0 then 1"
    for e in 0 1; do
        timeout 300 env GDR_ENCRYPT=$e GDR_IB_QPS_PER_PEER=2 GDR_TEST_BW_SIZES=65536,1048576,4194304 \
            GDR_TEST_BW_ITERS=${GDR_RXE_BW_ITERS:-10} $R 2 290 $T arbw | grep -E 'ARBW|FAIL|rc='
    done > /tmp/arbw.txt 2>&1
    cat /tmp/arbw.txt
    awk '/ARBW/ { for (i = 1; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
                  bw[v["bytes"], v["encrypt"]] = v["algbw_MBps"]; us[v["bytes"], v["encrypt"]] = v["us"]
                  if (!(v["bytes"] in seen)) { seen[v["bytes"]] = 1; order[n++] = v["bytes"] } }
         END { print "===== [enc_bandwidth] | bytes | plain us | encrypted us | plain algbw MB/s | encrypted algbw MB/s | encrypted / plain time |"
               print "===== [enc_bandwidth] | ---: | ---: | ---: | ---: | ---: | ---: |"
               for (i = 0; i < n; ++i) { b = order[i]
                   r = (us[b, 0] > 0) ? sprintf("%.2f", us[b, 1] / us[b, 0]) : "-"
                   printf "===== [enc_bandwidth] | %s | %s | %s | %s | %s | %s |\n", b, us[b, 0], us[b, 1], bw[b, 0], bw[b, 1], r } }' /tmp/arbw.txt
fi
# Congestion testbed (cc-suite.sh): four hosts on a bridge, one shaped
# port; GDR_IB_CC off and auto across it, and tc must count the RoCE packets.
step cc_shaped 300 env GDR_TRANSPORT=ib /opt/gdr/cc-suite.sh quick
if [ "${GDR_RXE_QUICK:-0}" != 1 ]; then
    step colls_4ranks 300 $R 4 280 $T colls
    step zcopy_4ranks 300 env GDR_TEST_ZCOPY_QUICK=1 $R 4 280 $T zcopy
fi
echo "===== suite: $PASSES passed, $FAILS failed"
exit $FAILS
