// The one wait loop. Every wait of an operation (a collective, a send or
// receive, a device operation's progress thread) on what another thread, a
// peer or a device does (a message, a flag word, a stream) runs here: it
// polls, spins a while, then yields the core, then naps; once it lasts it
// reads the clock, runs the waiter's slow checks and ends at its deadline
// (GDR_TIMEOUT_MS) with a TimeoutError that names what was awaited. Set-up
// (sockets at the rendezvous) and teardown wait in their own ways.
//
// What differs between waiters is theirs, a Waiter with:
//   bool poll()           drives what the wait depends on; true if it moved
//   bool ready()          the condition
//   void checkEachPoll()  cheap checks that end the wait at once (throw)
//   void began()          the wait lasts (its first clock reading)
//   void checkNow()       slow checks, every kCheckEvery (throw)
//   void nap()            a short sleep once yielding has lasted
//   std::string what()    "waiting for ...", for the timeout only
// A template, so a communicator's small-message waits compile to a loop
// with no call per poll but the waiter's own.
#pragma once

#include <sched.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "core/error.h"

namespace gdr::progress {

struct Deadline {
  std::chrono::steady_clock::time_point at;
  int64_t ms = 0;  // the timeout it was made from, for messages
  static Deadline in(int64_t ms) {
    return {std::chrono::steady_clock::now() + std::chrono::milliseconds(ms), ms};
  }
  bool passed() const { return std::chrono::steady_clock::now() >= at; }
};

// When a wait spins, yields and naps. Counts are of idle polls (a poll that
// moves something starts the count again).
struct WaitRule {
  uint64_t spinPolls;                  // polls that only spin
  uint64_t napAfterPolls;              // then yield until this many polls,
  std::chrono::milliseconds napAfter;  // and this long since the wait began lasting;
  uint64_t napEvery;  // then nap on one poll in napEvery (a power of two), yield on the others
  int64_t timeoutMs;  // deadline after the wait began lasting (unless one is given)
};

// A caller's wait on its communicator's endpoints: spin GDR_SPIN_BEFORE_YIELD
// polls (0 where ranks outnumber cores), then yield, and after four times
// as many (and a thousand more) nap on every poll: the waiter sleeps in
// poll() on its sockets, which wakes as data arrives.
inline WaitRule callerWaits(int spinBeforeYield, int64_t timeoutMs) {
  const auto spin = static_cast<uint64_t>(spinBeforeYield < 0 ? 0 : spinBeforeYield);
  return {spin, 4 * spin + 1000, std::chrono::milliseconds(0), 1, timeoutMs};
}

// A progress thread's wait on a word or a stream: nothing wakes a sleeper,
// so it yields for the first 5 ms by the clock, not by count (on a VM whose
// sleeps round up to a scheduler tick, 4 ms at HZ=250, a nap taken too early
// is a 4 ms floor per wait), then naps on one poll in 64.
inline WaitRule progressThreadWaits(int64_t timeoutMs) {
  return {2048, 0, std::chrono::milliseconds(5), 64, timeoutMs};
}

// Idle polls between clock readings, and the period of the slow checks.
constexpr uint64_t kClockEvery = 64;
constexpr std::chrono::milliseconds kCheckEvery{5};

// Returns once w.ready() after a poll (a waiter with something to drive
// asks ready() itself first where that is free); throws what the waiter's
// checks throw, or a TimeoutError at the deadline: `by` where given (a
// job's waits share one), else rule.timeoutMs after the wait began lasting.
template <class Waiter>
void waitUntil(Waiter& w, const WaitRule& rule, const Deadline* by = nullptr) {
  using Clock = std::chrono::steady_clock;
  // The clock is read only once a wait lasts: most waits of small messages
  // end within a few polls.
  Clock::time_point deadline{}, nextCheck{}, napFrom{};
  bool lasting = false;
  uint64_t idle = 0;
  // Idle polls beyond which the wait naps: none until rule.napAfter has
  // passed (one compare per yield).
  uint64_t napBeyond = UINT64_MAX;
  for (;;) {
    const bool moved = w.poll();
    if (w.ready()) return;
    w.checkEachPoll();
    if (moved) {
      idle = 0;
      continue;
    }
    ++idle;
    if ((idle & (kClockEvery - 1)) == 0) {
      const auto now = Clock::now();
      if (!lasting) {
        lasting = true;
        w.began();
        deadline = by ? by->at : now + std::chrono::milliseconds(rule.timeoutMs);
        napFrom = now + rule.napAfter;
        nextCheck = now + kCheckEvery;
      }
      if (now >= nextCheck) {
        w.checkNow();
        if (now >= deadline)
          throw TimeoutError(strprintf("timed out after %lld ms %s (GDR_TIMEOUT_MS)",
                                       static_cast<long long>(by ? by->ms : rule.timeoutMs),
                                       w.what().c_str()));
        nextCheck = now + kCheckEvery;
      }
      if (now >= napFrom) napBeyond = rule.napAfterPolls;
    }
    if (idle > rule.spinPolls) {
      if (idle > napBeyond && (idle & (rule.napEvery - 1)) == 0)
        w.nap();
      else
        sched_yield();
    }
  }
}

}  // namespace gdr::progress
