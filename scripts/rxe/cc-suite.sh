#!/bin/sh
# cc-suite.sh [quick|full|SCENARIO...] — the congestion testbed inside the
# Soft-RoCE VM: four "hosts" h0..h3 (veth pairs, rxe devices cc0..cc3) joined
# by a Linux bridge br0 (the switch). Traffic between two hosts leaves hK,
# crosses the bridge and leaves the bridge port pJ towards host J: shaping
# (tbf) and loss (netem) go on that port's egress, so every RoCE packet to
# host J crosses them, which `tc -s` shows. Every scenario runs every
# GDR_IB_CC variant in this boot. Prints table rows as "===== [cc] | ... |".
# Env: CC_VARIANTS (default "off fixed linerate auto"), CC_RATE (tbf rate,
# or netem's with CC_SHAPER=netem,
# default 10mbit: below what the emulated CPUs can send, so the link is the
# bottleneck), CC_LIMIT (tbf queue bytes, default 65536: 50 ms at 10mbit,
# short against the 2 MiB credit window, so overflow drops), CC_BYTES and
# CC_ITERS (per send and warm-up pass), CC_IB_TIMEOUT (GDR_IB_TIMEOUT of the
# runs, default 14: 67 ms; the library's 20 is 4 s per tail loss; bursts:
# 18, 1.07 s, above its shaped queue's delay, see there),
# CC_BACKLOG (net.core.netdev_max_backlog for the bursts, default: the
# kernel's 1000), CC_RXE_DEBUG=1 (rxe's debug messages, counted per cell;
# =errors: only its QPs moving to the error state). A scenario word with=K=V[,K=V] sets variables for the
# scenarios after it ('+' stands for a space), so one boot can compare
# settings: cc:bursts:with=CC_IB_TIMEOUT=18,CC_BURST_VARIANTS=off+auto:bursts.
# CC_BURST_ROUNDS=N runs the bursts' cells N times, in rounds whose order
# rotates (and reverses every other round), so drift hits every cell alike.
# Exit status: the number of failed runs.
IP=/usr/bin/ip
TC=/usr/sbin/tc
T=/opt/gdr/gdr-rdma-test
R=/opt/gdr/run_ranks.sh
. /opt/gdr/cc-lib.sh
settings() {
    VARIANTS=${CC_VARIANTS:-off fixed linerate auto}
    RATE=${CC_RATE:-10mbit}
    LIMIT=${CC_LIMIT:-65536}
    BYTES=${CC_BYTES:-524288}
    ITERS=${CC_ITERS:-4}
}
settings
FAILS=0
say() { echo "===== [cc] $*"; }
up() { cut -d' ' -f1 /proc/uptime; }

setup() {
    [ -e /sys/class/infiniband/cc0 ] && return 0
    $IP link add br0 type bridge || return 1
    $IP link set br0 up
    for k in 0 1 2 3; do
        $IP link add h$k type veth peer name p$k
        $IP link set p$k master br0
        $IP link set p$k up
        $IP addr add 192.168.78.$((10 + k))/24 dev h$k
        $IP link set h$k up
    done
    # One namespace holds every host's address: each interface answers ARP
    # only for its own address (else the first reply, from any port, wins),
    # and packets from a "local" source are accepted on arrival.
    for i in all default h0 h1 h2 h3; do
        sysctl -q -w net.ipv4.conf.$i.accept_local=1 net.ipv4.conf.$i.rp_filter=0 \
            net.ipv4.conf.$i.arp_ignore=1 net.ipv4.conf.$i.arp_announce=2
    done
    for k in 0 1 2 3; do rdma link add cc$k type rxe netdev h$k || return 1; done
    for k in 0 1 2 3; do
        n=0
        until grep -qs '0000:0000:0000:0000:0000:ffff:' /sys/class/infiniband/cc$k/ports/1/gids/*; do
            n=$((n + 1)); [ $n -gt 300 ] && { say "no IPv4 GID on cc$k"; return 1; }
            sleep 0.1
        done
    done
    say "testbed: br0 with h0..h3 (192.168.78.10-13), rxe cc0..cc3, ready at $(up) s"
}

clear_port() { $TC qdisc del dev $1 root 2>/dev/null; true; }
# CC_SHAPER=netem: the rate from netem instead of tbf (its queue in packets
# of about 1100 bytes, RoCE's 1024-byte MTU with headers), for the bursts
# scenario, where tbf crashed the guest kernel.
shape_rate() {
    clear_port $1
    if [ "${CC_SHAPER:-tbf}" = netem ]; then
        $TC qdisc add dev $1 root netem rate $RATE limit $((LIMIT / 1100 + 1))
    else
        $TC qdisc add dev $1 root tbf rate $RATE burst 16kb limit $LIMIT
    fi
}
shape_loss() { clear_port $1; $TC qdisc add dev $1 root netem loss $2; }
# Every counter that says where packets went: each rxe device's hw_counters
# (send_err: the local IP stack refused a packet; retry_exceeded_err,
# duplicate_request, out_of_seq_request, ...), every veth end's drops, the
# softirq backlog's drops (/proc/net/softnet_stat, second column) and p2's
# qdisc drops. `snap FILE` writes "name value" lines; `snapdiff A B` prints
# the names that moved.
snap() {
    for k in 0 1 2 3; do
        for f in /sys/class/infiniband/cc$k/ports/1/hw_counters/*; do echo "cc$k.${f##*/} $(cat $f)"; done
        for e in h$k p$k; do for c in tx_dropped rx_dropped; do echo "$e.$c $(cat /sys/class/net/$e/statistics/$c)"; done; done
    done
    n=0; while read -r _ d _; do n=$((n + 0x$d)); done < /proc/net/softnet_stat; echo "backlog.dropped $n"
    echo "p2.qdisc_dropped $($TC -s qdisc show dev p2 | awk '/dropped/ { print $7; exit }' | tr -d ',')"
} 
snapdiff() { awk 'NR == FNR { a[$1] = $2; next } { d = $2 - a[$1]; if (d != 0) printf "%s +%d, ", $1, d }' $1 $2; }
tc_sent() { $TC -s qdisc show dev $1 | awk '/Sent/ { print $2 " bytes " $4 " pkts, dropped " $7; exit }' | tr -d ','; }

