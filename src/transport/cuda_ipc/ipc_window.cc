#include "transport/cuda_ipc/ipc_window.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "core/log.h"
#include "transport/cuda_ipc/peer_access.h"

namespace gdr::transport::cuda_ipc {

namespace {

// What a rank tells the others of its window buffer. The IPC handle names
// the whole allocation, which a peer opens at an address of its own: the
// buffer is `ptr - allocBase` into it.
struct WindowRecord {
  int32_t ok;
  int32_t device;
  int32_t pid;
  int32_t pad;
  uint64_t ptr;
  uint64_t allocBase;
  uint64_t bytes;
  cudaIpcMemHandle_t handle;
};

using AddressRangeFn = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
AddressRangeFn addressRange() {
  static const AddressRangeFn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &f, 3020, cudaEnableDefault, &q) !=
            cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      f = nullptr;
    }
    return reinterpret_cast<AddressRangeFn>(f);
  }();
  return fn;
}

// Fills the record for [buffer, buffer + bytes) on `device`; false with the
// reason where the buffer cannot be shared.
bool describe(void* buffer, size_t bytes, int device, WindowRecord* rec, std::string* why) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, buffer) != cudaSuccess) {
    cudaGetLastError();
    return *why = strprintf("%p is not device memory", buffer), false;
  }
  if (a.type != cudaMemoryTypeDevice || a.device != device)
    return *why = strprintf("%p is not device memory of device %d (the communicator's)", buffer,
                            device),
           false;
  AddressRangeFn range = addressRange();
  CUdeviceptr base = 0;
  size_t size = 0;
  if (!range || range(&base, &size, reinterpret_cast<CUdeviceptr>(buffer)) != CUDA_SUCCESS)
    return *why = strprintf("the allocation holding %p is unknown to the driver", buffer), false;
  const uint64_t ptr = reinterpret_cast<uint64_t>(buffer);
  if (ptr + bytes > base + size)
    return *why = strprintf("%p + %zu bytes runs past its allocation (%zu bytes at 0x%llx)", buffer,
                            bytes, size, static_cast<unsigned long long>(base)),
           false;
  if (cudaIpcGetMemHandle(&rec->handle, reinterpret_cast<void*>(base)) != cudaSuccess) {
    const cudaError_t rc = cudaGetLastError();
    return *why = strprintf(
               "cudaIpcGetMemHandle of %p: %s (pool, managed and virtual-memory "
               "allocations cannot be shared this way)",
               buffer, cudaGetErrorString(rc)),
           false;
  }
  rec->allocBase = base;
  return true;
}

// Peer allocations opened in this process: (device, owner pid, owner's
// allocation address) -> where it is mapped here and by how many windows.
struct Opened {
  void* base = nullptr;
  int refs = 0;
};
using OpenKey = std::tuple<int, int32_t, uint64_t>;
std::mutex gOpenMu;
std::map<OpenKey, Opened>& opened() {
  static std::map<OpenKey, Opened> m;
  return m;
}

cudaError_t openShared(int device, const WindowRecord& r, void** base) {
  std::lock_guard<std::mutex> g(gOpenMu);
  Opened& o = opened()[OpenKey{device, r.pid, r.allocBase}];
  if (o.refs == 0) {
    const cudaError_t rc = cudaIpcOpenMemHandle(&o.base, r.handle, cudaIpcMemLazyEnablePeerAccess);
    if (rc != cudaSuccess) {
      opened().erase(OpenKey{device, r.pid, r.allocBase});
      cudaGetLastError();
      return rc;
    }
  }
  ++o.refs;
  *base = o.base;
  return cudaSuccess;
}

void closeShared(int device, int32_t pid, uint64_t allocBase) {
  std::lock_guard<std::mutex> g(gOpenMu);
  auto it = opened().find(OpenKey{device, pid, allocBase});
  if (it == opened().end() || --it->second.refs > 0) return;
  cudaIpcCloseMemHandle(it->second.base);
  cudaGetLastError();
  opened().erase(it);
}

}  // namespace

std::unique_ptr<WindowMap> WindowMap::create(const IpcPeers& peers, int device, void* buffer,
                                             size_t bytes, std::string* whyNot) {
  std::unique_ptr<WindowMap> m(new WindowMap());
  m->nranks_ = peers.size;
  m->device_ = device;
  std::string why;
  WindowRecord mine{};
  mine.device = device;
  mine.pid = static_cast<int32_t>(getpid());
  mine.ptr = reinterpret_cast<uint64_t>(buffer);
  mine.bytes = bytes;
  mine.ok = describe(buffer, bytes, device, &mine, &why);
  if (!mine.ok) why = strprintf("rank %d: %s", peers.rank, why.c_str());
  const std::vector<WindowRecord> all = allgatherOf(peers, mine);
  int32_t mapped = 1;
  for (int r = 0; r < peers.size && mapped; ++r) {
    if (!all[r].ok) {
      mapped = 0;
      if (why.empty()) why = strprintf("rank %d could not share its window buffer", r);
      break;
    }
    m->bytes_[r] = all[r].bytes;
    if (all[r].pid == mine.pid) {  // this process: the raw pointer
      const cudaError_t rc = enablePeerAccess(device, all[r].device);
      if (rc != cudaSuccess) {
        cudaGetLastError();
        why = strprintf("rank %d: peer access to device %d (rank %d's window): %s", peers.rank,
                        all[r].device, r, cudaGetErrorString(rc));
        mapped = 0;
        break;
      }
      m->base_[r] = reinterpret_cast<char*>(all[r].ptr);
      continue;
    }
    void* at = nullptr;
    const cudaError_t rc = openShared(device, all[r], &at);
    if (rc != cudaSuccess) {
      why = strprintf("rank %d: cudaIpcOpenMemHandle of rank %d's window: %s", peers.rank, r,
                      cudaGetErrorString(rc));
      mapped = 0;
      break;
    }
    m->pid_[r] = all[r].pid;
    m->allocBase_[r] = all[r].allocBase;
    m->base_[r] = static_cast<char*>(at) + (all[r].ptr - all[r].allocBase);
  }
  const std::vector<int32_t> agreed = allgatherOf(peers, mapped);
  for (int r = 0; r < peers.size; ++r)
    if (!agreed[r]) {
      if (why.empty()) why = strprintf("rank %d could not map its peers' windows", r);
      *whyNot = why;
      return nullptr;  // the destructor closes what this rank opened
    }
  return m;
}

WindowMap::~WindowMap() {
  // On the window's device: one process may destroy several GPUs' communicators.
  int cur = -1;
  const bool swap =
      cudaGetDevice(&cur) == cudaSuccess && cur != device_ && cudaSetDevice(device_) == cudaSuccess;
  for (int r = 0; r < nranks_; ++r)
    if (allocBase_[r]) closeShared(device_, pid_[r], allocBase_[r]);
  if (swap) cudaSetDevice(cur);
  cudaGetLastError();
}

}  // namespace gdr::transport::cuda_ipc
