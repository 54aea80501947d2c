#!/bin/bash
# rxe-test.sh [--build-dir DIR] — gdrcoll's rdma tests over real verbs:
# builds (or reuses) the Soft-RoCE VM image, boots it under qemu (TCG, or
# KVM with GDR_RXE_ACCEL=kvm; 2 CPUs),
# runs tests/rdma inside between rxe0 and rxe1, prints one result line and
# exits with the suite's status. When the VM cannot run it says why and
# fails, unless GDR_SKIP_RDMA=1 (then it exits 77, which CTest counts as
# skipped). Every step has a timeout.
# Env: GDR_RXE_TIMEOUT (VM wall limit, default 600 s), APPEND (kernel args).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "$HERE/../.." && pwd)/build
[ "${1:-}" = --build-dir ] && BUILD=$2
OUT=${OUT:-$HERE/out}
LOG=$OUT/console.log
WHAT=rdma_vm
. "$HERE/vm-image.sh"
T0=$(date +%s)
vm_image
T1=$(date +%s)
# GDR_RXE_ACCEL=kvm uses /dev/kvm where it works (on the machines tried so
# far it opens but the guest never leaves the boot stub, so TCG is the default).
if [ "${GDR_RXE_ACCEL:-tcg}" = kvm ] && [ -w /dev/kvm ]; then ACCEL="-accel kvm -cpu host"; else ACCEL="-accel tcg -cpu max"; fi
echo "rdma_vm: qemu $ACCEL"
timeout -k 10 "${GDR_RXE_TIMEOUT:-600}" qemu-system-x86_64 $ACCEL -m 2G -smp 2 \
    -kernel "$OUT/vmlinuz" -initrd "$OUT/initramfs.cpio.gz" \
    -append "console=ttyS0 panic=-1 loglevel=4 ${APPEND:-}" \
    -nic none -display none -monitor none -serial stdio -no-reboot </dev/null > "$LOG" 2>&1
QRC=$?
T2=$(date +%s)
grep -a -E '^(=====|  r[0-9]+\||  ib_write_bw\||  rank |\[init\])' "$LOG" | tr -d '\r'
RC=$(grep -a -o 'GDR_RXE_RESULT=[0-9]*' "$LOG" | tail -1 | cut -d= -f2)
if [ -z "$RC" ]; then
    tail -20 "$LOG"
    echo "rdma_vm: RESULT FAIL: the VM never reported a result (qemu rc=$QRC; console in $LOG)"
    exit 1
fi
echo "rdma_vm: RESULT $([ "$RC" = 0 ] && echo PASS || echo "FAIL ($RC failed steps)"): image $((T1 - T0)) s, VM $((T2 - T1)) s (console in $LOG)"
exit "$RC"