# ib_write_bw SRC -> DST (devices), SIZE, ITERS, PORT: prints MB/s.
wbw() {
    timeout 120 ib_write_bw -d $2 -x $(gid $2) -s $3 -n $4 -p $5 -F > /tmp/wbw_srv.$5 2>&1 &
    sp=$!
    sleep 1
    timeout 120 ib_write_bw -d $1 -x $(gid $1) -s $3 -n $4 -p $5 -F 127.0.0.1 > /tmp/wbw_cli.$5 2>&1
    wait $sp
    r=$(awk '/BW average/ { getline; print $4; exit }' /tmp/wbw_cli.$5)
    [ -n "$r" ] && echo "$r" || echo "failed ($(grep -a -v '^ *$' /tmp/wbw_cli.$5 | tail -1 | cut -c1-80))"
}

# One gdrcoll send job SRC -> DST under GDR_IB_CC=$1; output in /tmp/job.$2.
job() {
    env GDR_IB_CC=$1 GDR_IB_TIMEOUT=${CC_IB_TIMEOUT:-14} GDR_DEBUG=INFO GDR_DEBUG_SUBSYS=NET GDR_TEST_BW_BYTES=$BYTES \
        GDR_TEST_BW_ITERS=$ITERS RANK_HCAS="$3 $4" $R 2 240 $T bw > /tmp/job.$2 2>&1
}

# pair NAME SRC DST PORT: every variant from SRC to DST; DST's port is shaped by the caller.
pair() {
    name=$1; s=$2; d=$3; port=$4
    w=$(wbw $s $d $BYTES 20 18515)
    say "[$name] ib_write_bw $s -> $d, $BYTES bytes: $w MB/s; $port: $(tc_sent $port)"
    say "| scenario | GDR_IB_CC | MB/s | vs off | retransmissions | seq NAKs | window now (range) | p99 chunk us |"
    say "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: |"
    base=""
    for v in $VARIANTS; do
        r0=$(retries $s); q0=$(seqnaks $s)
        if job $v $name.$v $s $d; then ok=""; else
            ok=" FAIL"; FAILS=$((FAILS + 1))
            say "[$name] $v failed: $(grep -a -v ' INFO ' /tmp/job.$name.$v | grep -a -E 'rc=|rror|FAIL' | head -3 | tr '\n' ' ' | cut -c1-400)"
        fi
        bw=$(mbps $name.$v); [ -z "$base" ] && base=$bw
        rel=$(awk -v a="$bw" -v b="$base" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }')
        say "| $name | $v$ok | $bw | $rel | $(( $(retries $s) - r0 )) | $(( $(seqnaks $s) - q0 )) | $(win $name.$v) | $(p99 $name.$v) |"
    done
    say "[$name] $port after: $(tc_sent $port)"
}

