#include "transport/ib/mr_plan.h"

#include "core/error.h"

namespace gdr::transport::ib {

unsigned mrAccessFor(MrUse use) {
  switch (use) {
    case MrUse::SendSource:
      return 0;  // local read is always allowed
    case MrUse::RecvTarget:
      return kMrLocalWrite | kMrRemoteWrite;  // verbs requires local write with remote write
    case MrUse::FlushTarget:
      return kMrRemoteRead;
  }
  return 0;
}

const char* mrMethodName(MrMethod m) {
  switch (m) {
    case MrMethod::HostMr:
      return "ibv_reg_mr (host memory)";
    case MrMethod::DmaBuf:
      return "ibv_reg_dmabuf_mr (dma-buf)";
    case MrMethod::PeerMem:
      return "ibv_reg_mr (nvidia-peermem)";
    case MrMethod::Refuse:
      return "not registered";
  }
  return "?";
}

MrPlan planMr(MemKind kind, uintptr_t addr, size_t len, GdrMode gpuMode, MrUse use, size_t page) {
  if (page == 0 || (page & (page - 1)))
    throw InvalidArgument(strprintf("registration page size %zu is not a power of two", page));
  MrPlan p;
  p.base = addr & ~(uintptr_t)(page - 1);
  const uintptr_t end = (addr + (len ? len : 1) + page - 1) & ~(uintptr_t)(page - 1);
  p.len = end - p.base;
  p.access = mrAccessFor(use);
  if (kind == MemKind::Host) {
    p.method = MrMethod::HostMr;
    return p;
  }
  switch (gpuMode) {
    case GdrMode::DmaBuf:
      p.method = MrMethod::DmaBuf;
      p.dmabufOffset = 0;  // the export is of exactly [base, base+len)
      break;
    case GdrMode::PeerMem:
      p.method = MrMethod::PeerMem;
      break;
    case GdrMode::Staged:
      p.method = MrMethod::Refuse;
      p.why = "device memory is not registered with the NIC here (GPU memory goes staged through "
              "host memory; see the GPUDirect decision logged with GDR_DEBUG_SUBSYS=NET)";
      break;
  }
  return p;
}

}  // namespace gdr::transport::ib
