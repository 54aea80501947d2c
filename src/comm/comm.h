// The communicator: rank, size, one endpoint per peer (chosen by where the
// peer runs), configuration, and the error state. Collectives and
// point-to-point calls run on it (paths/host.cc, paths/p2p.cc); the API layer
// (src/api) checks arguments and converts errors.
#pragma once

#include <poll.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "collectives/links.h"
#include "collectives/schedule_cache.h"
#include "comm/path_state.h"
#include "comm/pre_mul_ops.h"
#include "comm/recovery.h"
#include "comm/status_report.h"
#include "comm/topo_plan.h"
#include "core/fault.h"
#include "core/function_ref.h"
#include "core/net.h"
#include "transport/shm/shm_backend.h"
#include "transport/transport.h"

namespace gdr {

struct CommConfig {
  int64_t timeoutMs = 300000;
  int spinBeforeYield = 2000;
  int checkMismatch = 1;
  int64_t chunkBytes = 0;  // GDR_CHUNK_BYTES: schedules' pipelining unit (0: none)
  std::string transport = "auto";  // auto, shm, socket, ib
  std::string algo;                // GDR_ALGO, frozen at init (every rank's agree)
  std::string tuningFile;          // GDR_TUNING_FILE, and a hash of its content (agreed too)
  uint64_t tuningHash = 0;
  size_t shmSlotBytes = 0, shmSlots = 0;
  FaultSpec fault;  // GDR_FAULT (tests)
};

// Where a rank can be reached: its TCP listener and the address of the CMA
// probe word in its own memory.
struct ConnInfo {
  net::PackedAddr sockAddr;
  uint64_t cmaProbeAddr;
};

// What each rank tells the others at set-up (fixed size, no pointers).
struct PeerInfo {
  char hostId[96];
  char gpuBusId[32];  // "" for a rank without a CUDA device
  int32_t pid;
  int32_t rank;
  uint64_t jobNonce;  // rank 0's is the job's
};

// A thread of a path's own that drives the endpoints while no call does
// (the staged path's progress thread): a revoke requested while it exists
// is applied on it, so no two threads touch an endpoint at once.
class AsyncDriver {
 public:
  // Called by a thread that holds the communicator; returns at once. The
  // driver's thread then calls Communicator::revokeHere (unless the
  // communicator failed first).
  virtual void takeRevoke() noexcept = 0;

 protected:
  ~AsyncDriver() = default;
};

class Communicator : public coll::Links {
 public:
  // Connects at once (blocking rendezvous through `boot`).
  Communicator(std::unique_ptr<boot::Bootstrap> boot);
  // A communicator whose rendezvous runs later, through start() (an init
  // inside gdrGroupStart/gdrGroupEnd: dispatch/group.h). Until then it is
  // pending: rank and size are known, nothing is connected.
  Communicator(int rank, int size);
  // Runs the rendezvous and connects (blocking). Throws on failure; the
  // caller then puts the communicator in the error state.
  void start(std::unique_ptr<boot::Bootstrap> boot);
  // A failed start(): the communicator leaves the pending state for the
  // error state (every later call fails with `text`; destroy frees it).
  void failStart(gdrResult_t code, const std::string& text) noexcept {
    fail(code, text);
    pending_.store(false, std::memory_order_release);
  }
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const override { return rank_; }
  int size() const { return size_; }
  const CommConfig& config() const { return cfg_; }
  bool pending() const { return pending_.load(std::memory_order_acquire); }
  // The CUDA device current when the communicator was created (-1: none);
  // device work on this communicator runs with it set.
  int device() const { return device_; }
  void setDevice(int device) { device_ = device; }
  transport::Endpoint* endpoint(int peer) const override { return eps_[peer].get(); }
  const char* transportTo(int peer) const { return eps_[peer] ? eps_[peer]->name() : "self"; }
  bool sameHost(int peer) const;
  // No other rank of this communicator shares this rank's host: every one of
  // its messages crosses the network (set at init).
  bool aloneOnHost() const { return aloneOnHost_; }
  bool ownCores() const override { return ownCores_; }
  // The job's secret (derives keys; never leaves the process).
  const security::JobSecret& jobSecret() const { return boot_->jobSecret(); }
  // Ring/tree order from the topology (identity when it brings nothing).
  const TopoPlan& topoPlan() const { return plan_; }

