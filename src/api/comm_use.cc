#include "api/comm_use.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "core/lib_thread.h"
#include "core/log.h"

namespace gdr::api {

namespace {

constexpr int kSlots = 4;  // API calls nested deeper take the counted path

// One thread's hazard slots. Records are never freed (a thread that exits
// hands its record to the next new thread), so a scan may read any of them.
struct Record {
  std::atomic<Communicator*> slot[kSlots] = {};
  std::atomic<bool> owned{false};
  // Owner-only: the next free slot, and which slots became counted
  // references because this thread destroyed their communicator itself.
  int depth = 0;
  bool counted[kSlots] = {};
};

std::mutex gRecordsMu;
std::vector<Record*>& records() {
  static auto* v = new std::vector<Record*>;  // outlives every thread's exit
  return *v;
}

bool asymmetricFenceAvailable() {
  static const bool ok = [] {
    const long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return false;
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  }();
  return ok;
}

// A full barrier on every running thread of this process (see comm_use.h).
void asymmetricFence() {
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
    std::atomic_thread_fence(std::memory_order_seq_cst);  // registered, so not expected
}

// This thread's record. The fast path reads a plain pointer: a thread_local
// with a constructor sits behind an initialisation check on every access.
thread_local Record* tRecord = nullptr;

struct Holder {
  Record* rec = nullptr;
  Holder() {
    std::lock_guard<std::mutex> g(gRecordsMu);
    for (Record* r : records())
      if (!r->owned.load(std::memory_order_relaxed)) {
        rec = r;
        break;
      }
    if (!rec) {
      rec = new Record;
      records().push_back(rec);
    }
    rec->owned.store(true, std::memory_order_relaxed);
  }
  ~Holder() {
    std::lock_guard<std::mutex> g(gRecordsMu);
    rec->owned.store(false, std::memory_order_relaxed);
    tRecord = nullptr;
  }
};

Record& adopt() {
  thread_local Holder h;
  tRecord = h.rec;
  return *h.rec;
}

inline Record& mine() {
  Record* r = tRecord;
  return __builtin_expect(r != nullptr, 1) ? *r : adopt();
}

bool heldElsewhere(const Communicator* c, const Record* own) {
  std::lock_guard<std::mutex> g(gRecordsMu);
  for (const Record* r : records()) {
    if (r == own) continue;
    for (const auto& s : r->slot)
      if (s.load(std::memory_order_acquire) == c) return true;
  }
  return false;
}

}  // namespace

int publishHazard(Communicator* c) noexcept {
  if (!asymmetricFenceAvailable()) return -1;
  Record& r = mine();
  if (r.depth == kSlots) return -1;
  const int s = r.depth++;
  r.slot[s].store(c, std::memory_order_relaxed);
  // Only the compiler must keep the caller's re-validation after this
  // store; the CPU's order is the destroyer's membarrier's business.
  std::atomic_signal_fence(std::memory_order_seq_cst);
  return s;
}

void clearHazard(int slot) noexcept {
  Record& r = mine();
  r.slot[slot].store(nullptr, std::memory_order_release);
  r.depth = slot;
}

CommUse CommUse::hazard(Communicator* c, int slot) noexcept {
  CommUse u;
  u.c_ = c;
  u.slot_ = slot;
  return u;
}

CommUse CommUse::counted(CommRef ref) noexcept {
  CommUse u;
  u.c_ = ref.get();
  u.ref_ = std::move(ref);
  return u;
}

CommUse::CommUse(CommUse&& o) noexcept : c_(o.c_), slot_(o.slot_), ref_(std::move(o.ref_)) {
  o.c_ = nullptr;
  o.slot_ = -1;
}

CommUse& CommUse::operator=(CommUse&& o) noexcept {
  if (this != &o) {
    reset();
    c_ = o.c_;
    slot_ = o.slot_;
    ref_ = std::move(o.ref_);
    o.c_ = nullptr;
    o.slot_ = -1;
  }
  return *this;
}

void CommUse::reset() noexcept {
  if (slot_ >= 0) {
    Record& r = mine();
    const bool counted = r.counted[slot_];
    r.counted[slot_] = false;
    clearHazard(slot_);
    if (counted) Communicator::release(c_);
  }
  ref_.reset();
  c_ = nullptr;
  slot_ = -1;
}

void releaseWhenUnused(Communicator* c) {
  if (!asymmetricFenceAvailable()) {  // every call was counted
    Communicator::release(c);
    return;
  }
  asymmetricFence();
  Record& own = mine();
  for (int s = 0; s < own.depth; ++s)
    if (own.slot[s].load(std::memory_order_relaxed) == c && !own.counted[s]) {
      c->retain();
      own.counted[s] = true;
    }
  for (int i = 0; i < 100; ++i) {  // about 10 ms: a call that is just returning
    if (!heldElsewhere(c, &own)) {
      Communicator::release(c);
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  GDR_INFO(kInit,
           "a call on another thread still uses the destroyed communicator: it is freed when that "
           "call returns");
  libThread("release", [c, own = &own] {
    auto pause = std::chrono::microseconds(200);
    while (heldElsewhere(c, own)) {
      std::this_thread::sleep_for(pause);
      if (pause < std::chrono::milliseconds(50)) pause *= 2;
    }
    Communicator::release(c);
  }).detach();
}

bool usedByAnotherCall(Communicator* c, bool ownCounted) {
  if (asymmetricFenceAvailable()) {
    asymmetricFence();
    if (heldElsewhere(c, &mine())) return true;
  }
  return c->refCount() > 1 + (ownCounted ? 1 : 0);
}

}  // namespace gdr::api
