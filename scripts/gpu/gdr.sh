#!/usr/bin/env bash
# GPU half of GPUDirect RDMA on the lent GPU machine (no RDMA NIC):
# builds with the verbs transport where its headers exist (the library is
# dlopen'ed; only infiniband/verbs.h is needed to build it), runs
# gdr-gdr-gpu-test (dma-buf export, registration up to ibv_reg_dmabuf_mr with
# a fake verbs table, the machine's GDR checks), prints gdr-info's GPUDirect
# line, and probes whether this kernel could run Soft-RoCE (rdma_rxe) for a
# real GPU + verbs run. Logs under $OUT (default build-gpu-run-ib/out).
# Usage, from the repo root: scripts/gpu/gdr.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0  # never NVLink multicast
B=${GDR_GPU_BUILD:-build-gpu-run-ib}
O=${OUT:-$B/out}
mkdir -p "$O"

if [ -f /usr/include/infiniband/verbs.h ]; then IB=ON; else IB=OFF; fi
echo "infiniband/verbs.h: $([ $IB = ON ] && echo present || echo absent) -> GDR_ENABLE_IB=$IB"
echo "libibverbs: $(ls /usr/lib/x86_64-linux-gnu/libibverbs.so* 2>/dev/null | tr '\n' ' ')"

t0=$(date +%s)
cmake -S . -B "$B" -G Ninja -DGDR_ENABLE_IB=$IB -DGDR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release \
  -DGDR_BUILD_BENCH=OFF >"$O/build.log" 2>&1 &&
  ninja -C "$B" -j32 gdr-gdr-gpu-test gdr-info >>"$O/build.log" 2>&1
rc=$?
echo "build rc=$rc in $(( $(date +%s) - t0 )) s"
if [ $rc -ne 0 ]; then tail -40 "$O/build.log"; exit $rc; fi

GDR_DEBUG=INFO GDR_DEBUG_SUBSYS=NET timeout 120 "$B/bin/gdr-gdr-gpu-test" >"$O/gdr-gpu-test.log" 2>&1
status=$?
echo "gdr-gdr-gpu-test rc=$status"
cat "$O/gdr-gpu-test.log"
"$B/bin/gdr-info" >"$O/gdr-info.log" 2>&1
grep -i -A1 "gpudirect" "$O/gdr-info.log" | head -4

# What this machine offers for a real GPU + verbs run.
{
  echo "== kernel $(uname -r)"
  echo "== nvidia module: $(modinfo -F version nvidia 2>/dev/null) license $(modinfo -F license nvidia 2>/dev/null) (open modules say Dual MIT/GPL; dma-buf needs them)"
  echo "== loaded: $(lsmod 2>/dev/null | awk '{print $1}' | grep -E '^(nvidia|nvidia_peermem|ib_|rdma|mlx|rxe)' | tr '\n' ' ')"
  echo "== nvidia_peermem: $(modinfo -F filename nvidia_peermem 2>/dev/null || echo 'not installed')"
  echo "== rdma_rxe module: $(modinfo -F filename rdma_rxe 2>/dev/null || echo 'not installed')"
  echo "== tools: $(for t in rdma ibv_devices ibv_devinfo ib_write_bw; do command -v $t >/dev/null && printf '%s ' $t; done)"
  IFACE=$(ip -o link show up 2>/dev/null | awk -F': ' '$2 != "lo" {print $2; exit}' | cut -d@ -f1)
  echo "== first non-loopback interface: ${IFACE:-none}"
  if modinfo rdma_rxe >/dev/null 2>&1; then
    timeout 20 modprobe rdma_rxe && echo "modprobe rdma_rxe: ok" || echo "modprobe rdma_rxe: failed"
    if [ -n "${IFACE:-}" ] && command -v rdma >/dev/null; then
      timeout 20 rdma link add gdrrxe0 type rxe netdev "$IFACE" && echo "rdma link add: ok" || echo "rdma link add: failed"
      timeout 10 rdma link show
      command -v ibv_devinfo >/dev/null && timeout 10 ibv_devinfo -d gdrrxe0 | head -20
      timeout 20 rdma link delete gdrrxe0 2>/dev/null
    fi
  fi
  ls /sys/class/infiniband 2>/dev/null | sed 's/^/== RDMA device: /'
} >"$O/rxe-probe.log" 2>&1
cat "$O/rxe-probe.log"
exit $status
