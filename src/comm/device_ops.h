// Device operations on a communicator's status board (comm/status_report.h).
// A device call returns once its work is queued on a stream; the operation
// is in flight from then until its completion is seen: its path advances a
// counter (DeviceWords::done, core/device_words.h) as operations complete,
// in launch order, and a report compares it with the operations launched.
// A path whose kernels wait for peers counts the waits that last, per peer,
// so a report names the peer a stuck kernel waits for. A path takes part
// with a DeviceWords block of its own, one attach() and one launched() per
// operation (cuda_ipc's fused kernels, the staged path; the same two calls
// serve any other device path).
//
// The launching thread is the only writer of the records (a seqlock, plain
// stores, as the board's); nothing here runs for host operations.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "core/device_words.h"
#include "core/op_sig.h"

namespace gdr::status {

// What a point-to-point operation on the board is (None: a collective).
enum class P2P : uint8_t { None, Send, Recv, Batch };

class DeviceOps {
 public:
  static constexpr size_t kHistory = 16;
  DeviceOps() = default;
  DeviceOps(const DeviceOps&) = delete;
  DeviceOps& operator=(const DeviceOps&) = delete;

  // The path's words and its name (a string literal); once per
  // communicator, before its first launched(), by the launching thread.
  // `words` outlives the board's reports (the path frees it after detach()).
  void attach(const DeviceWords* words, const char* path) noexcept;
  // Before the path frees its words (a report reads them under the lock).
  void detach() noexcept;
  // Whether launched() records anything (attached, GDR_STATUS on).
  bool on() const noexcept { return words_ != nullptr; }
  // One operation queued, in the order the path counts completions. Device
  // operations have their own sequence numbers (1, 2, ...).
  void launched(const OpSig& sig, P2P p2p, int peer) noexcept;

  // Report lines ("device-inflight ...", "device-done ...") and the JSON
  // member ",\"device\":{...}"; nothing when no path attached.
  std::string text(int64_t nowNs) const;
  std::string json(int64_t nowNs) const;

 private:
  struct Rec {
    OpSig sig;
    P2P p2p = P2P::None;
    int peer = -1;
    int64_t startNs = 0;
  };
  struct View {  // what a report reads, consistently
    Rec recs[kHistory];
    uint64_t launched = 0, done = 0;
    uint32_t stage = 0;
    uint32_t waiting[kDeviceWaitPeers] = {};
  };
  View snapshot() const noexcept;

  mutable std::mutex mu_;  // attach/detach against reports
  const DeviceWords* words_ = nullptr;
  const char* path_ = "";
  uint32_t base_ = 0;  // words_->done at attach
  std::atomic<uint64_t> seq_{0};
  Rec recs_[kHistory];
  std::atomic<uint64_t> launched_{0};
};

// The signature a device operation shows with.
OpSig deviceSig(uint8_t kind, int dtype, int op, uint64_t count, int root);

}  // namespace gdr::status
