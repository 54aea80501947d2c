#include "comm/device_ops.h"

#include <algorithm>

#include "comm/status_report.h"
#include "core/error.h"

namespace gdr::status {

namespace {

uint32_t loadWord(const uint32_t* w) { return __atomic_load_n(w, __ATOMIC_ACQUIRE); }

// Launch times: the coarse clock, as the board's (a few ns per operation).
int64_t coarseNs() noexcept {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

}  // namespace

OpSig deviceSig(uint8_t kind, int dtype, int op, uint64_t count, int root) {
  OpSig s;
  s.kind = kind;
  s.dtype = static_cast<uint8_t>(dtype);
  s.op = static_cast<uint8_t>(op);
  s.count = count;
  s.root = root;
  return s;
}

void DeviceOps::attach(const DeviceWords* words, const char* path) noexcept {
  if (!enabled() || !words) return;
  std::lock_guard<std::mutex> g(mu_);
  if (words_) return;
  base_ = loadWord(&words->done);
  path_ = path;
  words_ = words;
}

void DeviceOps::detach() noexcept {
  std::lock_guard<std::mutex> g(mu_);
  words_ = nullptr;
}

void DeviceOps::launched(const OpSig& sig, P2P p2p, int peer) noexcept {
  if (!words_) return;
  const uint64_t s = seq_.load(std::memory_order_relaxed);
  seq_.store(s + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  const uint64_t n = launched_.load(std::memory_order_relaxed);
  Rec& r = recs_[n % kHistory];
  r.sig = sig;
  r.sig.seq = n + 1;
  r.p2p = p2p;
  r.peer = peer;
  r.startNs = coarseNs();
  launched_.store(n + 1, std::memory_order_release);
  seq_.store(s + 2, std::memory_order_release);
}

// Under mu_, attached. The completion count is read after the launches, so
// an operation counted done was launched (a count past the launches, e.g.
// of kernels replayed from a CUDA graph, is clamped).
DeviceOps::View DeviceOps::snapshot() const noexcept {
  View v;
  for (int attempt = 0; attempt < 10000; ++attempt) {
    const uint64_t a = seq_.load(std::memory_order_acquire);
    if (a & 1) continue;
    for (size_t i = 0; i < kHistory; ++i) v.recs[i] = recs_[i];
    v.launched = launched_.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (seq_.load(std::memory_order_relaxed) == a) break;
  }
  v.done = std::min<uint64_t>(static_cast<uint32_t>(loadWord(&words_->done) - base_), v.launched);
  v.stage = loadWord(&words_->stage);
  for (int p = 0; p < kDeviceWaitPeers; ++p) v.waiting[p] = loadWord(&words_->waiting[p]);
  return v;
}

// Of the operations in flight only the oldest can be the one that waits
// (stream order): it shows the peer waited for, and the staged path's stage.
std::string DeviceOps::text(int64_t now) const {
  std::lock_guard<std::mutex> g(mu_);
  if (!words_) return "";
  const View v = snapshot();
  std::string out;
  const uint64_t first = v.launched > kHistory ? v.launched - kHistory : 0;
  for (uint64_t i = std::max(first, v.done); i < v.launched; ++i) {
    const Rec& r = v.recs[i % kHistory];
    std::string waits;
    int peer = -1;  // the first peer a kernel waits for
    if (i == v.done) {
      for (int p = 0; p < kDeviceWaitPeers; ++p)
        if (v.waiting[p]) {
          if (peer < 0) peer = p;
          waits += (waits.empty() ? "" : ",") + std::to_string(p);
        }
      if (v.stage) waits = "stream:" + std::to_string(v.stage - 1);
    }
    const bool waitsForPeer = peer >= 0;
    if (peer < 0 && (r.p2p == P2P::Send || r.p2p == P2P::Recv)) peer = r.peer;
    // How long a kernel's wait lasts is not known to the host: the
    // operation's time in flight bounds it.
    const double elapsed = ms(now - r.startNs);
    out +=
        strprintf("device-inflight %s path=%s peer=%d waits=%s elapsed_ms=%.1f waiting_ms=%.1f\n",
                  fieldsText(r.sig, r.p2p).c_str(), path_, peer,
                  waits.empty() ? "-" : waits.c_str(), elapsed, waitsForPeer ? elapsed : -1.0);
  }
  for (uint64_t i = std::min(v.done, v.launched); i > first; --i) {
    const Rec& r = v.recs[(i - 1) % kHistory];
    const std::string peer =
        r.p2p == P2P::Send || r.p2p == P2P::Recv ? strprintf(" peer=%d", r.peer) : "";
    out += strprintf("device-done %s path=%s%s\n", fieldsText(r.sig, r.p2p).c_str(), path_,
                     peer.c_str());
  }
  return out;
}

std::string DeviceOps::json(int64_t now) const {
  std::lock_guard<std::mutex> g(mu_);
  if (!words_) return "";
  const View v = snapshot();
  const uint64_t first = v.launched > kHistory ? v.launched - kHistory : 0;
  std::string out =
      strprintf(",\"device\":{\"path\":\"%s\",\"launched\":%llu,\"completed\":%llu,\"in_flight\":[",
                path_, (unsigned long long)v.launched, (unsigned long long)v.done);
  for (uint64_t i = std::max(first, v.done); i < v.launched; ++i) {
    const Rec& r = v.recs[i % kHistory];
    std::string waits;
    if (i == v.done)
      for (int p = 0; p < kDeviceWaitPeers; ++p)
        if (v.waiting[p]) waits += (waits.empty() ? "" : ",") + std::to_string(p);
    out +=
        strprintf("%s{%s,\"peer\":%d,\"waits_for\":[%s],\"stream_segment\":%d,\"elapsed_ms\":%.1f}",
                  i == std::max(first, v.done) ? "" : ",", fieldsJson(r.sig, r.p2p).c_str(),
                  r.p2p == P2P::Send || r.p2p == P2P::Recv ? r.peer : -1, waits.c_str(),
                  i == v.done && v.stage ? static_cast<int>(v.stage) - 1 : -1, ms(now - r.startNs));
  }
  out += "],\"done\":[";
  for (uint64_t i = std::min(v.done, v.launched); i > first; --i) {
    const Rec& r = v.recs[(i - 1) % kHistory];
    out += strprintf("%s{%s}", i == std::min(v.done, v.launched) ? "" : ",",
                     fieldsJson(r.sig, r.p2p).c_str());
  }
  return out + "]}";
}

}  // namespace gdr::status
