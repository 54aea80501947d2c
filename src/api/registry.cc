#include <mutex>
#include <unordered_set>

#include "api/guard.h"

namespace gdr::api {

namespace {
std::mutex gMu;
std::unordered_set<gdrComm_t>& live() {
  static std::unordered_set<gdrComm_t> s;
  return s;
}
thread_local std::string tLastError;
}  // namespace

void setThreadLastError(const std::string& s) { tLastError = s; }
const char* threadLastError() { return tLastError.c_str(); }

Communicator& checkComm(gdrComm_t comm) {
  if (!comm) throw InvalidArgument("the communicator is NULL");
  std::lock_guard<std::mutex> g(gMu);
  if (!live().count(comm)) throw InvalidArgument("the communicator was destroyed or never created");
  return *comm;
}

void registerComm(gdrComm_t comm) {
  std::lock_guard<std::mutex> g(gMu);
  live().insert(comm);
}

void unregisterComm(gdrComm_t comm) {
  std::lock_guard<std::mutex> g(gMu);
  live().erase(comm);
}

}  // namespace gdr::api
