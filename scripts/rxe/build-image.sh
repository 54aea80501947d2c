#!/bin/bash
# build-image.sh BUILD_DIR — the Soft-RoCE test VM for gdrcoll: Debian's own
# kernel (extracted from its .deb, never installed) and an initramfs holding
# busybox, iproute2, the rxe verbs provider, perftest, gdrcoll's rdma test
# binaries with every library they load, and the guest scripts.
# Writes out/vmlinuz and out/initramfs.cpio.gz; the kernel is cached in out/.
# INSTALL=0 skips apt-get (then missing host packages are an error).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:?usage: build-image.sh BUILD_DIR}
OUT=${OUT:-$HERE/out}
ROOTSRC=$(cd "$HERE/../.." && pwd)
T0=$(date +%s)
step() { echo "[build-image] $*"; }

PKGS="busybox-static rdma-core ibverbs-providers ibverbs-utils perftest iproute2 qemu-system-x86 cpio"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
    [ "${INSTALL:-1}" = 1 ] || { echo "missing host packages:$missing (INSTALL=0)"; exit 3; }
    step "apt-get install$missing"
    timeout 120 apt-get update -qq
    DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

mkdir -p "$OUT/debs"
KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
[ -n "$KPKG" ] || { echo "no linux-image-amd64 package known to apt (run apt-get update)"; exit 3; }
KVER=${KPKG#linux-image-}
if ! ls "$OUT/debs/${KPKG}"_*.deb >/dev/null 2>&1; then
    step "downloading $KPKG"
    (cd "$OUT/debs" && timeout 300 apt-get download "$KPKG" >/dev/null)
fi
KX="$OUT/kernel-$KVER"
if [ ! -f "$KX/boot/vmlinuz-$KVER" ]; then
    step "extracting $KPKG"
    rm -rf "$KX"; mkdir -p "$KX"
    dpkg-deb -x "$OUT/debs/${KPKG}"_*.deb "$KX"
fi
cp "$KX/boot/vmlinuz-$KVER" "$OUT/vmlinuz"

R="$OUT/root"
rm -rf "$R"
mkdir -p "$R"/usr/{bin,sbin,lib,lib64} "$R"/{proc,sys,dev,tmp,run,etc,root,opt/gdr}
for d in bin sbin lib lib64; do ln -s usr/$d "$R/$d"; done

put() { mkdir -p "$R$(dirname "${2:-$1}")"; cp -L "$1" "$R${2:-$1}"; }
put_libs() {  # every shared library a binary loads, by ldd (transitive)
    ldd "$1" 2>/dev/null | awk '/=> \//{print $3} /^\t\/.*ld-linux/{print $1}' | while read -r lib; do
        [ -e "$R$lib" ] || put "$lib"
    done
}
put_bin() { put "$1" "${2:-$1}"; put_libs "$1"; }

for b in /usr/sbin/tc /usr/bin/ip /usr/bin/rdma /usr/bin/ibv_devices /usr/bin/ibv_devinfo /usr/bin/ib_write_bw; do put_bin "$b"; done
# libibverbs is dlopen'ed by gdrcoll (ldd of our binary does not show it);
# the rxe provider is dlopen'ed by libibverbs, found through its .driver file.
put_bin "$(readlink -f /usr/lib/x86_64-linux-gnu/libibverbs.so.1)" /usr/lib/x86_64-linux-gnu/libibverbs.so.1
put /etc/libibverbs.d/rxe.driver
put_bin "$(ls /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so | head -1)"
cp /bin/busybox "$R/usr/bin/busybox"
for a in $(/bin/busybox --list); do
    [ -e "$R/usr/bin/$a" ] || [ -e "$R/usr/sbin/$a" ] || ln -s busybox "$R/usr/bin/$a"
done

# gdrcoll's test binaries and scripts
[ -x "$BUILD/bin/gdr-rdma-test" ] || { echo "$BUILD/bin/gdr-rdma-test not built"; exit 3; }
put_bin "$BUILD/bin/gdr-rdma-test" /opt/gdr/gdr-rdma-test
install -m 755 "$ROOTSRC/tests/rdma/run_ranks.sh" "$R/opt/gdr/run_ranks.sh"
install -m 755 "$HERE/guest-suite.sh" "$R/opt/gdr/suite.sh"
install -m 755 "$HERE/cc-suite.sh" "$R/opt/gdr/cc-suite.sh"
install -m 644 "$HERE/cc-lib.sh" "$R/opt/gdr/cc-lib.sh"
install -m 755 "$HERE/zbw-suite.sh" "$R/opt/gdr/zbw-suite.sh"
install -m 755 "$HERE/netns-probe.sh" "$R/opt/gdr/netns-probe.sh"
install -m 755 "$HERE/stacks-guest.sh" "$R/opt/gdr/stacks-guest.sh"
install -m 755 "$HERE/stacks-agent.sh" "$R/opt/gdr/stacks-agent.sh"
# gdr-bench, where built, for gdr.suite=bench (it links MPI but makes no MPI call
# with --launcher env; ldd brings the libraries it loads).
if [ -x "$BUILD/bin/gdr-bench" ]; then
    put_bin "$BUILD/bin/gdr-bench" /opt/gdr/gdr-bench
    install -m 755 "$HERE/bench-suite.sh" "$R/opt/gdr/bench-suite.sh"
fi
install -m 755 "$HERE/init" "$R/init"
echo "root:x:0:0:root:/root:/bin/sh" > "$R/etc/passwd"
echo "root:x:0:" > "$R/etc/group"

# Kernel modules in load order. crc32_generic must precede rdma_rxe (it
# allocates the "crc32" hash when a link is added; nothing autoloads here).
# The virtio ones give the NIC of the separate-stack VMs (stacks.sh).
MODS="crypto/crc32_generic net/ipv4/udp_tunnel net/ipv6/ip6_udp_tunnel drivers/infiniband/core/ib_core
      drivers/infiniband/core/ib_uverbs drivers/infiniband/sw/rxe/rdma_rxe drivers/net/veth
      net/llc/llc net/802/stp net/bridge/bridge net/sched/sch_tbf net/sched/sch_netem
      drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_legacy_dev
      drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci net/core/failover
      drivers/net/net_failover drivers/net/virtio_net"
KM="$KX/lib/modules/$KVER/kernel"
: > "$R/etc/gdr-modules"
for m in $MODS; do
    f=$(ls "$KM/$m".ko* | head -1)
    put "$f" "/lib/modules/$KVER/kernel/${f#$KM/}"
    echo "/lib/modules/$KVER/kernel/${f#$KM/}" >> "$R/etc/gdr-modules"
done

(cd "$R" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 > "$OUT/initramfs.cpio.gz"
step "kernel $KVER, initramfs $(du -h "$OUT/initramfs.cpio.gz" | cut -f1), $(( $(date +%s) - T0 )) s"