# incast: h0, h1, h2 each send to h3 at once, through p3 (tbf).
incast() {
    shape_rate p3
    rb=$(echo $RATE | sed 's/mbit//'); B=$(awk -v r=$rb 'BEGIN { print r * 1e6 / 8 / 1e6 }')  # MB/s
    S=$(awk -v b=$BYTES -v i=$ITERS 'BEGIN { print b * i / 1e6 }')
    say "[incast] 3 -> 1 through p3: tbf rate $RATE limit $LIMIT bytes; S = $S MB per sender, B = $B MB/s, ideal N*S/B = $(awk -v s=$S -v b=$B 'BEGIN { printf "%.2f", 3 * s / b }') s"
    for k in 0 1 2; do wbw cc$k cc3 $BYTES 20 $((18520 + k)) > /tmp/iw.$k & done; wait
    say "[incast] ib_write_bw concurrently: $(cat /tmp/iw.0) + $(cat /tmp/iw.1) + $(cat /tmp/iw.2) MB/s"
    say "| GDR_IB_CC | sender MB/s (h0, h1, h2) | goodput MB/s | time s (slowest sender) | time / ideal | Jain | retransmissions | seq NAKs | p99 chunk us (max) | p3 drops |"
    say "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for v in $VARIANTS; do
        r0=$(( $(retries cc0) + $(retries cc1) + $(retries cc2) ))
        q0=$(( $(seqnaks cc0) + $(seqnaks cc1) + $(seqnaks cc2) ))
        d0=$($TC -s qdisc show dev p3 | awk '/dropped/ { print $7; exit }' | tr -d ',')
        for k in 0 1 2; do job $v incast.$v.$k cc$k cc3 & done
        wait
        ok=""; for k in 0 1 2; do grep -q 'rc=' /tmp/incast.$v.$k && ok=" FAIL"; done
        [ -n "$ok" ] && FAILS=$((FAILS + 1))
        x0=$(mbps incast.$v.0); x1=$(mbps incast.$v.1); x2=$(mbps incast.$v.2)
        for k in 0 1 2; do [ -n "$(mbps incast.$v.$k)" ] ||
            say "[incast] $v sender h$k reported no bandwidth: $(grep -a -E 'rc=|error|rror|timed out' /tmp/incast.$v.$k | head -2 | tr '\n' ' ' | cut -c1-300)"; done
        p=$(for k in 0 1 2; do p99 incast.$v.$k; done | sort -n | tail -1)
        d1=$($TC -s qdisc show dev p3 | awk '/dropped/ { print $7; exit }' | tr -d ',')
        incast_row cc "$v$ok" "$x0" "$x1" "$x2" "$S" "$B" "$p" \
            $(( $(retries cc0) + $(retries cc1) + $(retries cc2) - r0 )) \
            $(( $(seqnaks cc0) + $(seqnaks cc1) + $(seqnaks cc2) - q0 )) $((d1 - d0))
    done
    say "[incast] p3: $(tc_sent p3)"
    clear_port p3
}

