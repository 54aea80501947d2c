// A view into a stuck job. Every communicator keeps a status board: the
// operation in flight (a collective, or a host send, receive or group
// batch of them: sequence number, kind, type, count, the step it is at, the
// peer of that step, since when it waits) and the last completed ones, and
// its device operations (comm/device_ops.h: in flight from launch until
// their completion is seen, the peer a stuck kernel waits for). On
// a timeout, on SIGUSR1 and when a client connects to the process's unix
// socket (GDR_STATUS_DIR/gdr-status-<pid>.sock), the
// process writes every board as text and JSON to
// GDR_STATUS_DIR/gdr-status-<host>-<pid>.{txt,json}; gdr-status
// (src/tools/gdr_status.cc) merges the ranks' reports into one answer.
//
// The signal handler only writes a byte to a pipe (async-signal-safe); a
// thread of the library's own, started with the first communicator, does
// the writing. The board's fast path is a few relaxed atomic stores per step
// and a seqlock's plain stores at the start and end of each operation.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "comm/device_ops.h"
#include "transport/transport.h"

namespace gdr::status {

// One operation, as a report shows it.
struct OpRecord {
  transport::OpSig sig;
  uint32_t steps = 0;
  P2P p2p = P2P::None;
  int peer = -1;  // a lone send's or receive's peer
  int64_t startNs = 0, endNs = 0;
  bool ok = true;
};

class StatusBoard {
 public:
  static constexpr size_t kHistory = 16;
  StatusBoard() = default;
  StatusBoard(const StatusBoard&) = delete;
  StatusBoard& operator=(const StatusBoard&) = delete;

  // Who the board belongs to, for the reports (set once, before register).
  void identify(int rank, int size, const std::string& commId);
  void begin(const transport::OpSig& sig, size_t steps) noexcept {
    begin(sig, steps, P2P::None, -1);
  }
  // A host send, receive or group batch of `steps` messages (each wait on
  // one is a step, with its peer and kind). Point-to-point operations have
  // their own sequence numbers (1, 2, ... on the communicator).
  void begin(const transport::OpSig& sig, size_t steps, P2P p2p, int peer) noexcept;
  // The step about to run (0-based; `steps` for the wait on sends after the
  // last), its peer (-1 for a local step) and kind (coll::StepKind).
  void step(size_t idx, int peer, uint8_t kind) noexcept {
    step_.store(static_cast<uint32_t>(idx), std::memory_order_relaxed);
    peer_.store(peer, std::memory_order_relaxed);
    kind_.store(kind, std::memory_order_relaxed);
  }
  // A wait that lasts began (now) or ended.
  void waitBegan() noexcept;
  void waitEnded() noexcept { waitSinceNs_.store(0, std::memory_order_relaxed); }
  void end(bool ok) noexcept;
  // A collective of one step that began and completed within the call (the
  // router's one-message path): begin and end in one write.
  void atOnce(const transport::OpSig& sig) noexcept;

  // The board as report lines (text) and as a JSON object.
  std::string text(int64_t nowNs) const;
  std::string json(int64_t nowNs) const;

  // The communicator's device operations (written by its device path),
  // made at the first use: a board without device work stays as small as
  // it was, so the communicator's hot fields keep their places.
  DeviceOps& device();
  ~StatusBoard() { delete device_.load(); }

 private:
  mutable std::mutex mu_;
  int rank_ = 0, size_ = 0;
  std::string commId_;
  // What begin/end write, on every collective: only the thread running the
  // communicator's calls writes it, without a lock or a locked instruction
  // (a seqlock: seq_ is odd while it writes); a report copies it and
  // retries if it raced a write.
  // The collective in flight is written in place, in the history slot it
  // will keep when it ends (fewer stores per call than a copy at the end).
  struct State {
    bool inFlight = false;
    OpRecord done[kHistory];
    uint64_t nDone = 0;
    const OpRecord& current() const { return done[nDone % kHistory]; }
    // Completed records a report shows (the in-flight one holds the oldest's slot).
    uint64_t completedShown() const { return std::min<uint64_t>(nDone, kHistory - (inFlight ? 1 : 0)); }
  };
  State snapshot() const noexcept;
  uint64_t openWrite() noexcept;
  bool on_ = false;  // GDR_STATUS: set by identify(); off, begin/end do nothing
  uint64_t p2pSeq_ = 0;  // written and read by the writer only
  std::atomic<uint64_t> seq_{0};
  State st_;
  std::atomic<uint32_t> step_{0};
  std::atomic<int> peer_{-1};
  std::atomic<uint8_t> kind_{0};
  std::atomic<int64_t> waitSinceNs_{0};
  std::atomic<DeviceOps*> device_{nullptr};
};

// An operation's fields as report lines show them ("seq=... coll=...
// dtype=... op=... count=...") and as JSON members.
std::string fieldsText(const transport::OpSig& sig, P2P p2p);
std::string fieldsJson(const transport::OpSig& sig, P2P p2p);

int64_t nowNs() noexcept;
// Whether reports are on (GDR_STATUS, read once).
bool enabled();
// Boards the reports cover; the first registration starts the writer
// thread, the signal handler and the socket (once per process, again after
// a fork).
void registerBoard(StatusBoard* b);
void unregisterBoard(StatusBoard* b);
// Writes the report files now, from the calling thread (a timeout's).
void reportNow(const char* reason) noexcept;
// The report text as the files and the socket give it.
std::string renderText(const char* reason);

}  // namespace gdr::status
