#include "transport/ib/gdr_mode.h"

#include <unistd.h>

#include "core/error.h"
#include "core/params.h"
#include "transport/ib/gpu_dmabuf.h"
#include "transport/ib/ibv_api.h"
#include "transport/ib/softnic.h"

namespace gdr::transport::ib {

const char* gdrModeName(GdrMode m) {
  switch (m) {
    case GdrMode::DmaBuf:
      return "dma-buf";
    case GdrMode::PeerMem:
      return "nvidia-peermem";
    case GdrMode::Staged:
      return "staged through host memory";
  }
  return "?";
}

GdrDecision decideGdr(const GdrChecks& c) {
  if (c.forced == 0) return {GdrMode::Staged, "GDR_NET_GDR=0"};
  if (!c.cudaBuilt) return {GdrMode::Staged, "this build has no CUDA support"};
  if (!c.gpuPresent) return {GdrMode::Staged, "no CUDA device is visible"};
  if (c.softNic)  // "registered" the way nvidia-peermem registers: by pointer
    return {GdrMode::PeerMem,
            "the software NIC (softnic0, a test device) reaches GPU memory by CUDA copies"};
  if (!c.pathAllowed && c.forced != 1)
    return {GdrMode::Staged,
            "the GPU-NIC path is beyond GDR_NET_GDR_LEVEL (GDR_NET_GDR=1 forces GPUDirect)"};
  if (c.nicDmaBuf && c.gpuDmaBuf)
    return {GdrMode::DmaBuf, "GPU and libibverbs both support dma-buf"};
  if (c.peerMemLoaded)
    return {GdrMode::PeerMem, c.nicDmaBuf
                                  ? "the GPU driver lacks dma-buf; nvidia-peermem is loaded"
                                  : "libibverbs lacks ibv_reg_dmabuf_mr; nvidia-peermem is loaded"};
  return {GdrMode::Staged, c.forced == 1
                               ? "GDR_NET_GDR=1 but neither dma-buf nor nvidia-peermem is available"
                               : "neither dma-buf nor nvidia-peermem is available"};
}

GdrChecks probeGdrChecks(bool pathAllowed) {
  GdrChecks c;
  c.cudaBuilt = GDR_HAVE_CUDA;
  GpuNetCaps g = probeGpuNetCaps();
  c.gpuPresent = g.gpuPresent;
  c.gpuDmaBuf = g.dmaBuf;
  c.pathAllowed = pathAllowed;
  const IbvApi* api = ibvApi();
  c.nicDmaBuf = api && api->reg_dmabuf_mr;
  c.softNic = api && api == softnic::api();
  c.peerMemLoaded = access("/sys/kernel/mm/memory_peers/nv_mem/version", F_OK) == 0 ||
                    access("/sys/module/nvidia_peermem", F_OK) == 0;
  c.forced = static_cast<int>(param::getInt("GDR_NET_GDR"));
  return c;
}

std::string describeGdr(const GdrChecks& c, const GdrDecision& d) {
  auto yn = [](bool b) { return b ? "yes" : "no"; };
  return strprintf(
      "%s (%s); CUDA build %s, GPU %s, GPU dma-buf %s, ibv_reg_dmabuf_mr %s, nvidia-peermem %s, "
      "path allowed %s, GDR_NET_GDR=%d",
      gdrModeName(d.mode), d.reason.c_str(), yn(c.cudaBuilt), yn(c.gpuPresent), yn(c.gpuDmaBuf),
      yn(c.nicDmaBuf), yn(c.peerMemLoaded), yn(c.pathAllowed), c.forced);
}

}  // namespace gdr::transport::ib
