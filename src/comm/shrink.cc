#include "comm/shrink.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>

#include "core/error.h"
#include "core/log.h"
#include "security/boot_link.h"
#include "security/crypto.h"
#include "security/handshake.h"

namespace gdr {

namespace {

using Clock = net::Clock;
constexpr uint32_t kHelloMagic = 0x31485253;     // "SRH1": a survivor checks in
constexpr uint32_t kDecisionMagic = 0x31445253;  // "SRD1": the coordinator's answer
constexpr size_t kNonceBytes = 16;
constexpr int kProbeMs = 300;

// One authenticated connection of the agreement.
struct Link {
  int fd = -1;
  security::BootLink link;
  Link(int f, const security::SessionKeys& keys, const std::string& who)
      : fd(f), link(keys, false, who) {}
  ~Link() {
    if (fd >= 0) close(fd);
  }
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;
};

// The coordinator's answer: who is in (one byte per old rank) and the nonce
// the new job secret is derived with.
struct Decision {
  std::vector<uint8_t> member;
  uint8_t nonce[kNonceBytes] = {};
};

std::vector<uint8_t> helloBytes(int rank, const std::vector<uint8_t>& out) {
  std::vector<uint8_t> m(8 + out.size());
  const uint32_t magic = kHelloMagic;
  const int32_t r = rank;
  std::memcpy(m.data(), &magic, 4);
  std::memcpy(m.data() + 4, &r, 4);
  std::memcpy(m.data() + 8, out.data(), out.size());
  return m;
}

std::vector<uint8_t> decisionBytes(const Decision& d) {
  std::vector<uint8_t> m(4 + d.member.size() + kNonceBytes);
  const uint32_t magic = kDecisionMagic;
  std::memcpy(m.data(), &magic, 4);
  std::memcpy(m.data() + 4, d.member.data(), d.member.size());
  std::memcpy(m.data() + 4 + d.member.size(), d.nonce, kNonceBytes);
  return m;
}

// The new communicator's set-up exchange over the agreement's connections:
// its rank 0 (the coordinator) gathers every piece and sends the whole back.
class StarBootstrap final : public boot::Bootstrap {
 public:
  StarBootstrap(int rank, int size, std::vector<std::unique_ptr<Link>> links,
                const security::JobSecret& secret, int64_t timeoutMs)
      : rank_(rank),
        size_(size),
        links_(std::move(links)),
        secret_(secret),
        timeoutMs_(timeoutMs) {}
  ~StarBootstrap() override { security::wipe(&secret_, sizeof(secret_)); }
  const char* name() const override { return "shrink"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allgather(void* data, size_t bytes) override {
    auto* p = static_cast<uint8_t*>(data);
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs_);
    if (links_.empty()) throw InternalError("the shrunk communicator's set-up ran after it ended");
    if (rank_ == 0) {
      for (int r = 1; r < size_; ++r)
        links_[r]->link.recv(links_[r]->fd, p + r * bytes, bytes, deadline);
      for (int r = 1; r < size_; ++r)
        links_[r]->link.send(links_[r]->fd, p, size_ * bytes, deadline);
    } else {
      links_[0]->link.send(links_[0]->fd, p + rank_ * bytes, bytes, deadline);
      links_[0]->link.recv(links_[0]->fd, p, size_ * bytes, deadline);
    }
  }
  void barrier() override {
    std::vector<uint8_t> b(static_cast<size_t>(size_));
    allgather(b.data(), 1);
  }
  const security::JobSecret& jobSecret() const override { return secret_; }
  void setUpDone() override { links_.clear(); }

 private:
  int rank_, size_;
  std::vector<std::unique_ptr<Link>> links_;  // coordinator: by new rank (0 empty); others: [0]
  security::JobSecret secret_;
  int64_t timeoutMs_;
};

class Shrinker {
 public:
  Shrinker(Communicator& old, const std::vector<int>& exclude)
      : old_(old),
        rc_(*old.recovery()),
        me_(old.rank()),
        n_(old.size()),
        timeoutMs_(old.config().timeoutMs),
        out_(static_cast<size_t>(old.size()), 0) {
    for (int r : exclude) {
      if (r < 0 || r >= n_)
        throw InvalidArgument(strprintf("excluded rank %d is outside [0, %d)", r, n_));
      if (r == me_) throw InvalidUsage(strprintf("rank %d is in its own exclude list", r));
      out_[r] = 1;
    }
  }