# bursts: a 4-host all-reduce loop while ib_write_bw h0 -> h2 starts and
# stops across the bottleneck (p2, tbf); chunk adaptive vs fixed sizes.
# CC_BURST_SHAPE=0 leaves p2 unshaped (the emulated CPUs are the bottleneck
# then): with tbf on p2 the guest kernel (6.1) crashed once in the qdisc's
# transmit path while ib_write_bw's QPs came and went (rxe skbs queued past
# their QP's life).
# burst_order R CELL...: the cells in round R's order: rotated by 5 (R - 1)
# places, reversed in even rounds.
burst_order() {
    r=$1; shift
    echo "$@" | tr ' ' '\n' | awk -v r=$r 'NF { c[n++] = $1 } END {
        for (i = 0; i < n; i++) { j = (i + 5 * (r - 1)) % n; if (r % 2 == 0) j = n - 1 - j; printf "%s ", c[j] } }'
}
# burst_mech LOG: what the connections did in one cell, summed over every
# rank's peers: chunks and their mean size (the INFO summaries), the
# hill-climb's changes (its TRACE lines, up and down) and the chunk it ended
# at (gdr-rdma-test's per-peer line), the window's range, decreases and the
# retransmissions the controller saw, chunk completion p50 (median of the
# connections) and p99 (their maximum).
burst_mech() {
    grep -a -E 'cc [a-z]+: [0-9]+ chunks \(mean|hill-climb chunk|chunk now [0-9]+ \(' "$1" | awk '
        /hill-climb chunk/ { s = $0; sub(/.*hill-climb chunk /, "", s); split(s, a, " ")
            if (a[3] + 0 > a[1] + 0) up++; else down++; next }
        /chunk now/ { s = $0; sub(/.*chunk now /, "", s); split(s, a, " "); c = a[1] + 0
            if (!nn++ || c < clo) clo = c; if (c > chi) chi = c; next }
        { s = $0; sub(/.*cc [a-z]+: /, "", s); sub(/on the [0-9]+ ports/, "on the ports", s)
            sub(/p50/, "pA", s); sub(/p99/, "pB", s); gsub(/[^0-9]+/, " ", s); split(s, f, " ")
            k++; ch += f[1]; by += f[1] * f[2]
            if (k == 1 || f[4] < wlo) wlo = f[4]; if (f[5] > whi) whi = f[5]
            dec += f[6]; hi += f[7]; rs += f[8]; pr += f[9]; p50[k] = f[13] + 0; if (f[14] > p99) p99 = f[14] }
        END {
            for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (p50[j] < p50[i]) { t = p50[i]; p50[i] = p50[j]; p50[j] = t }
            printf "%d connections, %d chunks (mean %d bytes), hill-climb %d up %d down, chunk now %d-%d, window %d-%d, %d decreases (%d high delay, %d retransmissions seen, %d on the ports), p50 %d us, p99 %d us",
                k, ch, ch ? by / ch : 0, up, down, clo, chi, wlo, whi, dec, hi, rs, pr, k ? p50[int((k + 1) / 2)] : 0, p99 }'
}

