#include "comm/comm.h"

#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>

#include "comm/config_vote.h"
#include "comm/host_id.h"
#include "core/error.h"
#include "core/log.h"
#include "core/params.h"
#include "progress/wait_loop.h"

namespace gdr {

Communicator::Communicator(std::unique_ptr<boot::Bootstrap> boot) {
  readConfig();
  start(std::move(boot));
}

Communicator::Communicator(int rank, int size) : rank_(rank), size_(size), pending_(true) { readConfig(); }

// A parse failure is kept, not thrown: start() first lets every rank know
// (comm/config_vote.h).
void Communicator::readConfig() {
  try {
    parseConfig();
  } catch (const Error& e) {
    configCode_ = e.code();
    configError_ = e.what();
  }
}

void Communicator::parseConfig() {
  cfg_.timeoutMs = param::getInt("GDR_TIMEOUT_MS");
  cfg_.spinBeforeYield = static_cast<int>(param::getInt("GDR_SPIN_BEFORE_YIELD"));
  cfg_.checkMismatch = static_cast<int>(param::getInt("GDR_CHECK_MISMATCH"));
  cfg_.chunkBytes = param::getInt("GDR_CHUNK_BYTES");
  if (cfg_.chunkBytes < 0) throw InvalidArgument("GDR_CHUNK_BYTES must not be negative");
  cfg_.transport = param::getString("GDR_TRANSPORT");
  if (cfg_.timeoutMs <= 0) throw InvalidArgument("GDR_TIMEOUT_MS must be positive");
  if (cfg_.transport != "auto" && cfg_.transport != "shm" && cfg_.transport != "socket" &&
      cfg_.transport != "ib")
    throw InvalidArgument("GDR_TRANSPORT=" + cfg_.transport + " is not one of auto, shm, socket, ib");
  cfg_.algo = param::getString("GDR_ALGO");
  coll::checkAlgoSpec(cfg_.algo);
  cfg_.tuningFile = param::getString("GDR_TUNING_FILE");
  cfg_.tuningHash = tuningFileHash(cfg_.tuningFile);
  const int64_t slotBytes = param::getInt("GDR_SHM_SLOT_BYTES"), slots = param::getInt("GDR_SHM_SLOTS");
  if (slotBytes < 64 || slotBytes > (64 << 20) || slotBytes % 64 || slots < 2 || slots > 4096 || (slots & (slots - 1)))
    throw InvalidArgument(
        "GDR_SHM_SLOT_BYTES must be a multiple of 64 in [64, 64M] and GDR_SHM_SLOTS a power of two in [2, 4096]");
  cfg_.shmSlotBytes = static_cast<size_t>(slotBytes);
  cfg_.shmSlots = static_cast<size_t>(slots);
  cfg_.fault = parseFault(param::getString("GDR_FAULT"));
}

void Communicator::start(std::unique_ptr<boot::Bootstrap> boot) {
  boot_ = std::move(boot);
  if (boot_->rank() != rank_ && pending()) throw InternalError("bootstrap rank differs from the pending rank");
  rank_ = boot_->rank();
  size_ = boot_->size();
  log::setContext(rank_, device_);
  agreeOnConfig(*boot_,
                makeConfigVote(configCode_, configError_, cfg_.checkMismatch, cfg_.chunkBytes,
                               cfg_.algo, cfg_.tuningFile, cfg_.tuningHash));
  connect();
  recovery_ = std::make_unique<RecoveryChannel>(*boot_, rank_, size_);
  boot_->setUpDone();
  registerStatus();
  // More ranks than cores on this host: a waiting rank must give its core
  // away at once or it starves the rank it waits for (as Open MPI's
  // yield-when-idle does when oversubscribed).
  int local = 0;
  for (int r = 0; r < size_; ++r) local += sameHost(r);
  aloneOnHost_ = local == 1 && size_ > 1;
  // Online CPUs, not this process's affinity: launchers bind each rank to
  // one core, which says nothing about how many the ranks share.
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  ownCores_ = cores > 0 && local <= cores;
  if (local > cores && !param::isSet("GDR_SPIN_BEFORE_YIELD")) {
    cfg_.spinBeforeYield = 0;
    GDR_INFO(kInit, "%d ranks on this host share %ld cores: waits yield at once", local, cores);
  }
  pending_.store(false, std::memory_order_release);
  GDR_INFO(kInit, "communicator ready: rank %d of %d, bootstrap %s", rank_, size_, boot_->name());
}

// The paths' state goes with the members (see comm.h), first of all.
Communicator::~Communicator() {
  // The device paths first: their progress threads may still drive the
  // endpoints (their queued jobs fail fast after an abort or a revoke).
  directPath_.reset();
  stagedPath_.reset();
  if (abortRequested_.load(std::memory_order_acquire)) abortAll();
  if (revokeRequested_.load()) applyRevoke();
  if (statusRegistered_) status::unregisterBoard(&status_);
}

bool Communicator::sameHost(int peer) const {
  return std::strncmp(peers_[peer].hostId, peers_[rank_].hostId, sizeof(PeerInfo::hostId)) == 0;
}

std::vector<char>& Communicator::scratch(size_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_;
}

void Communicator::throwIfFailed() {
  if (abortRequested_.load(std::memory_order_relaxed)) throw RemoteError("the communicator was aborted");
  if (revokeRequested_.load()) {
    applyRevoke();
    // Handed to the staged path's progress thread, it may not be applied
    // yet: this call fails all the same.
    if (asyncCode_.load() == gdrSuccess)
      throw RemoteError("the communicator was revoked (gdrCommRevoke)");
  }
  gdrResult_t code = asyncCode_.load();
  if (code == gdrSuccess) return;
  std::lock_guard<std::mutex> g(mu_);
  throw Error(code, "the communicator is unusable after an earlier failure: " + asyncText_);
}

void Communicator::fail(gdrResult_t code, const std::string& text) noexcept {
  gdrResult_t expected = gdrSuccess;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!asyncCode_.compare_exchange_strong(expected, code)) return;
    asyncText_ = text;
  }
  GDR_WARN(kInit, "rank %d: communicator failed: %s", rank_, text.c_str());
  for (auto* ep : active_) ep->sendAbort(code, strprintf("rank %d: %s", rank_, text.c_str()));
  for (auto* ep : active_) ep->reset();
}