  gdrComm* run() {
    std::string last = "no attempt";
    for (int attempt = 1; attempt <= n_; ++attempt) {
      probeAll();
      const int c = static_cast<int>(std::find(out_.begin(), out_.end(), 0) - out_.begin());
      GDR_INFO(kInit, "rank %d: shrink attempt %d, coordinator rank %d", me_, attempt, c);
      std::vector<std::unique_ptr<Link>> links;
      Decision d;
      try {
        d = c == me_ ? coordinate(links) : join(c, links);
      } catch (const Error& e) {
        // Lost the coordinator: it died or stopped answering during the agreement.
        last = strprintf("rank %d, the coordinator, failed during the agreement: %s", c, e.what());
        GDR_INFO(kInit, "rank %d: %s", me_, last.c_str());
        out_[c] = 1;
        continue;
      }
      if (!d.member[me_])
        throw RemoteError(
            strprintf("the surviving ranks left rank %d out of the shrunk communicator", me_));
      try {
        return build(d, std::move(links));
      } catch (const Error& e) {
        last = strprintf("the shrunk communicator's set-up failed: %s", e.what());
        GDR_INFO(kInit, "rank %d: %s; agreeing again", me_, last.c_str());
      }
    }
    throw RemoteError("the surviving ranks could not agree on a shrunk communicator: " + last);
  }

 private:
  // Counts out every rank whose listener refuses (its process is gone).
  void probeAll() {
    for (int r = 0; r < n_; ++r)
      if (r != me_ && !out_[r] && !rc_.probe(r, kProbeMs)) {
        GDR_INFO(kInit, "rank %d: rank %d does not answer; leaving it out", me_, r);
        out_[r] = 1;
      }
  }

  Decision join(int c, std::vector<std::unique_ptr<Link>>& links) {
    const std::string who = strprintf("rank %d (the shrink's coordinator)", c);
    // The coordinator waits up to GDR_TIMEOUT_MS for the last rank, then answers.
    const auto deadline = Clock::now() + std::chrono::milliseconds(2 * timeoutMs_ + 1000);
    int fd =
        net::connectTo(rc_.addressOf(c), Clock::now() + std::chrono::milliseconds(kProbeMs), who);
    security::SessionKeys keys;
    std::unique_ptr<Link> link;
    try {
      security::Initiator ini(old_.jobSecret(), security::Channel::Recovery, me_, c, false);
      ini.start(fd, deadline, who);
      keys = ini.finish(fd, deadline, who);
    } catch (...) {
      close(fd);
      throw;
    }
    link = std::make_unique<Link>(fd, keys, who);
    security::wipe(&keys, sizeof(keys));
    auto hello = helloBytes(me_, out_);
    link->link.send(fd, hello.data(), hello.size(), deadline);
    std::vector<uint8_t> m(4 + n_ + kNonceBytes);
    link->link.recv(fd, m.data(), m.size(), deadline);
    uint32_t magic;
    std::memcpy(&magic, m.data(), 4);
    if (magic != kDecisionMagic)
      throw RemoteError("the shrink's coordinator sent something else than its answer");
    Decision d;
    d.member.assign(m.begin() + 4, m.begin() + 4 + n_);
    std::memcpy(d.nonce, m.data() + 4 + n_, kNonceBytes);
    links.push_back(std::move(link));
    return d;
  }

  Decision coordinate(std::vector<std::unique_ptr<Link>>& links) {
    links.clear();
    links.resize(static_cast<size_t>(n_));
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs_);
    auto nextProbe = Clock::now() + std::chrono::milliseconds(100);
    auto waiting = [&] {
      for (int r = 0; r < n_; ++r)
        if (r != me_ && !out_[r] && !links[r]) return true;
      return false;
    };
    while (waiting() && Clock::now() < deadline) {
      pollfd p = {rc_.listenFd(), POLLIN, 0};
      if (poll(&p, 1, 50) == 1) admitOne(links);
      if (Clock::now() >= nextProbe) {
        probeAll();
        nextProbe = Clock::now() + std::chrono::milliseconds(100);
      }
    }
    for (int r = 0; r < n_; ++r)
      if (r != me_ && !out_[r] && !links[r]) {
        GDR_WARN(kInit, "rank %d did not check in within GDR_TIMEOUT_MS (%lld ms); leaving it out",
                 r, (long long)timeoutMs_);
        out_[r] = 1;
      }
    Decision d;
    d.member.assign(static_cast<size_t>(n_), 0);
    for (int r = 0; r < n_; ++r) d.member[r] = !out_[r] && (r == me_ || links[r]);
    security::randomBytes(d.nonce, kNonceBytes);
    auto m = decisionBytes(d);
    const auto sendBy = Clock::now() + std::chrono::milliseconds(timeoutMs_);
    for (int r = 0; r < n_; ++r) {
      if (!links[r]) continue;
      try {
        links[r]->link.send(links[r]->fd, m.data(), m.size(), sendBy);
      } catch (const Error& e) {
        // It died since it checked in: the set-up fails and the survivors agree again.
        GDR_INFO(kInit, "rank %d: the answer to rank %d failed: %s", me_, r, e.what());
      }
      if (!d.member[r]) links[r].reset();
    }
    return d;
  }