  // The next collective's sequence number (every rank counts the same way).
  uint64_t nextSeq() { return ++collSeq_; }
  uint64_t collectivesNumbered() const { return collSeq_; }  // GDR_FAULT's `op` of the last one
  std::vector<char>& scratch(size_t bytes);
  coll::ScheduleCache& schedules() { return schedules_; }

  // Progresses every endpoint until done() holds. Throws TimeoutError after
  // the deadline (its text names `what()`), or the error a peer reported; any
  // such failure puts the communicator in the error state first.
  void progressUntil(FunctionRef<bool()> done, FunctionRef<std::string()> what) override;

  // Lifetime. The handle registry holds one reference, every API call in
  // progress and every group share holding the communicator one more; the
  // last release frees it (so gdrCommAbort from one thread never frees it
  // under another thread's wait). retain() needs a reference already held.
  void retain() noexcept { refs_.fetch_add(1); }  // seq_cst: gdrCommRevoke reads it
  int refCount() const noexcept { return refs_.load(); }
  static void release(Communicator* c) noexcept;
  // gdrCommAbort: every wait on the communicator, on any thread, fails at
  // once; the peers are told when the waiter fails (or at the free).
  void requestAbort() noexcept { abortRequested_.store(true, std::memory_order_release); }

  // gdrCommRevoke (comm/revoke.cc): a waiting call on this rank fails at
  // once and tells the peers, as does the next call; the API layer calls
  // applyRevoke itself when no other call holds the communicator.
  void requestRevoke() noexcept { revokeRequested_.store(true); }
  // Tells the peers of a revoke requested here (idempotent; the calling
  // thread must be the one driving the communicator). With an async driver
  // (staged work) it hands the revoke to the driver's thread instead.
  void applyRevoke() noexcept;
  // The revoke itself, on the thread driving the endpoints.
  void revokeHere() noexcept;
  // An AsyncDriver's thread failed (code, text): the revoke it was handed
  // when one was requested, else the failure.
  void driverFailed(gdrResult_t code, const std::string& text) noexcept;
  bool revokeRequested() const { return revokeRequested_.load(); }
  // Registered by the path that owns the driver, cleared before it goes.
  void setAsyncDriver(AsyncDriver* d) noexcept { asyncDriver_.store(d); }
  // Why work on another thread must stop now: the error state's code, or
  // gdrRemoteError once a revoke or an abort was requested.
  gdrResult_t stopCode() const noexcept {
    const gdrResult_t code = asyncCode_.load();
    if (code != gdrSuccess) return code;
    return revokeRequested_.load() || abortRequested_.load() ? gdrRemoteError : gdrSuccess;
  }
  // Every rank's recovery listener (set up with the endpoints; null while pending).
  const RecoveryChannel* recovery() const { return recovery_.get(); }
  // What this communicator is doing, for status reports (comm/status_report.h).
  status::StatusBoard& status() { return status_; }

  // The rest of what schedules run over (collectives/links.h).
  const FaultSpec& fault() const override { return cfg_.fault; }
  int64_t timeoutMs() const override { return cfg_.timeoutMs; }
  void opBegan(const OpSig& sig, size_t steps) noexcept override { status_.begin(sig, steps); }
  void stepAt(size_t idx, int peer, uint8_t kind) noexcept override {
    status_.step(idx, peer, kind);
  }
  void opEnded(bool ok) noexcept override { status_.end(ok); }
  void opAtOnce(const OpSig& sig) noexcept { status_.atOnce(sig); }

  // Error state: set once by the first failure; every later call fails fast.
  void throwIfFailed();
  void fail(gdrResult_t code, const std::string& text) noexcept;
  gdrResult_t asyncError() const { return asyncCode_.load(); }
  void abortAll() noexcept;

