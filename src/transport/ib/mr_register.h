// Registers memory with the NIC the way mr_plan.h decides: host memory and
// nvidia-peermem device memory by ibv_reg_mr, device memory by dma-buf
// (export, ibv_reg_dmabuf_mr, close the fd: the MR keeps the dma-buf), and
// device memory without GPUDirect refused with NotSupported so the caller
// stages it. Everything goes through the (dlopen'ed or, in tests, fake)
// IbvApi table.
#pragma once

#include <functional>
#include <string>

#include "transport/ib/ibv_api.h"
#include "transport/ib/mr_plan.h"
#include "transport/ib/reg_cache.h"

namespace gdr::transport::ib {

struct MrContext {
  const IbvApi* api = nullptr;
  ibv_pd* pd = nullptr;
  GdrMode gpuMode = GdrMode::Staged;  // from decideGdr()
  MrUse use = MrUse::SendSource;
  std::string what;  // for error text, e.g. "sends to rank 3 on rxe0"
  // Which memory a pointer is; memoryKind() unless a test injects one.
  std::function<MemKind(const void*)> kindOf;
  // dma-buf export; exportDmaBuf() unless a test injects one.
  std::function<int(uintptr_t, size_t)> exportFd;
};

// Registers `plan` (a Refuse plan throws NotSupported).
Registration registerPlan(const MrContext& c, const MrPlan& plan);
// Plans and registers the page-aligned range the cache asks for.
Registration registerRange(const MrContext& c, uintptr_t base, size_t len, const void* addr);
void deregister(const IbvApi& api, const Registration& r);

// A RegCache bound to `c`: device memory goes by c.gpuMode.
RegCache::RegisterFn cacheRegisterFn(MrContext c);

}  // namespace gdr::transport::ib
