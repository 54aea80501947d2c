// How one page-aligned range gets registered with the NIC, decided without
// touching verbs or CUDA, so the rules are tested anywhere:
//   host memory                -> ibv_reg_mr
//   device memory, dma-buf     -> export the range as a dma-buf fd, then
//                                 ibv_reg_dmabuf_mr(fd, offset 0, len, iova = the range's address)
//   device memory, peermem     -> ibv_reg_mr on the device pointer (nvidia-peermem pins it)
//   device memory, staged      -> refused: the caller stages through host memory
// Access is the narrowest the use needs: the NIC only reads a send source;
// remote write is granted only to receive buffers, remote read only to a
// buffer a flush read targets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/memory_kind.h"
#include "transport/ib/gdr_mode.h"

namespace gdr::transport::ib {

// The IBV_ACCESS_* bits (same values; checked where verbs.h is seen).
enum MrAccess : unsigned {
  kMrLocalWrite = 1,
  kMrRemoteWrite = 2,
  kMrRemoteRead = 4,
};

enum class MrUse { SendSource, RecvTarget, FlushTarget };
unsigned mrAccessFor(MrUse use);

enum class MrMethod { HostMr, DmaBuf, PeerMem, Refuse };
const char* mrMethodName(MrMethod m);

struct MrPlan {
  MrMethod method = MrMethod::Refuse;
  uintptr_t base = 0;  // page-aligned start of what is registered (the MR's address / iova)
  size_t len = 0;      // page-aligned length
  uint64_t dmabufOffset = 0;  // into the exported range (which starts at `base`)
  unsigned access = 0;
  std::string why;  // for Refuse: what the caller should know
};

// [addr, addr+len) widened to whole pages of `page` bytes (a power of two).
MrPlan planMr(MemKind kind, uintptr_t addr, size_t len, GdrMode gpuMode, MrUse use, size_t page);

}  // namespace gdr::transport::ib
