// Memory helpers, buffer registration, and the NCCL functions gdrcoll does
// not implement (each returns ncclInvalidUsage and names itself).
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "compat/nccl/nccl_compat.h"
#include "core/log.h"

#if GDR_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gdr::nccl {

namespace {

// Host allocations handed out by ncclMemAlloc (no CUDA device), so that
// ncclMemFree knows which free to use.
std::mutex gHostMu;
std::set<void*> gHostAllocs;

struct Registration {
  uint64_t magic = 0x6764727265676831ull;
  Comm* comm;
  void* buff;
  size_t size;
};

[[maybe_unused]] bool haveDevice() {
#if GDR_HAVE_CUDA
  int n = 0;
  bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  cudaGetLastError();
  return ok;
#else
  return false;
#endif
}

ncclResult_t notImplemented(const char* fn, ncclComm_t comm) {
  return recordError(fn, comm, ncclInvalidUsage,
                     strprintf("%s is not implemented by gdrcoll's NCCL-compatible library (docs/compat.md)", fn),
                     false);
}

}  // namespace

}  // namespace gdr::nccl

using namespace gdr::nccl;
using gdr::strprintf;

extern "C" {

// Device memory where a CUDA device exists; otherwise page-aligned host
// memory, which every gdrcoll call accepts (real NCCL would not).
ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  return guard("ncclMemAlloc", nullptr, [&] {
    GDR_CHECK_ARG(ptr, "ptr is NULL");
    *ptr = nullptr;
    if (size == 0) return ncclSuccess;
#if GDR_HAVE_CUDA
    if (haveDevice()) {
      cudaError_t rc = cudaMalloc(ptr, size);
      if (rc != cudaSuccess)
        throw gdr::Error(gdrCudaError, strprintf("cudaMalloc(%zu) failed: %s", size, cudaGetErrorString(rc)));
      return ncclSuccess;
    }
#endif
    void* p = nullptr;
    if (posix_memalign(&p, 4096, size) != 0) throw std::bad_alloc();
    GDR_INFO(kInit, "ncclMemAlloc: no CUDA device, %zu bytes of host memory at %p", size, p);
    std::lock_guard<std::mutex> lk(gHostMu);
    gHostAllocs.insert(p);
    *ptr = p;
    return ncclSuccess;
  });
}

ncclResult_t ncclMemFree(void* ptr) {
  return guard("ncclMemFree", nullptr, [&] {
    if (!ptr) return ncclSuccess;
    {
      std::lock_guard<std::mutex> lk(gHostMu);
      if (gHostAllocs.erase(ptr)) {
        std::free(ptr);
        return ncclSuccess;
      }
    }
#if GDR_HAVE_CUDA
    cudaError_t rc = cudaFree(ptr);
    if (rc != cudaSuccess)
      throw gdr::Error(gdrCudaError, strprintf("cudaFree(%p) failed: %s", ptr, cudaGetErrorString(rc)));
    return ncclSuccess;
#else
    throw gdr::InvalidArgument(strprintf("%p was not allocated by ncclMemAlloc", ptr));
#endif
  });
}

// Registration is a no-op: gdrcoll registers (and caches) what it sends by
// itself. The handle only records the call so that deregistration is checked.
ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  return guard("ncclCommRegister", comm, [&] {
    GDR_CHECK_ARG(handle, "handle is NULL");
    Comm& c = checkComm(comm);
    GDR_CHECK_ARG(buff || size == 0, "buff is NULL");
    *handle = new Registration{0x6764727265676831ull, &c, buff, size};
    return ncclSuccess;
  });
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  return guard("ncclCommDeregister", comm, [&] {
    Comm& c = checkComm(comm);
    auto* r = static_cast<Registration*>(handle);
    GDR_CHECK_ARG(r && r->magic == 0x6764727265676831ull && r->comm == &c,
                  "handle %p is not a registration of this communicator", handle);
    r->magic = 0;
    delete r;
    return ncclSuccess;
  });
}

// With one id this is ncclCommInitRankConfig; several ids (the scalable
// rendezvous) are not implemented.
ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                      ncclConfig_t* config) {
  if (nId == 1 && commIds) return ncclCommInitRankConfig(newcomm, nranks, commIds[0], myrank, config);
  if (newcomm) *newcomm = nullptr;
  compatInit();
  return notImplemented("ncclCommInitRankScalable (with more than one unique id)", nullptr);
}

ncclResult_t ncclCommShrink(ncclComm_t comm, int*, int, ncclComm_t* newcomm, ncclConfig_t*, int) {
  if (newcomm) *newcomm = nullptr;
  compatInit();
  return notImplemented("ncclCommShrink", comm);
}

ncclResult_t ncclCommRevoke(ncclComm_t comm, int) {
  compatInit();
  return notImplemented("ncclCommRevoke", comm);
}

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void*, size_t, ncclWindow_t* win, int) {
  if (win) *win = nullptr;
  compatInit();
  return notImplemented("ncclCommWindowRegister", comm);
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t) {
  compatInit();
  return notImplemented("ncclCommWindowDeregister", comm);
}

// The group stays open: nothing was run or simulated.
ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t*) {
  compatInit();
  return notImplemented("ncclGroupSimulateEnd", nullptr);
}

// Exported by NCCL (deprecated, not declared in our header): re-reads the
// logging variables.
void ncclResetDebugInit(void) { gdr::log::reload(); }

}  // extern "C"