  // One connection on the listener: a survivor checking in, or a probe
  // (which closes at once and is dropped).
  void admitOne(std::vector<std::unique_ptr<Link>>& links) {
    int fd = accept4(rc_.listenFd(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    net::setNoDelay(fd);
    try {
      security::Acceptor acc(old_.jobSecret(), security::Channel::Recovery, me_, false);
      int r = acc.start(fd, [&](int rank) -> const char* {
        return rank >= 0 && rank < n_ && rank != me_ ? nullptr : "not a rank of this communicator";
      });
      security::SessionKeys keys = acc.finish(fd);
      auto link = std::make_unique<Link>(fd, keys, strprintf("rank %d", r));
      security::wipe(&keys, sizeof(keys));
      fd = -1;
      std::vector<uint8_t> m(8 + n_);
      link->link.recv(link->fd, m.data(), m.size(),
                      security::authDeadline(Clock::time_point::max()));
      uint32_t magic;
      int32_t from;
      std::memcpy(&magic, m.data(), 4);
      std::memcpy(&from, m.data() + 4, 4);
      if (magic != kHelloMagic || from != r) throw RemoteError("not a shrink check-in");
      for (int x = 0; x < n_; ++x)
        if (m[8 + x] && x != me_) out_[x] = 1;
      links[r] = std::move(link);  // a newer check-in replaces an older one
    } catch (const Error& e) {
      if (fd >= 0) close(fd);
      GDR_INFO(kInit, "rank %d: dropped a connection on the recovery listener: %s", me_, e.what());
    }
  }

  gdrComm* build(const Decision& d, std::vector<std::unique_ptr<Link>> links) {
    std::vector<int> members;
    for (int r = 0; r < n_; ++r)
      if (d.member[r]) members.push_back(r);
    const int newRank =
        static_cast<int>(std::find(members.begin(), members.end(), me_) - members.begin());
    std::vector<std::unique_ptr<Link>> star;
    if (newRank == 0) {
      for (int r : members) star.push_back(r == me_ ? nullptr : std::move(links[r]));
    } else {
      star.push_back(std::move(links[0]));
    }
    // New keys: the old secret through the nonce and the member list.
    std::vector<uint8_t> info(d.nonce, d.nonce + kNonceBytes);
    info.insert(info.end(), d.member.begin(), d.member.end());
    security::JobSecret secret;
    const security::JobSecret& oldSecret = old_.jobSecret();
    uint8_t okm[security::kKeyBytes + security::kJobIdBytes];
    static const char kLabel[] = "gdrcoll shrink";
    std::vector<uint8_t> label(kLabel, kLabel + sizeof(kLabel));
    label.insert(label.end(), info.begin(), info.end());
    security::hkdfSha256(oldSecret.key, sizeof(oldSecret.key), oldSecret.jobId,
                         sizeof(oldSecret.jobId), label.data(), label.size(), okm, sizeof(okm));
    std::memcpy(secret.key, okm, security::kKeyBytes);
    std::memcpy(secret.jobId, okm + security::kKeyBytes, security::kJobIdBytes);
    security::wipe(okm, sizeof(okm));
    auto boot = std::make_unique<StarBootstrap>(newRank, static_cast<int>(members.size()),
                                                std::move(star), secret, timeoutMs_);
    security::wipe(&secret, sizeof(secret));
    auto* c = new gdrComm(std::move(boot));
    c->setDevice(old_.device());
    GDR_INFO(kInit, "rank %d is rank %d of %zu in the shrunk communicator", me_, newRank,
             members.size());
    return c;
  }

  Communicator& old_;
  const RecoveryChannel& rc_;
  int me_, n_;
  int64_t timeoutMs_;
  std::vector<uint8_t> out_;  // per old rank: 1 = left out (excluded, dead or silent)
};

}  // namespace

gdrComm* shrinkCommunicator(Communicator& old, const std::vector<int>& exclude) {
  if (old.pending()) throw InvalidUsage("the communicator is not connected yet (inside a group)");
  if (!old.recovery()) throw InvalidUsage("the communicator has no recovery listener");
  // A peer still waiting in the old communicator comes out (the caller is
  // the thread that drives it).
  old.requestRevoke();
  old.applyRevoke();
  return Shrinker(old, exclude).run();
}

}  // namespace gdr
