// Communicator entry points of the C API.
#include <memory>

#include "api/guard.h"
#include "bootstrap/bootstrap.h"
#include "core/cuda.h"
#include "core/params.h"
#include "dispatch/group.h"

using gdr::api::checkComm;
using gdr::api::guarded;

extern "C" {

gdrResult_t gdrGetVersion(int* version) {
  return guarded("gdrGetVersion", nullptr, [&] {
    GDR_CHECK_ARG(version, "version is NULL");
    *version = GDR_VERSION_CODE;
  });
}

gdrResult_t gdrCommInitBootstrap(gdrComm_t* comm, const gdrBootstrap_t* bootstrap) {
  return guarded("gdrCommInitBootstrap", nullptr, [&] {
    GDR_CHECK_ARG(comm, "comm (the output pointer) is NULL");
    *comm = nullptr;
    GDR_CHECK_ARG(bootstrap, "bootstrap is NULL");
    // Collective through the caller's channel at once, even inside a group
    // (its callbacks are valid only during this call, on this thread).
    const int device = gdr::currentCudaDevice();
    auto c = new gdrComm(gdr::boot::makeExternalBootstrap(*bootstrap));
    c->setDevice(device);
    gdr::api::registerComm(c);
    *comm = c;
  });
}

gdrResult_t gdrGetUniqueId(gdrUniqueId* uniqueId) {
  return guarded("gdrGetUniqueId", nullptr, [&] {
    GDR_CHECK_ARG(uniqueId, "uniqueId is NULL");
    gdr::boot::createUniqueId(uniqueId);
  });
}

// Inside a group: returns a pending handle at once; the rendezvous runs at
// gdrGroupEnd on a worker thread (dispatch/group.h). The CUDA device current
// here is the communicator's device either way.
gdrResult_t gdrCommInitRank(gdrComm_t* comm, int nranks, gdrUniqueId uniqueId, int rank) {
  const gdrResult_t r = guarded("gdrCommInitRank", nullptr, [&] {
    GDR_CHECK_ARG(comm, "comm (the output pointer) is NULL");
    *comm = nullptr;
    GDR_CHECK_ARG(nranks > 0, "nranks must be positive, got %d", nranks);
    GDR_CHECK_ARG(rank >= 0 && rank < nranks, "rank %d is outside [0, %d)", rank, nranks);
    std::unique_ptr<gdrComm> c(new gdrComm(rank, nranks));
    c->setDevice(gdr::currentCudaDevice());
    if (!gdr::dispatch::inGroup()) c->start(gdr::boot::makeTcpBootstrap(uniqueId, rank, nranks));
    gdr::api::registerComm(c.get());
    if (gdr::dispatch::inGroup()) {
      try {
        gdr::dispatch::groupAddInit(c.get(), [uniqueId, rank, nranks] {
          return gdr::boot::makeTcpBootstrap(uniqueId, rank, nranks);
        });
      } catch (...) {
        gdr::api::unregisterComm(c.get());
        throw;
      }
    }
    *comm = c.release();
  });
  if (r != gdrSuccess && gdr::dispatch::inGroup())
    gdr::dispatch::groupNoteInitError(r, gdr::api::threadLastError());
  return r;
}

// Destroy and abort drop the registry's reference: the memory goes when the
// last call using the communicator (on any thread) returns.
gdrResult_t gdrCommDestroy(gdrComm_t comm) {
  return guarded("gdrCommDestroy", nullptr, [&] {
    checkComm(comm);
    if (!gdr::api::unregisterComm(comm)) throw gdr::InvalidArgument("the communicator was already destroyed");
    gdr::dispatch::groupForget(comm);
    gdr::api::releaseWhenUnused(comm);
  });
}

gdrResult_t gdrCommAbort(gdrComm_t comm) {
  return guarded("gdrCommAbort", nullptr, [&] {
    checkComm(comm);
    if (!gdr::api::unregisterComm(comm)) throw gdr::InvalidArgument("the communicator was already destroyed");
    comm->requestAbort();
    gdr::dispatch::groupForget(comm);
    gdr::api::releaseWhenUnused(comm);
  });
}

gdrResult_t gdrCommRank(gdrComm_t comm, int* rank) {
  return guarded("gdrCommRank", comm, [&] {
    GDR_CHECK_ARG(rank, "rank (the output pointer) is NULL");
    *rank = checkComm(comm).rank();
  });
}

gdrResult_t gdrCommSize(gdrComm_t comm, int* size) {
  return guarded("gdrCommSize", comm, [&] {
    GDR_CHECK_ARG(size, "size (the output pointer) is NULL");
    *size = checkComm(comm).size();
  });
}

gdrResult_t gdrCommGetAsyncError(gdrComm_t comm, gdrResult_t* asyncError) {
  return guarded("gdrCommGetAsyncError", comm, [&] {
    GDR_CHECK_ARG(asyncError, "asyncError (the output pointer) is NULL");
    *asyncError = checkComm(comm).asyncError();
  });
}

const char* gdrGetErrorString(gdrResult_t result) {
  switch (result) {
    case gdrSuccess: return "success";
    case gdrInvalidArgument: return "invalid argument";
    case gdrInvalidUsage: return "invalid usage (wrong state, or ranks called mismatched operations)";
    case gdrSystemError: return "system call failed";
    case gdrRemoteError: return "a peer failed or vanished";
    case gdrTimeout: return "timed out (GDR_TIMEOUT_MS)";
    case gdrNotSupported: return "not supported by this build or hardware";
    case gdrInternalError: return "internal error in gdrcoll";
    case gdrCudaError: return "CUDA call failed";
    case gdrInProgress: return "operation in progress";
    default: return "unknown gdrResult_t value";
  }
}

const char* gdrGetLastError(gdrComm_t comm) {
  thread_local std::string text;
  if (!comm) return gdr::api::threadLastError();
  gdr::api::CommUse use = gdr::api::useComm(comm);
  text = use.get() ? use->lastError() : "the communicator was destroyed or never created";
  return text.c_str();
}

gdrResult_t gdrParamVisit(gdrParamVisitor_t visitor, void* arg) {
  return guarded("gdrParamVisit", nullptr, [&] {
    GDR_CHECK_ARG(visitor, "visitor is NULL");
    for (const auto& p : gdr::param::all()) {
      std::string cur = gdr::param::current(p);
      if (visitor(p.name, gdr::param::typeName(p.type), p.defaultValue, cur.c_str(), p.description, arg)) break;
    }
  });
}

}  // extern "C"
