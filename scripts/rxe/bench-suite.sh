#!/bin/sh
# bench-suite.sh [COLL...] — gdr-bench inside the Soft-RoCE VM: two ranks,
# rank i on rxe<i> (two "hosts" over verbs), each collective from
# BENCH_MIN to BENCH_MAX (default 4 B - 4 MiB) at BENCH_ITERS calls per size
# (default 20, a tenth above 1 MiB, at least 1; BENCH_WARMUP 2). Launched
# without MPI (--launcher env: GDR_COMM_ID on loopback). Each CSV row is
# printed as "===== [bench] csv| <row>" for scripts/sim/extract-vm.py
# --bench to copy into bench/results/sim/vm/. The default collectives:
# allreduce allgather reducescatter bcast reduce alltoall.
# Exit status: the number of failed runs. Kernel line: gdr.suite=bench[:COLL...]
# (gdr.env=BENCH_MAX=1048576,... tunes it). Before them, ib_write_bw's rate
# between the two devices (the link the model is given).
B=${GDR_BENCH:-/opt/gdr/gdr-bench}  # GDR_BENCH: another binary (to try the script outside the VM)
COLLS=${*:-allreduce allgather reducescatter bcast reduce alltoall}
FAILS=0
say() { echo "===== [bench] $*"; }
[ -x "$B" ] || { say "no $B in the image (build gdr-bench before build-image.sh)"; exit 1; }
umask 077
D=$(mktemp -d)
head -c 32 /dev/urandom > "$D/key"
export GDR_TRANSPORT=${BENCH_TRANSPORT:-ib} GDR_AUTH_KEY_FILE="$D/key" GDR_TIMEOUT_MS=${GDR_TIMEOUT_MS:-600000}
export GDR_COMM_ID=127.0.0.1:29600 WORLD_SIZE=2
TO=${BENCH_TIMEOUT_S:-1200}
say "$(nproc) cpus; sizes ${BENCH_MIN:-4} - ${BENCH_MAX:-4m}, ${BENCH_ITERS:-20} iterations"
# The link as the model takes it, in this boot: ib_write_bw's 1 MiB writes
# rxe1 -> rxe0 (BENCH_BW_N of them; 0 skips it).
if [ "${BENCH_BW_N:-20}" -gt 0 ]; then
    G0=$(grep -l '0000:0000:0000:0000:0000:ffff:' /sys/class/infiniband/rxe0/ports/1/gids/* | head -1)
    G1=$(grep -l '0000:0000:0000:0000:0000:ffff:' /sys/class/infiniband/rxe1/ports/1/gids/* | head -1)
    say "bandwidth ib_write_bw -s 1048576 -n ${BENCH_BW_N:-20}, rxe0 <- rxe1"
    timeout 120 ib_write_bw -d rxe0 -x "${G0##*/}" -s 1048576 -n "${BENCH_BW_N:-20}" -F > "$D/bw_srv.txt" 2>&1 &
    sleep 1
    timeout 120 ib_write_bw -d rxe1 -x "${G1##*/}" -s 1048576 -n "${BENCH_BW_N:-20}" -F 127.0.0.1 2>&1 |
        grep -A1 'BW average' | sed 's/^/===== [bench] ib_write_bw| /'
    wait
fi
for c in $COLLS; do
    s=$(cut -d' ' -f1 /proc/uptime)
    for i in 0 1; do
        RANK=$i GDR_IB_HCA=rxe$i timeout -s KILL "$TO" "$B" "$c" --launcher env \
            --min "${BENCH_MIN:-4}" --max "${BENCH_MAX:-4m}" --iters "${BENCH_ITERS:-20}" \
            --warmup "${BENCH_WARMUP:-2}" --csv "$D/bench-$c.csv" > "$D/bench-$c.$i.out" 2>&1 &
        eval "pid_$i=\$!"
    done
    rc=0
    for i in 0 1; do eval "wait \$pid_$i" || rc=$?; done
    e=$(cut -d' ' -f1 /proc/uptime)
    sed 's/^/  r0| /' "$D/bench-$c.0.out"
    [ $rc -eq 0 ] || { FAILS=$((FAILS + 1)); sed 's/^/  r1| /' "$D/bench-$c.1.out"; }
    [ -f "$D/bench-$c.csv" ] && sed 's/^/===== [bench] csv| /' "$D/bench-$c.csv"
    say "$c rc=$rc in $(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.1f", b-a}') s"
done
rm -rf "$D"
exit $FAILS
