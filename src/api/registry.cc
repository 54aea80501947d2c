#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_set>

#include "api/guard.h"

namespace gdr::api {

// Bumped whenever a communicator goes away; a thread's last validated handle
// stays valid while the generation it saw is current (no lock on the fast path).
std::atomic<uint64_t> gCommGeneration{0};
__thread gdrComm_t tLastComm = nullptr;
__thread uint64_t tLastGeneration = ~0ull;

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

Communicator& checkCommSlow(gdrComm_t comm) {
  if (!comm) throw InvalidArgument("the communicator is NULL");
  const uint64_t gen = gCommGeneration.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> g(gMu);
  if (!live().count(comm)) throw InvalidArgument("the communicator was destroyed or never created");
  tLastComm = comm;
  tLastGeneration = gen;
  return *comm;
}

void registerComm(gdrComm_t comm) {
  std::lock_guard<std::mutex> g(gMu);
  live().insert(comm);
}

bool unregisterComm(gdrComm_t comm) {
  std::lock_guard<std::mutex> g(gMu);
  const bool was = live().erase(comm) != 0;
  gCommGeneration.fetch_add(1, std::memory_order_acq_rel);
  return was;
}

// The fast path (this thread's last validated handle, generation unchanged)
// takes no lock and no locked instruction (api/comm_use.h); otherwise the
// liveness check and the reference are taken under the lock, so no
// unregister (and so no last release) can slip between them.
CommUse useComm(gdrComm_t comm) noexcept {
  if (!comm) return CommUse();
  if (comm == tLastComm) {
    const int slot = publishHazard(comm);
    if (slot >= 0) {
      if (gCommGeneration.load(std::memory_order_relaxed) == tLastGeneration) return CommUse::hazard(comm, slot);
      clearHazard(slot);
    }
  }
  std::lock_guard<std::mutex> g(gMu);
  const uint64_t gen = gCommGeneration.load(std::memory_order_relaxed);
  if (!(comm == tLastComm && gen == tLastGeneration)) {
    if (!live().count(comm)) return CommUse();
    tLastComm = comm;
    tLastGeneration = gen;
  }
  return CommUse::counted(CommRef(comm));
}

}  // namespace gdr::api
