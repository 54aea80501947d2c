// Internals of the NCCL-compatible library: the communicator wrapper, result
// and type translation, and the one place errors become ncclResult_t.
// Everything here calls the public gdr* API; nothing reaches below it except
// core (logging, the typed variable registry, errors, CUDA helpers) and the
// device kernels (the one-rank copy).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <thread>

#include "core/error.h"
#include "gdrcoll.h"
#include "nccl.h"

namespace gdr::nccl {

constexpr uint64_t kCommMagic = 0x6764726e63636c31ull;  // "gdrnccl1"

// A custom reduction op (ncclRedOpCreatePreMulSum): sum after multiplying
// each rank's input by a scalar. gdrcoll carries it out: the same op made
// on the gdr communicator (gdrRedOpCreatePreMulSum) at its first use.
struct PreMulSum {
  ncclDataType_t type;
  ncclScalarResidence_t residence;
  unsigned char value[8];  // the scalar, for ncclScalarHostImmediate
  const void* pointer;     // the scalar's address, for ncclScalarDevice
  bool made;               // gdrOp exists
  gdrRedOp_t gdrOp;
};

}  // namespace gdr::nccl

// The object behind ncclComm_t: a gdr communicator and what NCCL adds.
struct ncclComm {
  uint64_t magic = gdr::nccl::kCommMagic;
  gdrComm_t gdr = nullptr;
  int rank = 0;
  int nranks = 0;
  int cudaDev = -1;
  bool blocking = true;
  std::string name;
  // ncclInProgress while a non-blocking init runs, then its result.
  std::atomic<int> initState{ncclSuccess};
  std::mutex threadMu;  // guards initThread (joined under it; the thread takes mu)
  std::thread initThread;
  std::atomic<bool> initJoined{false};  // set once initThread is known finished (readyComm's fast path)
  std::mutex mu;                        // guards lastError, ops, windows
  std::string lastError;
  std::map<int, gdr::nccl::PreMulSum> ops;
  // The live windows (ncclCommWindowRegister): a window is looked up here
  // before it is touched, so a freed or foreign one is refused unread.
  std::set<const void*> windows;
  int nextOp = ncclNumOps;
};

namespace gdr::nccl {

using Comm = ::ncclComm;

// NCCL's built-in reduction ops (gdrcoll numbers them alike); any other
// value is a PreMulSum made on a communicator. A one-rank reduction with a
// built-in op is a copy; a PreMulSum scales, so it takes the full path.
inline bool builtinOp(ncclRedOp_t op) {
  const int v = static_cast<int>(op);
  return v >= 0 && v < static_cast<int>(ncclNumOps);
}

// Runs on every entry point: maps NCCL_DEBUG* to GDR_DEBUG* once.
void compatInit();

// Throws gdr::InvalidArgument unless `c` is a live communicator.
Comm& checkComm(ncclComm_t c);
// Waits for a non-blocking init to finish; throws its error, if any.
Comm& readyComm(ncclComm_t c);

// An error a gdr* call returned: gdrcoll has logged it already.
struct GdrCallError : Error {
  GdrCallError(gdrResult_t code, const std::string& w) : Error(code, w) {}
};

// gdrResult_t -> ncclResult_t (the text stays in the last-error string).
ncclResult_t fromGdr(gdrResult_t r);
// ncclResult_t -> gdrResult_t (an NCCL failure carried through a gdrcoll group).
gdrResult_t toGdr(ncclResult_t r);
// Throws the gdr call's error (its text from gdrGetLastError) unless it
// succeeded. gdrcoll already logged it where it was detected.
void checkGdr(gdrResult_t r, gdrComm_t g);

// Translates a type; bad values throw InvalidArgument with a message.
gdrDataType_t toGdrType(ncclDataType_t t);
size_t typeBytes(ncclDataType_t t);

void setThreadLastError(const std::string& s);
const char* threadLastError();
// Records a failure of `fn` (logged once, here) as the communicator's and
// this thread's last error, and returns its code.
ncclResult_t recordError(const char* fn, ncclComm_t comm, ncclResult_t code, const std::string& text,
                         bool alreadyLogged);

// The error ladder: every entry point runs its body through guard(). The body
// returns ncclSuccess or ncclInProgress, or throws gdr::Error.
template <typename Body>
ncclResult_t guard(const char* fn, ncclComm_t comm, Body&& body) noexcept {
  try {
    compatInit();
    return body();
  } catch (const GdrCallError& e) {
    return recordError(fn, comm, fromGdr(e.code()), e.what(), true);
  } catch (...) {
    const ErrorReport r = reportCurrentException();
    return recordError(fn, comm, fromGdr(r.code), r.text, false);
  }
}

}  // namespace gdr::nccl
