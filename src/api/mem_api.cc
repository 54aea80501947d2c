// Memory entry points of the C API: gdrCommRegister / gdrCommDeregister and
// gdrMemAlloc / gdrMemFree.
//
// Registration-cache safety (see transport/ib/user_ranges.h): the verbs
// transport keeps a NIC registration after an operation only for memory
// listed here, i.e. memory the program promised to keep (registered) or that
// we allocated; unlisting (deregister, free) drops the overlapping
// registrations before the memory can be reused. Buffers never listed are
// registered per operation, so memory freed behind our back can never hit a
// stale registration.
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "api/guard.h"
#include "core/cuda.h"

#if GDR_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#if GDR_HAVE_IB
#include "transport/ib/user_ranges.h"
#endif

struct gdrRegHandle {
  gdrComm_t comm;
  void* buffer;
  size_t size;
  uint64_t rangeId;
};

namespace {

struct Alloc {
  size_t size;
  bool device;
  uint64_t rangeId;
};

std::mutex gMu;
std::unordered_set<gdrRegHandle*>& handles() {
  static std::unordered_set<gdrRegHandle*> s;
  return s;
}
std::unordered_map<void*, Alloc>& allocs() {
  static std::unordered_map<void*, Alloc> m;
  return m;
}

uint64_t listRange(const void* p, size_t n) {
#if GDR_HAVE_IB
  return gdr::transport::ib::UserRanges::instance().add(p, n);
#else
  (void)p;
  (void)n;
  return 0;
#endif
}

void unlistRange(uint64_t id) {
#if GDR_HAVE_IB
  gdr::transport::ib::UserRanges::instance().remove(id);
#else
  (void)id;
#endif
}

}  // namespace

using gdr::api::checkComm;
using gdr::api::guarded;

extern "C" {

gdrResult_t gdrCommRegister(gdrComm_t comm, void* buffer, size_t size, gdrRegHandle_t* handle) {
  return guarded("gdrCommRegister", comm, [&] {
    GDR_CHECK_ARG(handle, "handle (the output pointer) is NULL");
    *handle = nullptr;
    checkComm(comm);
    GDR_CHECK_ARG(buffer, "buffer is NULL");
    GDR_CHECK_ARG(size > 0, "size is 0");
    GDR_CHECK_ARG(reinterpret_cast<uintptr_t>(buffer) + size > reinterpret_cast<uintptr_t>(buffer),
                  "buffer %p + %zu bytes wraps around the address space", buffer, size);
    auto h = new gdrRegHandle{comm, buffer, size, listRange(buffer, size)};
    std::lock_guard<std::mutex> g(gMu);
    handles().insert(h);
    *handle = h;
  });
}

gdrResult_t gdrCommDeregister(gdrComm_t comm, gdrRegHandle_t handle) {
  return guarded("gdrCommDeregister", comm, [&] {
    checkComm(comm);
    GDR_CHECK_ARG(handle, "handle is NULL");
    {
      std::lock_guard<std::mutex> g(gMu);
      GDR_CHECK_ARG(handles().count(handle),
                    "handle %p was already deregistered or never returned by gdrCommRegister",
                    static_cast<void*>(handle));
      GDR_CHECK_ARG(handle->comm == comm, "handle %p belongs to another communicator",
                    static_cast<void*>(handle));
      handles().erase(handle);
    }
    unlistRange(handle->rangeId);
    delete handle;
  });
}

gdrResult_t gdrMemAlloc(void** ptr, size_t size) {
  return guarded("gdrMemAlloc", nullptr, [&] {
    GDR_CHECK_ARG(ptr, "ptr (the output pointer) is NULL");
    *ptr = nullptr;
    GDR_CHECK_ARG(size > 0, "size is 0");
    void* p = nullptr;
    bool device = false;
#if GDR_HAVE_CUDA
    if (gdr::currentCudaDevice() >= 0) {
      cudaError_t rc = cudaMalloc(&p, size);
      if (rc != cudaSuccess) {
        cudaGetLastError();
        throw gdr::Error(gdrCudaError, gdr::strprintf("cudaMalloc(%zu bytes): %s", size,
                                                      cudaGetErrorString(rc)));
      }
      device = true;
    }
#endif
    if (!device) {
      // Page-aligned, so a NIC registration of it covers no one else's memory.
      if (posix_memalign(&p, 4096, size) != 0) throw std::bad_alloc();
    }
    uint64_t id = listRange(p, size);
    std::lock_guard<std::mutex> g(gMu);
    allocs()[p] = Alloc{size, device, id};
    *ptr = p;
  });
}

gdrResult_t gdrMemFree(void* ptr) {
  return guarded("gdrMemFree", nullptr, [&] {
    if (!ptr) return;
    Alloc a;
    {
      std::lock_guard<std::mutex> g(gMu);
      auto it = allocs().find(ptr);
      GDR_CHECK_ARG(it != allocs().end(), "%p was not returned by gdrMemAlloc (or was freed)", ptr);
      a = it->second;
      allocs().erase(it);
    }
    // Registrations go before the memory does.
    unlistRange(a.rangeId);
#if GDR_HAVE_CUDA
    if (a.device) {
      cudaError_t rc = cudaFree(ptr);
      if (rc != cudaSuccess) {
        cudaGetLastError();
        throw gdr::Error(gdrCudaError,
                         gdr::strprintf("cudaFree(%p): %s", ptr, cudaGetErrorString(rc)));
      }
      return;
    }
#endif
    std::free(ptr);
  });
}

}  // extern "C"
