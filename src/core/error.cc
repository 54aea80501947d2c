#include "core/error.h"

#include <cstdarg>
#include <cstring>
#include <new>

namespace gdr {

SystemError::SystemError(const std::string& w, int err)
    : Error(gdrSystemError, w + ": " + std::strerror(err)) {}

ErrorReport reportCurrentException() noexcept {
  ErrorReport r;
  try {
    throw;
  } catch (const Error& e) {
    r.code = e.code();
    r.text = e.what();
  } catch (const std::bad_alloc&) {
    r.code = gdrSystemError;
    r.text = "out of host memory";
  } catch (const std::exception& e) {
    r.code = gdrInternalError;
    r.text = std::string("internal error: ") + e.what();
  } catch (...) {
    r.code = gdrInternalError;
    r.text = "internal error: unknown exception";
  }
  return r;
}

namespace {
std::string vstrprintf(const char* fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = std::vsnprintf(nullptr, 0, fmt, ap);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, ap2);
  va_end(ap2);
  return out;
}
}  // namespace

std::string strprintf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string out = vstrprintf(fmt, ap);
  va_end(ap);
  return out;
}

void throwInvalidArgument(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string text = vstrprintf(fmt, ap);
  va_end(ap);
  throw InvalidArgument(text);
}

}  // namespace gdr
