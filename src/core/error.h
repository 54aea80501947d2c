// One error taxonomy inside the library. Code throws gdr::Error (or a
// subclass); the API layer turns it into a gdrResult_t in one place
// (reportCurrentException, used by src/api/guard.h) and records its text as the communicator's last
// error.
#pragma once

#include <stdexcept>
#include <string>

#include "gdrcoll.h"

namespace gdr {

class Error : public std::runtime_error {
 public:
  Error(gdrResult_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  gdrResult_t code() const { return code_; }

 private:
  gdrResult_t code_;
};

struct InvalidArgument : Error {
  explicit InvalidArgument(const std::string& w) : Error(gdrInvalidArgument, w) {}
};
struct InvalidUsage : Error {
  explicit InvalidUsage(const std::string& w) : Error(gdrInvalidUsage, w) {}
};
struct SystemError : Error {
  // Appends strerror(err) so the text says what the OS said.
  SystemError(const std::string& w, int err);
};
struct RemoteError : Error {
  explicit RemoteError(const std::string& w) : Error(gdrRemoteError, w) {}
};
struct TimeoutError : Error {
  explicit TimeoutError(const std::string& w) : Error(gdrTimeout, w) {}
};
struct NotSupported : Error {
  explicit NotSupported(const std::string& w) : Error(gdrNotSupported, w) {}
};
struct InternalError : Error {
  explicit InternalError(const std::string& w) : Error(gdrInternalError, w) {}
};

// The one conversion of an exception into a code and a text, for the
// boundaries that must not throw (the C API, a group's worker, the NCCL
// face). Call it inside a catch block; anything that is not a gdr::Error is
// an out-of-memory (gdrSystemError) or an internal error.
struct ErrorReport {
  gdrResult_t code = gdrSuccess;
  std::string text;
};
ErrorReport reportCurrentException() noexcept;

// printf-style formatting into a std::string.
std::string strprintf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Throws InvalidArgument(strprintf(fmt, ...)). Out of line and cold, so that
// the argument checks every call runs inline to a compare and a branch.
[[noreturn]] void throwInvalidArgument(const char* fmt, ...) __attribute__((format(printf, 1, 2), cold, noinline));

}  // namespace gdr

#define GDR_CHECK_ARG(cond, ...)                                            \
  do {                                                                      \
    if (__builtin_expect(!(cond), 0)) ::gdr::throwInvalidArgument(__VA_ARGS__); \
  } while (0)
