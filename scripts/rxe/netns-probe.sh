#!/bin/sh
# netns-probe.sh — inside the Soft-RoCE VM (gdr.suite=netns): can rxe devices
# live in separate network namespaces of this guest kernel? One veth pair,
# one end moved into namespace "b", the rdma subsystem in exclusive netns
# mode, an rxe device on each end, then ib_write_bw across. Prints what each
# step gave and the devices' packet counters, and exits 0 only if the
# transfer completed (so a kernel that can is seen as such).
IP=/usr/bin/ip
mkdir -p /run/netns /var && ln -sf /run /var/run
say() { echo "[netns] $*"; }
cnt() {  # cnt NS DEV: the rxe device's sent/received packet counters
    c=/sys/class/infiniband/$2/ports/1/hw_counters
    if [ "$1" = - ]; then echo "$2 sent $(cat $c/sent_pkts) rcvd $(cat $c/rcvd_pkts)"
    else $IP netns exec "$1" sh -c "echo $2 sent \$(cat $c/sent_pkts) rcvd \$(cat $c/rcvd_pkts)"; fi
}
rdma system set netns exclusive; say "rdma system set netns exclusive: rc=$? ($(rdma system show))"
$IP netns add b || { say "ip netns add failed"; exit 2; }
$IP link add na type veth peer name nb
$IP link set nb netns b
$IP addr add 10.55.0.1/24 dev na && $IP link set na up
$IP netns exec b /usr/bin/ip link set lo up
$IP netns exec b /usr/bin/ip addr add 10.55.0.2/24 dev nb
$IP netns exec b /usr/bin/ip link set nb up
ping -c 1 -W 5 10.55.0.2 >/dev/null 2>&1; say "IP across the namespaces (ping): rc=$?"
rdma link add nsa type rxe netdev na; say "rxe nsa on na (initial namespace): rc=$?"
$IP netns exec b rdma link add nsb type rxe netdev nb; say "rxe nsb on nb (namespace b): rc=$?"
# A device made from namespace b still registers in the initial one: move it.
rdma dev set nsb netns b; say "rdma dev set nsb netns b: rc=$?"
say "devices seen in the initial namespace: $(ls /sys/class/infiniband | tr '\n' ' ')"
say "devices seen in namespace b: $($IP netns exec b ls /sys/class/infiniband | tr '\n' ' ')"
n=0
until $IP netns exec b grep -qs '0000:0000:0000:0000:0000:ffff:' /sys/class/infiniband/nsb/ports/1/gids/*; do
    n=$((n + 1)); [ $n -gt 100 ] && { say "no IPv4 GID on nsb"; break; }; sleep 0.1
done
$IP netns exec b timeout 40 ib_write_bw -d nsb -x 1 -n 200 -s 65536 > /tmp/srv.log 2>&1 &
sleep 3
timeout 30 ib_write_bw -d nsa -x 1 -n 200 -s 65536 10.55.0.2 > /tmp/cli.log 2>&1
RC=$?
wait
say "ib_write_bw nsa -> nsb: rc=$RC"
grep -a -E '^ *65536|error|Couldn|Failed|Unable' /tmp/cli.log /tmp/srv.log | head -6 | sed 's/^/[netns]   /'
say "counters: $(cnt - nsa); $(cnt b nsb)"
say "UDP 4791 sockets: initial namespace $(grep -ci ':12B7 ' /proc/net/udp), namespace b $($IP netns exec b grep -ci ':12B7 ' /proc/net/udp)"
say "veth nb (namespace b): $($IP netns exec b /usr/bin/ip -s link show nb | awk '/RX:/{getline; print "rx packets " $2} /TX:/{getline; print "tx packets " $2}' | tr '\n' ' ')"
exit $RC
