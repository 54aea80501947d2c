// What one API call holds on its communicator so that another thread's
// gdrCommDestroy or gdrCommAbort never frees it underneath.
//
// A counted reference costs two locked instructions per call, and on the
// small-message path a locked instruction is not cheap: it waits until every
// store before it (the message just written into the peer's inbox, a line
// the peer's core owns) has left the store buffer, so the caller cannot run
// ahead of those cache-line transfers. The fast path therefore publishes the
// communicator in one of the calling thread's hazard slots (a plain store)
// and re-reads the registry's generation (a plain load). The rare side
// (destroy, abort) pays instead: after it bumps the generation it runs
// membarrier(2), which makes every running thread of the process execute a
// full barrier, so each in-flight call either sees the new generation and
// takes the counted slow path, or has its hazard visible to the scan that
// follows (the asymmetric Dekker pattern of liburcu and folly). Where
// membarrier is unavailable every call takes the counted path.
#pragma once

#include "comm/comm.h"

namespace gdr::api {

class CommUse {
 public:
  CommUse() = default;
  // Owns the calling thread's hazard slot `slot`, which holds `c`.
  static CommUse hazard(Communicator* c, int slot) noexcept;
  static CommUse counted(CommRef ref) noexcept;
  CommUse(CommUse&& o) noexcept;
  CommUse& operator=(CommUse&& o) noexcept;
  CommUse(const CommUse&) = delete;
  CommUse& operator=(const CommUse&) = delete;
  ~CommUse() { reset(); }
  void reset() noexcept;
  Communicator* get() const { return c_; }
  Communicator* operator->() const { return c_; }
  bool counted() const { return ref_.get() != nullptr; }

 private:
  Communicator* c_ = nullptr;
  int slot_ = -1;  // >= 0: a hazard slot of the thread that made this
  CommRef ref_;
};

// Publishes `c` in a free hazard slot of the calling thread and returns the
// slot, or -1 (no asymmetric fence on this system, or calls nested deeper
// than the slots). The caller then re-validates the handle and clears the
// slot if that fails.
int publishHazard(Communicator* c) noexcept;
void clearHazard(int slot) noexcept;

// Drops the registry's reference to `c` once no call holds it through a
// hazard slot. Destroy and abort call it after the handle left the registry
// (so the generation moved on): the calling thread's own slots on `c` become
// counted references at once; if another thread's call still holds `c` after
// a short wait, a reaper thread drops the reference when that call returns,
// so destroy and abort never block on a stuck call.
void releaseWhenUnused(Communicator* c);

// Whether a call other than the caller's own holds `c` (through another
// thread's hazard slot, or a counted reference beyond the registry's and,
// if `ownCounted`, the caller's). Called after a flag store every call
// checks: the asymmetric fence makes a call that the scan misses see it.
bool usedByAnotherCall(Communicator* c, bool ownCounted);

}  // namespace gdr::api