  // Last error text, per communicator.
  void setLastError(const std::string& s);
  std::string lastError() const;

  // Each path's per-communicator state (see the members).
  PathSlot& selfMessages() { return selfMessages_; }
  PathSlot& devicePath() { return devicePath_; }
  const PathSlot& devicePath() const { return devicePath_; }
  PathSlot& stagedPath() { return stagedPath_; }
  PathSlot& directPath() { return directPath_; }
  PathSlot& directDecision() { return directDecision_; }

  // The PreMulSum ops made on this communicator.
  PreMulOps& preMulOps() { return preMulOps_; }

 private:
  void readConfig();
  void parseConfig();
  void connect();
  void connectSockets(const std::vector<PeerInfo>& peers, const std::vector<int>& remote);
  void checkPeers();
  void planPlacement();
  void registerStatus();

  std::unique_ptr<boot::Bootstrap> boot_;
  // A configuration that did not parse: start() fails with it on every rank.
  gdrResult_t configCode_ = gdrSuccess;
  std::string configError_;
  int rank_ = 0, size_ = 1;
  int device_ = -1;
  std::atomic<bool> pending_{false};
  CommConfig cfg_;
  bool aloneOnHost_ = false;
  bool ownCores_ = false;  // this host's ranks are no more than its online CPUs
  std::vector<PeerInfo> peers_;
  TopoPlan plan_;
  std::vector<std::unique_ptr<transport::Endpoint>> eps_;
  std::vector<transport::Endpoint*> active_;  // non-null endpoints
  std::vector<struct pollfd> pollFds_;        // one per active endpoint, when all have fds
  transport::shm::ShmBackend shm_;            // the segments behind the shm endpoints
  uint64_t collSeq_ = 0;
  std::vector<char> scratch_;
  coll::ScheduleCache schedules_;

  std::atomic<int> refs_{1};
  std::atomic<bool> abortRequested_{false};
  std::atomic<bool> revokeRequested_{false};
  std::unique_ptr<RecoveryChannel> recovery_;
  status::StatusBoard status_;
  bool statusRegistered_ = false;
  std::atomic<gdrResult_t> asyncCode_{gdrSuccess};
  std::string asyncText_;
  mutable std::mutex mu_;
  std::string lastError_;
  std::atomic<AsyncDriver*> asyncDriver_{nullptr};  // after the hot fields: none of them moves
  PreMulOps preMulOps_;

  // Per-path state, made by each path on first use. The last members, so
  // they go first and in reverse order, while the endpoints and the error
  // state they use still exist: the staged path (its progress thread runs
  // what is queued, over the endpoints), then the device path (the cuda_ipc
  // context), then the messages this rank sent to itself. The GPUDirect
  // path's context (a progress thread like the staged path's) goes first.
  PathSlot selfMessages_;
  PathSlot devicePath_;
  PathSlot stagedPath_;
  PathSlot directDecision_;
  PathSlot directPath_;
};

}  // namespace gdr

// The C handle is the communicator itself.
struct gdrComm final : gdr::Communicator {
  using gdr::Communicator::Communicator;
};

namespace gdr {

// One counted reference to a communicator (Communicator::retain), released
// when the holder goes.
class CommRef {
 public:
  CommRef() = default;
  explicit CommRef(Communicator* c) noexcept : c_(c) {
    if (c_) c_->retain();
  }
  CommRef(CommRef&& o) noexcept : c_(o.c_) { o.c_ = nullptr; }
  CommRef& operator=(CommRef&& o) noexcept {
    if (this != &o) {
      reset();
      c_ = o.c_;
      o.c_ = nullptr;
    }
    return *this;
  }
  CommRef(const CommRef&) = delete;
  CommRef& operator=(const CommRef&) = delete;
  ~CommRef() { reset(); }
  void reset() noexcept {
    if (c_) Communicator::release(c_);
    c_ = nullptr;
  }
  Communicator* get() const { return c_; }
  Communicator* operator->() const { return c_; }
  Communicator& operator*() const { return *c_; }

 private:
  Communicator* c_ = nullptr;
};

}  // namespace gdr
