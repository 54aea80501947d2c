// How GPU memory meets the NIC: registered by dma-buf, registered through
// nvidia-peermem, or staged through pinned host memory near the NIC. The
// checks are injected so the decision is tested on any machine; the reason is
// logged and shown by the tools. GDR_NET_GDR forces it (0 never, 1 always
// where possible; -1 auto).
#pragma once

#include <string>

namespace gdr::transport::ib {

enum class GdrMode { DmaBuf, PeerMem, Staged };
const char* gdrModeName(GdrMode m);

struct GdrChecks {
  bool cudaBuilt = false;      // this build has CUDA (GDR_HAVE_CUDA)
  bool gpuPresent = false;     // a CUDA device is visible
  bool nicDmaBuf = false;      // libibverbs exports ibv_reg_dmabuf_mr
  bool gpuDmaBuf = false;      // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED
  bool peerMemLoaded = false;  // nvidia-peermem / nv_peer_mem in sysfs
  bool pathAllowed = true;     // the topology says GDR is worth it on this GPU-NIC path
  int forced = -1;             // GDR_NET_GDR
  bool softNic = false;        // the software NIC (softnic.h): device memory by pointer / CUDA IPC
};

struct GdrDecision {
  GdrMode mode;
  std::string reason;
};

GdrDecision decideGdr(const GdrChecks& c);
// The checks on this machine: the CUDA build and the current GPU's dma-buf
// support (through the runtime's driver entry points), sysfs for peermem,
// the loaded libibverbs. `pathAllowed` comes from the topology.
GdrChecks probeGdrChecks(bool pathAllowed = true);
// One line for tools and logs: the checks and the decision.
std::string describeGdr(const GdrChecks& c, const GdrDecision& d);

}  // namespace gdr::transport::ib
