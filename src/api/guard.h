// The one place C++ errors become gdrResult_t codes. Every API entry point
// runs its body through guarded(); the error text goes to the communicator's
// last error (or the thread's, without one) and is logged once.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "api/comm_use.h"
#include "comm/comm.h"
#include "core/error.h"
#include "core/log.h"

namespace gdr::api {

void setThreadLastError(const std::string& s);
const char* threadLastError();

// This thread's last validated handle and the registry generation it was
// validated at (registry.cc): while the generation is unchanged the handle
// is live without a lock. __thread, not thread_local: no initialisation
// wrapper on each access from another file.
extern std::atomic<uint64_t> gCommGeneration;
extern __thread gdrComm_t tLastComm;
extern __thread uint64_t tLastGeneration;

Communicator& checkCommSlow(gdrComm_t comm);
// Throws InvalidArgument unless `comm` is a live communicator.
inline Communicator& checkComm(gdrComm_t comm) {
  if (__builtin_expect(comm && comm == tLastComm &&
                           gCommGeneration.load(std::memory_order_acquire) == tLastGeneration,
                       1))
    return *comm;
  return checkCommSlow(comm);
}
void registerComm(gdrComm_t comm);
// Drops the handle (later calls with it are refused); false if it was not live.
bool unregisterComm(gdrComm_t comm);
// A reference that keeps `comm` alive for one API call (empty if the handle
// is not live): another thread's gdrCommAbort or gdrCommDestroy then only
// unregisters it, and the last reference frees it.
CommUse useComm(gdrComm_t comm) noexcept;

template <typename Body>
gdrResult_t guarded(const char* fn, gdrComm_t comm, Body&& body) noexcept {
  CommUse use = useComm(comm);
  ErrorReport r;
  try {
    body();
    return gdrSuccess;
  } catch (...) {
    r = reportCurrentException();
  }
  std::string msg = std::string(fn) + ": " + r.text;
  GDR_WARN(kInit, "%s", msg.c_str());
  setThreadLastError(msg);
  if (use.get()) use->setLastError(msg);
  return r.code;
}

}  // namespace gdr::api
