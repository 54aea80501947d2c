#include "transport/ib/softnic_device.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "core/log.h"
#include "core/memory_kind.h"
#include "transport/ib/gpu_copy.h"

#if GDR_HAVE_CUDA
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#endif

namespace gdr::transport::ib::softnic {

bool isDevice(const void* p) { return GDR_HAVE_CUDA && memoryKind(p) == MemKind::Device; }

void copyBytes(void* dst, const void* src, size_t n) {
  if (isDevice(dst) || isDevice(src)) return gpuCopy(dst, src, n, "softnic0");
  std::memcpy(dst, src, n);
}

#if GDR_HAVE_CUDA
static PFN_cuMemGetAddressRange_v3020 addressRange() {
  static PFN_cuMemGetAddressRange_v3020 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &f, 3020, cudaEnableDefault, &q) !=
            cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      f = nullptr;
    }
    return reinterpret_cast<PFN_cuMemGetAddressRange_v3020>(f);
  }();
  return fn;
}

// Publishes the allocations [addr, addr + len) overlaps. A registration is
// page-aligned around the caller's buffer, so its ends may fall in a
// neighbouring allocation or in no allocation at all: the range is walked
// allocation by allocation (through gaps in steps of 256 bytes, cudaMalloc's
// least alignment). False when no part of it is device memory.
bool exportDevice(uintptr_t addr, size_t len, MrShm::Mr& m) {
  auto range = addressRange();
  if (!range) return false;
  const uintptr_t end = addr + len;
  m.nalloc = 0;
  for (uintptr_t p = addr; p < end && m.nalloc < kMaxAllocs;) {
    CUdeviceptr base = 0;
    size_t size = 0;
    if (range(&base, &size, static_cast<CUdeviceptr>(p)) != CUDA_SUCCESS || size == 0) {
      p = (p | 255) + 1;
      continue;
    }
    cudaIpcMemHandle_t h;
    MrShm::Mr::Alloc& a = m.alloc[m.nalloc];
    if (cudaIpcGetMemHandle(&h, reinterpret_cast<void*>(base)) == cudaSuccess) {
      static_assert(sizeof(h) == sizeof(a.ipc), "cudaIpcMemHandle_t size");
      std::memcpy(a.ipc, &h, sizeof(h));
      a.base = base;
      a.size = size;
      ++m.nalloc;
    } else {
      cudaGetLastError();
      GDR_WARN(kNet,
               "softnic0: device memory at %#llx has no CUDA IPC handle (not from cudaMalloc?): "
               "other processes cannot write it",
               static_cast<unsigned long long>(base));
    }
    p = base + size;
  }
  return m.nalloc > 0;
}

// Whether a registered range holds device memory: its middle, its end, or
// (a small buffer inside the first page) any 256-byte step of that page.
bool mayBeDevice(uintptr_t addr, size_t len) {
  auto dev = [](uintptr_t p) { return isDevice(reinterpret_cast<const void*>(p)); };
  if (!len) return false;
  if (dev(addr + len / 2) || dev(addr + len - 1)) return true;
  for (uintptr_t p = addr; p < addr + std::min<size_t>(len, 4096); p += 256)
    if (dev(p)) return true;
  return false;
}

namespace {

// The writer's mapping of a peer's allocation (caller holds the lock).
char* openDevice(pid_t pid, const MrShm::Mr::Alloc& a) {
  static std::map<std::pair<pid_t, std::string>, char*> open;
  const auto key =
      std::make_pair(pid, std::string(reinterpret_cast<const char*>(a.ipc), sizeof(a.ipc)));
  auto it = open.find(key);
  if (it != open.end()) return it->second;
  cudaIpcMemHandle_t h;
  std::memcpy(&h, a.ipc, sizeof(h));
  void* p = nullptr;
  if (cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
    const char* why = cudaGetErrorString(cudaGetLastError());
    GDR_WARN(kNet, "softnic0: cannot open process %d's device memory by CUDA IPC: %s",
             static_cast<int>(pid), why);
    return nullptr;
  }
  GDR_INFO(kNet,
           "softnic0: writes into process %d's device memory (%llu B allocation) through CUDA IPC",
           static_cast<int>(pid), static_cast<unsigned long long>(a.size));
  open[key] = static_cast<char*>(p);
  return static_cast<char*>(p);
}

}  // namespace

char* deviceTarget(pid_t pid, const MrShm::Mr& m, uint64_t raddr, uint64_t n) {
  for (uint32_t i = 0; i < m.nalloc && i < kMaxAllocs; ++i) {
    const MrShm::Mr::Alloc& a = m.alloc[i];
    if (raddr >= a.base && raddr + n <= a.base + a.size) {
      char* base = openDevice(pid, a);
      return base ? base + (raddr - a.base) : nullptr;
    }
  }
  return nullptr;
}
#else
bool exportDevice(uintptr_t, size_t, MrShm::Mr&) { return false; }
bool mayBeDevice(uintptr_t, size_t) { return false; }
char* deviceTarget(pid_t, const MrShm::Mr&, uint64_t, uint64_t) { return nullptr; }
#endif

}  // namespace gdr::transport::ib::softnic
