// Memory helpers, buffer registration, and the NCCL functions gdrcoll does
// not implement (each returns ncclInvalidUsage and names itself).
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "compat/nccl/nccl_compat.h"
#include "compat/nccl/nccl_group.h"
#include "compat/nccl/nccl_sim.h"
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

constexpr uint64_t kWindowMagic = 0x676472776e646f77ull;  // "gdrwndow"

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

ncclResult_t notImplemented(const char* fn, ncclComm_t comm, const char* why) {
  compatInit();
  return recordError(
      fn, comm, ncclInvalidUsage,
      strprintf("%s is not implemented by gdrcoll's NCCL-compatible library: %s (docs/compat.md)",
                fn, why),
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

// Registration is gdrcoll's: the network transport keeps the buffer's NIC
// registration until it is deregistered. The handle is gdrcoll's handle.
ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  return guard("ncclCommRegister", comm, [&] {
    GDR_CHECK_ARG(handle, "handle is NULL");
    *handle = nullptr;
    Comm& c = readyComm(comm);
    gdrRegHandle_t h = nullptr;
    checkGdr(gdrCommRegister(c.gdr, buff, size, &h), c.gdr);
    *handle = h;
    return ncclSuccess;
  });
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  return guard("ncclCommDeregister", comm, [&] {
    Comm& c = readyComm(comm);
    checkGdr(gdrCommDeregister(c.gdr, static_cast<gdrRegHandle_t>(handle)), c.gdr);
    return ncclSuccess;
  });
}

// A window is gdrcoll's (gdrCommWindowRegister): NCCL_WIN_COLL_SYMMETRIC
// is GDR_WIN_SYMMETRIC, under which the fused all-reduce reads and writes
// the peers' windows directly; collective then, as NCCL's.
struct ncclWindow_vidmem {
  uint64_t magic;
  ncclComm* comm;
  gdrWindow_t win;
};

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                    int winFlags) {
  return guard("ncclCommWindowRegister", comm, [&] {
    GDR_CHECK_ARG(win, "win is NULL");
    *win = nullptr;
    // From 2.29 strict ordering (0x2) and GIN only (0x4): hints about how
    // peers use the window, which change nothing here.
    GDR_CHECK_ARG(winFlags >= 0 && winFlags <= 0x7, "winFlags 0x%x has unknown bits", winFlags);
    Comm& c = readyComm(comm);
    gdrWindow_t w = nullptr;
    const int flags = (winFlags & NCCL_WIN_COLL_SYMMETRIC) ? GDR_WIN_SYMMETRIC : GDR_WIN_DEFAULT;
    checkGdr(gdrCommWindowRegister(c.gdr, buff, size, flags, &w), c.gdr);
    *win = new ncclWindow_vidmem{kWindowMagic, &c, w};
    std::lock_guard<std::mutex> lk(c.mu);
    c.windows.insert(*win);
    return ncclSuccess;
  });
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  return guard("ncclCommWindowDeregister", comm, [&] {
    Comm& c = readyComm(comm);
    bool live;
    {
      std::lock_guard<std::mutex> lk(c.mu);
      live = c.windows.erase(win) == 1;
    }
    GDR_CHECK_ARG(live && win->magic == kWindowMagic && win->comm == &c,
                  "win %p is not a window of this communicator", static_cast<void*>(win));
    win->magic = 0;
    gdrWindow_t w = win->win;
    delete win;
    checkGdr(gdrCommWindowDeregister(c.gdr, w), c.gdr);
    return ncclSuccess;
  });
}

// Every rank holds every id, in the same order (NCCL requires it), so all
// rendezvous at the first: gdrcoll's rendezvous service takes any number of
// ranks. The other roots' services see no rank and end at their deadline
// (GDR_TIMEOUT_MS). PyTorch passes several ids from 129 ranks on
// (TORCH_NCCL_RANKS_PER_ROOT).
ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                      ncclConfig_t* config) {
  if (nId >= 1 && commIds)
    return ncclCommInitRankConfig(newcomm, nranks, commIds[0], myrank, config);
  return guard("ncclCommInitRankScalable", nullptr, [&]() -> ncclResult_t {
    if (newcomm) *newcomm = nullptr;
    throw gdr::InvalidArgument(strprintf("nId %d and commIds %p: at least one unique id is needed",
                                         nId, static_cast<void*>(commIds)));
  });
}

// Revoke maps one to one (comm/revoke.cc); ncclCommShrink is beside
// ncclCommSplit (nccl_comm.cc). gdrcoll's revoke has no flags to honour
// (NCCL defines none yet).
ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  return guard("ncclCommRevoke", comm, [&] {
    GDR_CHECK_ARG(revokeFlags == 0, "revokeFlags %d: only 0 is defined", revokeFlags);
    Comm& c = readyComm(comm);
    checkGdr(gdrCommRevoke(c.gdr), c.gdr);
    return ncclSuccess;
  });
}

// Growing needs a communicator whose size can change; gdrcoll's is fixed.
ncclResult_t ncclCommGetUniqueId(ncclComm_t comm, ncclUniqueId*) {
  return notImplemented("ncclCommGetUniqueId", comm,
                        "it only serves ncclCommGrow, which gdrcoll lacks");
}

ncclResult_t ncclCommGrow(ncclComm_t comm, int, const ncclUniqueId*, int, ncclComm_t* newcomm,
                          ncclConfig_t*) {
  if (newcomm) *newcomm = nullptr;
  return notImplemented("ncclCommGrow", comm,
                        "gdrcoll communicators have a fixed size; make a new one");
}

// Suspending would free the communicator's device memory until it resumes;
// gdrcoll cannot give it back while the communicator lives.
ncclResult_t ncclCommSuspend(ncclComm_t comm, int) {
  return notImplemented("ncclCommSuspend", comm,
                        "gdrcoll cannot release a live communicator's memory");
}

ncclResult_t ncclCommResume(ncclComm_t comm) {
  return notImplemented("ncclCommResume", comm, "gdrcoll never suspends a communicator");
}

// Ends the group without running it, as NCCL does, and estimates in
// microseconds what running it would cost (compat/nccl/nccl_sim.h).
ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  return guard("ncclGroupSimulateEnd", nullptr, [&] {
    const bool ok = simInfo && simInfo->magic == 0x74685283;
    float us = 0;
    try {
      if (ok) us = groupSimulatedUs();  // before groupDiscard drops the notes
    } catch (...) {
      groupDiscard();
      throw;
    }
    groupDiscard();
    GDR_CHECK_ARG(ok, "simInfo is NULL or was not initialized with NCCL_SIM_INFO_INITIALIZER");
    if (simInfo->size >= offsetof(ncclSimInfo_t, estimatedTime) + sizeof(float))
      simInfo->estimatedTime = us;
    return ncclSuccess;
  });
}

// Exported by NCCL (deprecated, not declared in our header): re-reads the
// logging variables.
void ncclResetDebugInit(void) { gdr::log::reload(); }
void ncclResetDebugInitInternal(void) { gdr::log::reload(); }

}  // extern "C"
