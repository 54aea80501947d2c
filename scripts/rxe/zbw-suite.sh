#!/bin/sh
# zbw-suite.sh — gdrcoll's send bandwidth against ib_write_bw in one boot,
# for GDR_IB_ZCOPY_BYTES (the zero-copy threshold) and the "at least 0.95
# of ib_write_bw" target. Per round and per size (ZBW_SIZES, bytes), in
# this order: ib_write_bw rxe1 -> rxe0 (for ZBW_IB_SECS seconds, its
# duration mode: writes always in flight, a warm-up excluded), gdrcoll's
# rank 0 -> rank 1 gdrSend (one message at a time, the buffer registered)
# eager (GDR_IB_ZCOPY_BYTES=0: every chunk through the receiver's slots and
# copied out) and zero-copy (GDR_IB_ZCOPY_BYTES=size: rendezvous, the NIC
# writes the receiver's buffer), ZBW_BYTES bytes each (two passes: a
# warm-up, then the timed one), ZBW_WINDOW messages in flight (default 16:
# that many sends, and receives into as many buffers, per group, as osu_bw's
# window; 1: one message at a time, each send waiting for its completion). Rounds interleave everything, so the
# host's noise falls on all three alike; the medians per cell go to
# bench/results/rxe.md (scripts/rxe/zbw_table.py makes the table).
# ZBW_VARIANTS="NAME:K=V[:K=V]..." (words, space- or +-separated): one more
# run per variant, zero-copy unless its variables say otherwise
# (what=v-NAME); e.g. w1:GDR_TEST_BW_WINDOW=1.
# One line per run, "===== [zbw] round=R bytes=B what=W MiBps=X", in MiB/s
# (2^20 bytes) for all three: ib_write_bw's "MB/sec" is MiB/s.
# Kernel line: gdr.suite=zbw (gdr.env=ZBW_ROUNDS=3,ZBW_SIZES=65536+1048576 tunes it).
# Exit status: the number of failed runs.
T=/opt/gdr/gdr-rdma-test
R=/opt/gdr/run_ranks.sh
SIZES=$(echo "${ZBW_SIZES:-65536 131072 262144 1048576 4194304}" | tr '+' ' ')
ROUNDS=${ZBW_ROUNDS:-5}
SECS=${ZBW_IB_SECS:-2}
VARIANTS=$(echo "${ZBW_VARIANTS:-}" | tr '+' ' ')
WINDOW=${ZBW_WINDOW:-16}
TOTAL=${ZBW_BYTES:-33554432}  # per run: 32 MiB, about a second at the VM's rate
FAILS=0
export GDR_TRANSPORT=ib GDR_TEST_EXPECT_TRANSPORT=ib RANK_HCAS="rxe0 rxe1" GDR_TIMEOUT_MS=60000
say() { echo "===== [zbw] $*"; }
G0=$(grep -l '0000:0000:0000:0000:0000:ffff:' /sys/class/infiniband/rxe0/ports/1/gids/* | head -1)
G1=$(grep -l '0000:0000:0000:0000:0000:ffff:' /sys/class/infiniband/rxe1/ports/1/gids/* | head -1)
say "$(nproc) cpus; sizes $SIZES; $ROUNDS rounds; ib_write_bw ${SECS} s, gdrcoll $TOTAL bytes per run, window $WINDOW; $(cat /proc/loadavg)"
r=1
while [ $r -le "$ROUNDS" ]; do
    for b in $SIZES; do
        n=$((TOTAL / b)); [ $n -lt 4 ] && n=4
        timeout 60 ib_write_bw -d rxe0 -x "${G0##*/}" -s "$b" -D "$SECS" -F > /tmp/zbw_srv.txt 2>&1 &
        sleep 1
        v=$(timeout 60 ib_write_bw -d rxe1 -x "${G1##*/}" -s "$b" -D "$SECS" -F 127.0.0.1 2>&1 |
            awk -v b="$b" '$1 == b && NF >= 4 { print $4 }')
        wait
        [ -n "$v" ] || { v=-; FAILS=$((FAILS + 1)); }
        say "round=$r bytes=$b what=ib_write_bw MiBps=$v"
        for z in 0 "$b" $VARIANTS; do
            w=zcopy; vars=""
            [ "$z" = 0 ] && w=eager
            case $z in *:*) w=v-${z%%:*}; vars=$(echo "${z#*:}" | tr ':' ' '); z=$b ;; esac
            # "[rank 0] bandwidth: N x B bytes in S s = ..." of the timed pass
            v=$(timeout 120 env GDR_IB_ZCOPY_BYTES=$z GDR_TEST_BW_WINDOW=$WINDOW $vars GDR_TEST_BW_BYTES=$b GDR_TEST_BW_ITERS=$n \
                $R 2 110 $T bw 2>&1 | sed -n 's/.*bandwidth: \([0-9]*\) x \([0-9]*\) bytes in \([0-9.]*\) s.*/\1 \2 \3/p' |
                awk '$3 > 0 { printf "%.2f\n", $1 * $2 / $3 / 1048576 }')
            [ -n "$v" ] || { v=-; FAILS=$((FAILS + 1)); }
            say "round=$r bytes=$b what=$w MiBps=$v"
        done
    done
    say "round $r done at $(cut -d' ' -f1 /proc/uptime) s; $(cat /proc/loadavg)"
    r=$((r + 1))
done
exit $FAILS
