#include "transport/ib/mr_register.h"

#include <unistd.h>

#include <cerrno>

#include "core/error.h"
#include "core/log.h"
#include "transport/ib/gpu_dmabuf.h"

namespace gdr::transport::ib {

static_assert(unsigned(kMrLocalWrite) == unsigned(IBV_ACCESS_LOCAL_WRITE) &&
                  unsigned(kMrRemoteWrite) == unsigned(IBV_ACCESS_REMOTE_WRITE) &&
                  unsigned(kMrRemoteRead) == unsigned(IBV_ACCESS_REMOTE_READ),
              "MrAccess bits are the verbs access bits");

Registration registerPlan(const MrContext& c, const MrPlan& p) {
  const IbvApi& api = *c.api;
  void* base = reinterpret_cast<void*>(p.base);
  ibv_mr* mr = nullptr;
  int err = 0;
  switch (p.method) {
    case MrMethod::Refuse:
      throw NotSupported(strprintf("%zu bytes at %p for %s: %s", p.len, base, c.what.c_str(),
                                   p.why.c_str()));
    case MrMethod::HostMr:
    case MrMethod::PeerMem:
      mr = api.reg_mr(c.pd, base, p.len, static_cast<int>(p.access));
      err = errno;
      break;
    case MrMethod::DmaBuf: {
      if (!api.reg_dmabuf_mr)
        throw NotSupported("dma-buf registration chosen but libibverbs lacks ibv_reg_dmabuf_mr");
      int fd = c.exportFd ? c.exportFd(p.base, p.len) : exportDmaBuf(p.base, p.len);
      mr = api.reg_dmabuf_mr(c.pd, p.dmabufOffset, p.len, p.base, fd, static_cast<int>(p.access));
      err = errno;
      close(fd);  // the MR holds its own reference to the dma-buf
      break;
    }
  }
  if (!mr)
    throw SystemError(strprintf("%s of %zu bytes at %p (access %#x) for %s", mrMethodName(p.method),
                                p.len, base, p.access, c.what.c_str()),
                      err);
  GDR_TRACE(kNet, "registered %zu bytes at %p by %s for %s (lkey %#x)", p.len, base,
            mrMethodName(p.method), c.what.c_str(), mr->lkey);
  return Registration{mr, mr->lkey, mr->rkey};
}

Registration registerRange(const MrContext& c, uintptr_t base, size_t len, const void* addr) {
  const MemKind kind = c.kindOf ? c.kindOf(addr) : memoryKind(addr);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  MrPlan p = planMr(kind, base, len, c.gpuMode, c.use, page);
  return registerPlan(c, p);
}

void deregister(const IbvApi& api, const Registration& r) {
  if (r.handle) api.dereg_mr(static_cast<ibv_mr*>(r.handle));
}

RegCache::RegisterFn cacheRegisterFn(MrContext c) {
  return [c = std::move(c)](uintptr_t base, size_t len, const void* addr) {
    return registerRange(c, base, len, addr);
  };
}

}  // namespace gdr::transport::ib
