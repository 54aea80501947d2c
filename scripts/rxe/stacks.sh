#!/bin/bash
# stacks.sh [--build-dir DIR] [SCENARIO...] — the congestion testbed with
# separate network stacks: two QEMU guests (TCG), each its own kernel and
# rxe devices on its own virtio NIC, joined by a cable (QEMU's socket
# netdev, a TCP connection on 127.0.0.1). VM a holds the switch (a bridge
# whose port eth0 leads to VM b, shaped by tbf/netem) and three sender
# hosts; VM b is the receiver. scripts/rxe/stacks-guest.sh says what runs
# where. Scenarios: quick (the rdma label's: off and auto across a tbf link,
# fails unless the RoCE packets crossed it), clean, rate, loss0.1, loss1,
# incast; with=K=V[,K=V] between them sets CC_* for the ones after it.
# Default: quick. Env: CC_ENV (K=V,... for both guests, as cc-sweep.sh),
# STACKS_SMP ("A B", vCPUs of VM a and VM b, default "1 1"), STACKS_MEM
# (each, default 1G), GDR_RXE_TIMEOUT (wall limit, default 600 s),
# GDR_SKIP_RDMA=1 (exit 77 where qemu cannot run). Prints the rows and one
# result line; consoles in $OUT/stacks-{a,b}.log.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "$HERE/../.." && pwd)/build
if [ "${1:-}" = --build-dir ]; then BUILD=$2; shift 2; fi
OUT=${OUT:-$HERE/out}
WHAT=rdma_stacks
. "$HERE/vm-image.sh"
T0=$(date +%s)
vm_image
SC=$(IFS=:; echo "${*:-quick}")
KEY=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
PORT=$((20000 + RANDOM % 20000))
read -r SA SB <<< "${STACKS_SMP:-1 1}"
ENV="GDR_TIMEOUT_MS=120000${CC_ENV:+,$CC_ENV}"
LIM=${GDR_RXE_TIMEOUT:-600}
vm() {  # vm NAME SMP NETDEV MAC APPEND...
    local n=$1 smp=$2 nd=$3 mac=$4; shift 4
    timeout -k 10 "$LIM" qemu-system-x86_64 -accel tcg -cpu max -m "${STACKS_MEM:-1G}" -smp "$smp" \
        -kernel "$OUT/vmlinuz" -initrd "$OUT/initramfs.cpio.gz" \
        -append "console=ttyS0 panic=-1 loglevel=4 gdr.stack=$n gdr.key=$KEY gdr.env=$ENV $*" \
        -nic none -netdev "socket,id=n0,$nd" -device "virtio-net-pci,netdev=n0,mac=$mac" \
        -display none -monitor none -serial stdio -no-reboot </dev/null > "$OUT/stacks-$n.log" 2>&1
}
T1=$(date +%s)
# VM b listens on the cable's port, VM a connects to it.
vm b "$SB" "listen=127.0.0.1:$PORT" 52:54:00:77:00:20 &
BP=$!
for _ in $(seq 50); do ss -ltn 2>/dev/null | grep -q ":$PORT " && break; sleep 0.1; done
vm a "$SA" "connect=127.0.0.1:$PORT" 52:54:00:77:00:10 "gdr.suite=$SC ${APPEND:-}"
QRC=$?
T2=$(date +%s)
# VM b powers off when VM a tells it to; give it a little, then stop it.
for _ in $(seq 30); do kill -0 $BP 2>/dev/null || break; sleep 1; done
kill $BP 2>/dev/null; wait $BP 2>/dev/null
grep -a -h -E '^(===== \[st\]|\[init\])' "$OUT/stacks-b.log" "$OUT/stacks-a.log" | tr -d '\r'
RC=$(grep -a -o 'GDR_RXE_RESULT=[0-9]*' "$OUT/stacks-a.log" | tail -1 | cut -d= -f2)
if [ -z "$RC" ]; then
    tail -20 "$OUT/stacks-a.log"; echo "--- VM b:"; tail -10 "$OUT/stacks-b.log"
    echo "rdma_stacks: RESULT FAIL: VM a never reported a result (qemu rc=$QRC; consoles in $OUT/stacks-{a,b}.log)"
    exit 1
fi
echo "rdma_stacks: RESULT $([ "$RC" = 0 ] && echo PASS || echo "FAIL ($RC failed runs)"): image $((T1 - T0)) s, VMs $((T2 - T1)) s (consoles in $OUT/stacks-{a,b}.log)"
exit "$RC"