void Communicator::release(Communicator* c) noexcept {
  if (c->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete static_cast<gdrComm*>(c);
}

void Communicator::abortAll() noexcept {
  fail(gdrRemoteError, "aborted by gdrCommAbort");
}

void Communicator::setLastError(const std::string& s) {
  std::lock_guard<std::mutex> g(mu_);
  lastError_ = s;
}

std::string Communicator::lastError() const {
  std::lock_guard<std::mutex> g(mu_);
  return lastError_;
}

void Communicator::checkPeers() {
  for (auto* ep : active_) ep->checkPeer();
}

void Communicator::progressUntil(FunctionRef<bool()> done, FunctionRef<std::string()> what) {
  if (done()) return;
  // A wait that lasts shows in status reports while it lasts.
  struct Lasting {
    status::StatusBoard& board;
    bool on = false;
    ~Lasting() {
      if (on) board.waitEnded();
    }
  } lasting{status_};
  // The one wait loop (progress/wait_loop.h) over this communicator's
  // endpoints.
  struct EndpointWaiter {
    Communicator& c;
    FunctionRef<bool()> done;
    FunctionRef<std::string()> whatFn;
    Lasting& lasting;

    bool poll() {
      bool moved = false;
      for (auto* ep : c.active_) moved |= ep->progress();
      return moved;
    }
    bool ready() { return done(); }
    void checkEachPoll() {
      if (c.abortRequested_.load(std::memory_order_relaxed))
        throw RemoteError("aborted by gdrCommAbort (from another thread) while this call waited");
      if (c.revokeRequested_.load(std::memory_order_relaxed))
        throw RemoteError(strprintf(
            "the communicator was revoked (gdrCommRevoke on rank %d) while this call waited",
            c.rank_));
    }
    void began() {
      lasting.on = true;
      c.status_.waitBegan();
    }
    void checkNow() { c.checkPeers(); }
    // With only sockets to watch, sleep in poll(); otherwise yield the core
    // (ranks may outnumber cores).
    void nap() {
      if (c.pollFds_.empty()) {
        sched_yield();
        return;
      }
      for (size_t i = 0; i < c.pollFds_.size(); ++i)
        c.pollFds_[i].events =
            static_cast<short>(POLLIN | (c.active_[i]->wantsWrite() ? POLLOUT : 0));
      ::poll(c.pollFds_.data(), c.pollFds_.size(), 1);
    }
    std::string what() { return whatFn(); }
  } waiter{*this, done, what, lasting};
  try {
    progress::waitUntil(waiter, progress::callerWaits(cfg_.spinBeforeYield, cfg_.timeoutMs));
  } catch (const Error& e) {
    // A peer's failure says where this rank waited (the peer and the step),
    // as a timeout does.
    if (e.code() == gdrTimeout) {
      status::reportNow("timeout");
      fail(e.code(), e.what());
      throw;
    }
    Error named(e.code(), strprintf("%s (%s)", e.what(), what().c_str()));
    fail(named.code(), named.what());
    throw named;
  }
}

}  // namespace gdr