bursts() {
    if [ "${CC_BURST_SHAPE:-1}" = 1 ]; then shape_rate p2; sh="${CC_SHAPER:-tbf} rate $RATE limit $LIMIT bytes"; else sh="unshaped"; fi
    say "[bursts] 4 ranks on cc0..cc3 all-reduce (arbw, ${CC_BURST_BYTES:-1048576} bytes) while ib_write_bw cc0 -> cc2 runs 1 s on, 1 s off; p2: $sh"
    [ -n "${CC_BACKLOG:-}" ] && sysctl -q -w net.core.netdev_max_backlog=$CC_BACKLOG
    # The QPs' ACK timeout must exceed the shaped queue's delay (netem's
    # 954 packets at 20 mbit hold 0.42 s): at 14 (67 ms) every full queue
    # timed out the QPs behind it, a third of the packets arrived twice
    # (go-back-N) and the QPs ended in error (bench/results/congestion.md 5d).
    bt=${CC_IB_TIMEOUT:-18}
    # CC_RXE_DEBUG=1: every debug message of rxe into the kernel log (its
    # state machines print a line per packet: it slows the guest), =errors:
    # only "qp#N moved to error state"; counted per cell.
    if [ "${CC_RXE_DEBUG:-0}" != 0 ]; then
        mount -t debugfs none /sys/kernel/debug 2>/dev/null
        if [ "$CC_RXE_DEBUG" = errors ]; then m="format \"moved to error state\" +p"; else m="module rdma_rxe +p"; fi
        echo "$m" > /sys/kernel/debug/dynamic_debug/control || say "[bursts] no dynamic debug ($m)"
    fi
    say "[bursts] GDR_IB_TIMEOUT=$bt GDR_IB_RETRY_CNT=${GDR_IB_RETRY_CNT:-7} netdev_max_backlog=$(sysctl -n net.core.netdev_max_backlog) GDR_IB_QPS_PER_PEER=${GDR_IB_QPS_PER_PEER:-2}"
    say "| GDR_IB_CC | GDR_IB_CHUNK | all-reduce us | algbw MB/s | busbw MB/s | round |"
    say "| --- | --- | ---: | ---: | ---: | ---: |"
    cells=""
    for v in ${CC_BURST_VARIANTS:-off fixed linerate auto}; do
        for ch in ${CC_BURST_CHUNKS:-0 65536 131072 262144}; do cells="$cells $v:$ch"; done
    done
    rounds=${CC_BURST_ROUNDS:-1}; r=1
    while [ $r -le $rounds ]; do
        [ $rounds -gt 1 ] && say "[bursts] round $r of $rounds: $(burst_order $r $cells)"
        for cell in $(burst_order $r $cells); do
            v=${cell%:*}; ch=${cell#*:}
            ( i=0; while [ $i -lt 30 ] && [ ! -e /tmp/bursts.stop ]; do
                timeout 5 ib_write_bw -d cc2 -x $(gid cc2) -s 65536 -D 1 -p 18530 -F > /dev/null 2>&1 &
                sleep 0.5
                timeout 5 ib_write_bw -d cc0 -x $(gid cc0) -s 65536 -D 1 -p 18530 -F 127.0.0.1 > /dev/null 2>&1
                wait; sleep 1; i=$((i + 1)); done ) &
            bg=$!
            rm -f /tmp/bursts.stop
            snap > /tmp/snap.0; k0=$(dmesg | wc -l)
            env GDR_IB_CC=$v GDR_IB_CHUNK=$ch GDR_IB_TIMEOUT=$bt GDR_DEBUG=TRACE GDR_DEBUG_SUBSYS=NET GDR_TEST_BW_SIZES=${CC_BURST_BYTES:-1048576} GDR_TEST_BW_ITERS=${CC_BURST_ITERS:-3} \
                RANK_HCAS="cc0 cc1 cc2 cc3" $R 4 280 $T arbw > /tmp/bursts.$v.$ch 2>&1 || FAILS=$((FAILS + 1))
            touch /tmp/bursts.stop; wait $bg
            snap > /tmp/snap.1
            l=$(grep -a ARBW /tmp/bursts.$v.$ch | head -1)
            us=$(echo "$l" | sed -n 's/.* us=\([0-9.]*\).*/\1/p'); bw=$(echo "$l" | sed -n 's/.*algbw_MBps=\([0-9.]*\).*/\1/p')
            bb=$(echo "$l" | sed -n 's/.*busbw_MBps=\([0-9.]*\).*/\1/p')
            say "| $v | $ch | $us | $bw | $bb | $r |"
            say "[bursts] $v $ch mechanism: $(burst_mech /tmp/bursts.$v.$ch)"
            [ -n "$l" ] || say "[bursts] $v $ch failed: $(grep -a -E 'failed|rror|rc=' /tmp/bursts.$v.$ch | head -3 | tr '\n' ' ' | cut -c1-400)"
            say "[bursts] $v $ch counters: $(snapdiff /tmp/snap.0 /tmp/snap.1)"
            say "[bursts] $v $ch QPs failed over: $(grep -a -o 'to rank [0-9]* failed ([^)]*)' /tmp/bursts.$v.$ch | sort | uniq -c | tr '\n' ';' | cut -c1-300); kernel: $(dmesg | tail -n +$((k0 + 1)) | grep -v 'state = ' | sed 's/^\[[^]]*\] //; s/[0-9][0-9]*/N/g' | sort | uniq -c | sort -rn | head -6 | tr '\n' ';' | cut -c1-500)"
        done
        r=$((r + 1))
    done
    clear_port p2
}

setup || exit 1
[ $# -eq 0 ] && set -- quick
for sc in "$@"; do
    s0=$(up)
    case $sc in
        with=*)
            for kv in $(echo "${sc#with=}" | tr ',' ' '); do export "$(echo "$kv" | tr '+' ' ')"; done
            settings; say "[with] ${sc#with=}"; continue ;;
        quick)  # for the rdma label: one shaped pair, off vs auto, packets seen on the port
            shape_rate p1
            VARIANTS="off auto" BYTES=262144 ITERS=2 pair shaped cc0 cc1 p1
            sent=$($TC -s qdisc show dev p1 | awk '/Sent/ { print $4; exit }')
            [ "${sent:-0}" -gt 1000 ] || { say "FAIL: RoCE packets did not cross p1 ($sent)"; FAILS=$((FAILS + 1)); }
            clear_port p1 ;;
        clean) pair clean cc0 cc1 p1 ;;
        rate) shape_rate p1; pair rate cc0 cc1 p1; clear_port p1 ;;
        loss0.1) shape_loss p1 0.1%; pair loss0.1 cc0 cc1 p1; clear_port p1 ;;
        loss1) shape_loss p1 1%; pair loss1 cc0 cc1 p1; clear_port p1 ;;
        incast) incast ;;
        bursts) bursts ;;
        full) for x in clean rate loss0.1 loss1 incast bursts; do "$0" $x || FAILS=$((FAILS + $?)); done ;;
        *) say "unknown scenario $sc"; FAILS=$((FAILS + 1)) ;;
    esac
    say "[$sc] done in $(awk -v a="$s0" -v b="$(up)" 'BEGIN { printf "%.1f", b - a }') s"
done
exit $FAILS
