#!/bin/sh
# stacks-guest.sh — PID 1's work in each VM of scripts/rxe/stacks.sh, the
# testbed with separate network stacks: two QEMU guests joined by a cable
# (QEMU's socket netdev), each its own kernel, IP stack and rxe devices.
#   VM a (gdr.stack=a): the switch and the senders. Bridge br0 joins its NIC
#     eth0 (the cable) and three hosts h0..h2 (veth pairs hK/pK,
#     10.77.0.10-12, rxe sa0..sa2 on hK). Everything towards VM b leaves
#     through eth0, so shaping and loss go on eth0's egress qdisc: the
#     switch port towards the receiver, as in cc-suite.sh.
#   VM b (gdr.stack=b): the receiver, one host: eth0 10.77.0.20, rxe sb0,
#     and an agent (busybox nc on port 7000, stacks-agent.sh) through which
#     VM a runs the receiving side of every job.
# VM a runs the scenarios (gdr.suite=SC:SC...), each GDR_IB_CC variant in
# this boot, ranks launched per guest and joined by the library's TCP
# rendezvous (GDR_COMM_ID, a key from gdr.key), then tells VM b to stop.
# Prints "===== [st] ..." rows and GDR_RXE_RESULT=<failed runs>.
# Env (gdr.env=K=V,...): CC_VARIANTS, CC_RATE, CC_LIMIT, CC_BYTES, CC_ITERS,
# CC_IB_TIMEOUT as in cc-suite.sh; CC_SHAPER=netem takes the rate from netem.
IP=/usr/bin/ip
TC=/usr/sbin/tc
T=/opt/gdr/gdr-rdma-test
B=10.77.0.20
. /opt/gdr/cc-lib.sh
FAILS=0
up() { cut -d' ' -f1 /proc/uptime; }
say() { echo "===== [st] $*"; }
finish() {
    echo "GDR_RXE_RESULT=$1"
    poweroff -f; sleep 5; echo o > /proc/sysrq-trigger; sleep 60
}
ROLE=""; SUITE=quick
for w in $(cat /proc/cmdline); do
    case "$w" in
        gdr.stack=*) ROLE=${w#gdr.stack=} ;;
        gdr.suite=*) SUITE=${w#gdr.suite=} ;;
        gdr.key=*) (umask 077; echo "${w#gdr.key=}" > /tmp/gdr.key) ;;
        gdr.env=*) for kv in $(echo "${w#gdr.env=}" | tr ',' ' '); do export "$kv"; done ;;
    esac
done
VARIANTS=${CC_VARIANTS:-off fixed linerate auto}
RATE=${CC_RATE:-10mbit}
LIMIT=${CC_LIMIT:-65536}
BYTES=${CC_BYTES:-524288}
ITERS=${CC_ITERS:-4}

wait_gid() {
    n=0
    until [ -n "$(gid $1)" ]; do
        n=$((n + 1)); [ $n -gt 300 ] && { say "no IPv4 GID on $1"; return 1; }
        sleep 0.1
    done
}

if [ "$ROLE" = b ]; then
    $IP link set eth0 up && $IP addr add $B/24 dev eth0 || finish 91
    rdma link add sb0 type rxe netdev eth0 || finish 91
    wait_gid sb0 || finish 92
    nc -ll -p 7000 -e /opt/gdr/stacks-agent.sh &
    say "VM b: eth0 $B, rxe sb0, agent on port 7000, ready at $(up) s"
    n=0
    until [ -e /tmp/halt ] || [ $n -gt 7200 ]; do sleep 1; n=$((n + 1)); done
    finish 0
fi
[ "$ROLE" = a ] || { say "gdr.stack=a or b, not '$ROLE'"; finish 90; }

# rsh CMD: CMD in VM b (its output, then AGENT_RC=<status>); every call bounded.
rsh() { echo "$*" | timeout ${RSH_TIMEOUT:-300} nc $B 7000; }
rrc() { sed -n 's/^AGENT_RC=//p' "$1" | tail -1; }
setup() {
    $IP link add br0 type bridge && $IP link set br0 up || return 1
    $IP link set eth0 master br0 && $IP link set eth0 up || return 1
    for k in 0 1 2; do
        $IP link add h$k type veth peer name p$k
        $IP link set p$k master br0
        $IP link set p$k up
        $IP addr add 10.77.0.1$k/24 dev h$k
        $IP link set h$k up
        # Each host's packets leave by its own interface (three share the subnet).
        $IP rule add from 10.77.0.1$k table 1$k
        $IP route add 10.77.0.0/24 dev h$k src 10.77.0.1$k table 1$k
    done
    for i in all default h0 h1 h2; do
        sysctl -q -w net.ipv4.conf.$i.rp_filter=0 net.ipv4.conf.$i.arp_ignore=1 net.ipv4.conf.$i.arp_announce=2
    done
    for k in 0 1 2; do rdma link add sa$k type rxe netdev h$k || return 1; done
    for k in 0 1 2; do wait_gid sa$k || return 1; done
    n=0
    until rsh true 2>/dev/null | grep -q '^AGENT_RC=0'; do
        n=$((n + 1)); [ $n -gt 120 ] && { say "VM b's agent never answered"; return 1; }
        sleep 1
    done
    BGID=$(rsh "grep -l '0000:0000:0000:0000:0000:ffff:' /sys/class/infiniband/sb0/ports/1/gids/* | head -1" | head -1)
    BGID=${BGID##*/}
    say "VM a: br0 = eth0 + h0..h2 (10.77.0.10-12, rxe sa0..sa2); VM b answers (sb0 GID $BGID); ready at $(up) s"
}

clear_port() { $TC qdisc del dev eth0 root 2>/dev/null; true; }
shape_rate() {
    clear_port
    if [ "${CC_SHAPER:-tbf}" = netem ]; then
        $TC qdisc add dev eth0 root netem rate $RATE limit $((LIMIT / 1100 + 1))
    else
        $TC qdisc add dev eth0 root tbf rate $RATE burst 16kb limit $LIMIT
    fi
}
shape_loss() { clear_port; $TC qdisc add dev eth0 root netem loss $1; }
tc_sent() { $TC -s qdisc show dev eth0 | awk '/Sent/ { print $2 " bytes " $4 " pkts, dropped " $7; exit }' | tr -d ','; }
tc_pkts() { $TC -s qdisc show dev eth0 | awk '/Sent/ { print $4; exit }'; }
tc_drops() { $TC -s qdisc show dev eth0 | awk '/dropped/ { print $7; exit }' | tr -d ','; }
# VM b's receiver counters: "rcvd_pkts rx_packets" of sb0 and its eth0.
bcnt() { rsh "echo \$(cat /sys/class/infiniband/sb0/ports/1/hw_counters/rcvd_pkts) \$(cat /sys/class/net/eth0/statistics/rx_packets)" | head -1; }

# wbw K SIZE ITERS PORT: ib_write_bw saK -> sb0 (server in VM b): MB/s.
wbw() {
    rsh "timeout 120 ib_write_bw -d sb0 -x $BGID -s $2 -n $3 -p $4 -F" > /tmp/wbw_srv.$4 2>&1 &
    sp=$!
    sleep 2
    timeout 120 ib_write_bw -d sa$1 -x $(gid sa$1) -s $2 -n $3 -p $4 -F $B > /tmp/wbw_cli.$4 2>&1
    wait $sp
    r=$(awk '/BW average/ { getline; print $4; exit }' /tmp/wbw_cli.$4)
    [ -n "$r" ] && echo "$r" || echo "failed ($(grep -a -v '^ *$' /tmp/wbw_cli.$4 | tail -1 | cut -c1-80))"
}

# job V NAME K: a gdrcoll send saK (rank 0, here) -> sb0 (rank 1, VM b) under
# GDR_IB_CC=V; rank 0's output in /tmp/job.NAME, rank 1's in /tmp/job.NAME.b.
# Fails (status 1) unless both ranks passed.
JOBS=0
job() {
    JOBS=$((JOBS + 1))
    e="GDR_TRANSPORT=ib GDR_IB_CC=$1 GDR_IB_TIMEOUT=${CC_IB_TIMEOUT:-14} GDR_TIMEOUT_MS=${GDR_TIMEOUT_MS:-120000}"
    e="$e GDR_IB_ZCOPY_BYTES=${GDR_IB_ZCOPY_BYTES:-262144} GDR_TEST_BW_BYTES=$BYTES GDR_TEST_BW_ITERS=$ITERS"
    e="$e GDR_AUTH_KEY_FILE=/tmp/gdr.key GDR_COMM_ID=10.77.0.1$3:$((29500 + JOBS % 400)) WORLD_SIZE=2"
    rsh "env $e RANK=1 GDR_IB_HCA=sb0 GDR_SOCKET_IFNAME=eth0 GDR_HOST_ID=vm-b timeout -s KILL 240 $T bw" \
        > /tmp/job.$2.b 2>&1 &
    bp=$!
    env $e RANK=0 GDR_IB_HCA=sa$3 GDR_SOCKET_IFNAME=h$3 GDR_HOST_ID=vm-a GDR_DEBUG=INFO GDR_DEBUG_SUBSYS=NET \
        timeout -s KILL 240 $T bw > /tmp/job.$2 2>&1
    rc=$?
    wait $bp
    [ $rc -eq 0 ] && [ "$(rrc /tmp/job.$2.b)" = 0 ]
}
jobwhy() { grep -a -h -v ' INFO ' /tmp/job.$1 /tmp/job.$1.b | grep -a -E 'rc=|rror|FAIL|failed' | head -3 | tr '\n' ' ' | cut -c1-400; }

# crossed WHAT Q0 B0: what crossed eth0's qdisc and arrived at VM b since
# the qdisc's start (Q0 = its packets then, B0 = bcnt then).
crossed() {
    set -- "$1" "$2" $3 $(bcnt)
    say "[$1] crossed the cable: eth0 qdisc (VM a) $(tc_sent); since start: qdisc +$(( $(tc_pkts) - $2 )) pkts," \
        "sb0 rcvd_pkts +$(( $5 - $3 )), VM b eth0 rx_packets +$(( $6 - $4 ))"
}

# pair NAME K: ib_write_bw, then every variant from saK to sb0.
pair() {
    name=$1; k=$2
    q0=$(tc_pkts); b0=$(bcnt)
    w=$(wbw $k $BYTES 20 18515)
    say "[$name] ib_write_bw sa$k -> sb0 (VM b), $BYTES bytes: $w MB/s; eth0: $(tc_sent)"
    say "| scenario | GDR_IB_CC | MB/s | vs off | retransmissions | seq NAKs | window now (range) | p99 chunk us |"
    say "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: |"
    base=""
    for v in $VARIANTS; do
        r0=$(retries sa$k); n0=$(seqnaks sa$k)
        if job $v $name.$v $k; then ok=""; else
            ok=" FAIL"; FAILS=$((FAILS + 1)); say "[$name] $v failed: $(jobwhy $name.$v)"
        fi
        bw=$(mbps $name.$v); [ -z "$base" ] && base=$bw
        rel=$(awk -v a="$bw" -v b="$base" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }')
        say "| $name | $v$ok | $bw | $rel | $(( $(retries sa$k) - r0 )) | $(( $(seqnaks sa$k) - n0 )) | $(win $name.$v) | $(p99 $name.$v) |"
    done
    crossed $name "$q0" "$b0"
}

# incast: sa0, sa1, sa2 each send to sb0 at once, through eth0 (tbf).
incast() {
    shape_rate
    rb=$(echo $RATE | sed 's/mbit//'); BW=$(awk -v r=$rb 'BEGIN { print r / 8 }')  # MB/s
    S=$(awk -v b=$BYTES -v i=$ITERS 'BEGIN { print b * i / 1e6 }')
    q0=$(tc_pkts); b0=$(bcnt)
    say "[incast] 3 -> 1 through eth0: ${CC_SHAPER:-tbf} rate $RATE limit $LIMIT bytes; S = $S MB per sender, B = $BW MB/s, ideal N*S/B = $(awk -v s=$S -v b=$BW 'BEGIN { printf "%.2f", 3 * s / b }') s"
    for k in 0 1 2; do wbw $k $BYTES 20 $((18520 + k)) > /tmp/iw.$k & done; wait
    say "[incast] ib_write_bw concurrently: $(cat /tmp/iw.0) + $(cat /tmp/iw.1) + $(cat /tmp/iw.2) MB/s"
    say "| GDR_IB_CC | sender MB/s (h0, h1, h2) | goodput MB/s | time s (slowest sender) | time / ideal | Jain | retransmissions | seq NAKs | p99 chunk us (max) | eth0 drops |"
    say "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for v in $VARIANTS; do
        r0=$(( $(retries sa0) + $(retries sa1) + $(retries sa2) ))
        n0=$(( $(seqnaks sa0) + $(seqnaks sa1) + $(seqnaks sa2) ))
        d0=$(tc_drops)
        for k in 0 1 2; do (job $v incast.$v.$k $k || touch /tmp/incast.$v.$k.fail) & done
        wait
        ok=""; for k in 0 1 2; do [ -e /tmp/incast.$v.$k.fail ] && ok=" FAIL"; done
        [ -n "$ok" ] && FAILS=$((FAILS + 1))
        x0=$(mbps incast.$v.0); x1=$(mbps incast.$v.1); x2=$(mbps incast.$v.2)
        for k in 0 1 2; do [ -e /tmp/incast.$v.$k.fail ] && say "[incast] $v sender h$k failed: $(jobwhy incast.$v.$k)"; done
        p=$(for k in 0 1 2; do p99 incast.$v.$k; done | sort -n | tail -1)
        incast_row st "$v$ok" "$x0" "$x1" "$x2" "$S" "$BW" "$p" \
            $(( $(retries sa0) + $(retries sa1) + $(retries sa2) - r0 )) \
            $(( $(seqnaks sa0) + $(seqnaks sa1) + $(seqnaks sa2) - n0 )) $(( $(tc_drops) - d0 ))
    done
    crossed incast "$q0" "$b0"
    clear_port
}

setup || { rsh "touch /tmp/halt" > /dev/null 2>&1; finish 91; }
for sc in $(echo "$SUITE" | tr ':' ' '); do
    s0=$(up)
    case $sc in
        with=*)
            for kv in $(echo "${sc#with=}" | tr ',' ' '); do export "$(echo "$kv" | tr '+' ' ')"; done
            VARIANTS=${CC_VARIANTS:-off fixed linerate auto}; RATE=${CC_RATE:-10mbit}; LIMIT=${CC_LIMIT:-65536}
            BYTES=${CC_BYTES:-524288}; ITERS=${CC_ITERS:-4}
            say "[with] ${sc#with=}"; continue ;;
        quick)  # for the rdma label: one shaped pair, off vs auto; the packets must cross
            shape_rate
            q0=$(tc_pkts); b0=$(bcnt)
            VARIANTS="off auto" BYTES=262144 ITERS=2 pair quick 0
            set -- $b0 $(bcnt)
            sent=$(( $(tc_pkts) - q0 )); rcvd=$(( $3 - $1 ))
            [ $sent -gt 1000 ] || { say "FAIL: RoCE packets did not cross eth0's qdisc ($sent)"; FAILS=$((FAILS + 1)); }
            [ $rcvd -gt 1000 ] || { say "FAIL: sb0 in VM b received too few packets ($rcvd)"; FAILS=$((FAILS + 1)); }
            $TC -s qdisc show dev eth0 | sed 's/^/===== [st] [quick] tc -s: /'
            clear_port ;;
        clean) clear_port; pair clean 0 ;;
        rate) shape_rate; pair rate 0; clear_port ;;
        loss0.1) shape_loss 0.1%; pair loss0.1 0; clear_port ;;
        loss1) shape_loss 1%; pair loss1 0; clear_port ;;
        incast) incast ;;
        *) say "unknown scenario $sc"; FAILS=$((FAILS + 1)) ;;
    esac
    say "[$sc] done in $(awk -v a="$s0" -v b="$(up)" 'BEGIN { printf "%.1f", b - a }') s"
done
rsh "touch /tmp/halt" > /dev/null 2>&1
finish $FAILS
