// TCP bootstrap. gdrGetUniqueId starts a rendezvous service (a thread) on a
// listening socket; the unique id carries its address, a random job id and
// the job's secret (or, under GDR_AUTH_KEY_FILE, a flag saying every rank
// reads the secret from that file). The id is handed to ranks out of band, so
// it must be treated as a secret. Every rank connects to the service,
// authenticates (security/handshake.h), and sends its own listening address;
// once all have checked in, the service hands each the table of addresses
// and exits. Ranks then form a ring (connect to the next, accept from the
// previous, both authenticated) and run allgather around it. Every message
// after a handshake travels sealed (security/boot_link.h): authenticated and
// numbered always, encrypted too under GDR_ENCRYPT=1.
//
// An id made for a fixed address (GDR_COMM_ID, NCCL_COMM_ID, or a launcher's
// environment) says so in a flag: then no service runs in the process that
// made the id; rank 0 starts it at that address inside its own init, and the
// others retry their connection until it listens.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "bootstrap/accept_pool.h"
#include "bootstrap/bootstrap.h"
#include "bootstrap/env_select.h"
#include "core/error.h"
#include "core/lib_thread.h"
#include "core/log.h"
#include "core/net.h"
#include "core/params.h"
#include "security/boot_link.h"
#include "security/bootstrap_wire.h"
#include "security/handshake.h"

namespace gdr::boot {

namespace {

constexpr uint64_t kIdMagic = 0x6764725f69643032ull;  // "gdr_id02"
constexpr uint16_t kIdKeyFromFile = 1;
constexpr uint16_t kIdRankZeroServes = 2;

struct IdBlob {
  uint64_t magic;
  uint16_t version;
  uint16_t flags;
  uint32_t reserved;
  uint8_t jobId[security::kJobIdBytes];
  net::PackedAddr root;
  uint8_t key[security::kKeyBytes];  // zero under kIdKeyFromFile
};
static_assert(sizeof(IdBlob) <= GDR_UNIQUE_ID_BYTES, "unique id too small");

// A rank that passed the handshake and sent its hello.
struct CheckIn {
  security::BootLink link;
  security::RvHello hello{};
};

void sendVerdict(int fd, security::BootLink& link, gdrResult_t code, const std::string& reason,
                 net::Clock::time_point deadline) noexcept {
  security::RvVerdict v{};
  v.magic = security::kRvVerdictMagic;
  v.code = code;
  std::snprintf(v.reason, sizeof(v.reason), "%s", reason.c_str());
  try {
    link.send(fd, &v, sizeof(v), deadline);
  } catch (const Error& e) {
    GDR_WARN(kBoot, "rendezvous: could not tell a rank '%s': %s", reason.c_str(), e.what());
  }
}

// The ranks of [0, n) whose fd is still -1, as "1, 4, 7" (the first few).
std::string missingRanks(const std::vector<int>& fds) {
  std::string out;
  int shown = 0, missing = 0;
  for (size_t r = 0; r < fds.size(); ++r) {
    if (fds[r] >= 0) continue;
    ++missing;
    if (shown++ < 8) out += strprintf("%s%zu", out.empty() ? "" : ", ", r);
  }
  if (missing > shown) out += strprintf(" and %d more", missing - shown);
  return out;
}

// The rendezvous service: collects every rank's address, then sends the
// table. Handshakes run concurrently (boot/accept_pool.h); what a hello
// claims is checked here, and a refused rank is told why.
void rendezvous(int listenFd, security::JobSecret secret) {
  std::vector<int> fds;
  std::vector<security::BootLink> links;
  std::vector<net::PackedAddr> table;
  int nranks = -1, joined = 0;
  auto deadline = net::deadlineFromNow();
  try {
    AcceptPool<CheckIn> pool(listenFd, [&secret, deadline](int fd) {
      security::Acceptor acc(secret, security::Channel::Rendezvous, security::kServiceRank, false);
      acc.followPeerEncryptFlag();
      // Which ranks may join is decided once the hello is in (below).
      int claimed = acc.start(fd, [](int) -> const char* { return nullptr; });
      CheckIn c;
      c.link = security::BootLink(acc.finish(fd), acc.encrypted(), strprintf("rank %d", claimed));
      uint8_t buf[sizeof(security::RvHello)];
      c.link.recv(fd, buf, sizeof(buf), security::authDeadline(deadline));
      if (const char* err = security::parseRvHello(buf, sizeof(buf), &c.hello)) throw security::AuthRefused(err);
      if (c.hello.rank != claimed) throw security::AuthRefused("hello for another rank than it authenticated as");
      return c;
    }, "ranks at the rendezvous");
    while (nranks < 0 || joined < nranks) {
      std::pair<int, CheckIn> in;
      try {
        in = pool.next(deadline);
      } catch (const TimeoutError&) {
        const std::string why = nranks < 0 ? std::string("no rank checked in")
                                           : strprintf("rank(s) %s did not check in within GDR_TIMEOUT_MS (%d of %d did)",
                                                       missingRanks(fds).c_str(), joined, nranks);
        for (int r = 0; r < nranks; ++r)
          if (fds[r] >= 0) sendVerdict(fds[r], links[r], gdrTimeout, why, net::deadlineFromNow());
        throw TimeoutError(why);
      }
      const int fd = in.first;
      const security::RvHello& h = in.second.hello;
      std::string refused;
      if (nranks >= 0 && h.nranks != nranks)
        refused = strprintf("it says the job has %d ranks, rank(s) that checked in before say %d", h.nranks, nranks);
      else if (nranks >= 0 && fds[h.rank] >= 0)
        refused = strprintf("rank %d already checked in (two processes claim rank %d)", h.rank, h.rank);
      if (!refused.empty()) {
        GDR_WARN(kBoot, "rendezvous: refused rank %d from %s: %s", h.rank, net::peerName(fd).c_str(),
                 refused.c_str());
        sendVerdict(fd, in.second.link, gdrInvalidUsage, "the rendezvous service refused this rank: " + refused,
                    security::authDeadline(deadline));
        close(fd);
        continue;
      }
      if (nranks < 0) {
        nranks = h.nranks;
        fds.assign(nranks, -1);
        links.resize(nranks);
        table.resize(nranks);
      }
      fds[h.rank] = fd;
      links[h.rank] = std::move(in.second.link);
      table[h.rank] = h.addr;
      ++joined;
    }
    for (int r = 0; r < nranks; ++r) {
      sendVerdict(fds[r], links[r], gdrSuccess, "", deadline);
      links[r].send(fds[r], table.data(), table.size() * sizeof(net::PackedAddr), deadline);
    }
  } catch (const Error& e) {
    GDR_WARN(kBoot, "rendezvous service gave up: %s", e.what());
  }
  for (int fd : fds)
    if (fd >= 0) close(fd);
  close(listenFd);
  security::wipe(&secret, sizeof(secret));
}

class TcpBootstrap final : public Bootstrap {
 public:
  TcpBootstrap(const gdrUniqueId& id, int rank, int nranks, int localRank)
      : rank_(rank), size_(nranks), localRank_(localRank), encrypt_(param::getBool("GDR_ENCRYPT")) {
    IdBlob blob;
    std::memcpy(&blob, id.internal, sizeof(blob));
    if (blob.magic != kIdMagic || blob.version != security::kProtocolVersion)
      throw InvalidArgument("the unique id is not one made by gdrGetUniqueId of this gdrcoll version");
    if (security::checkPackedAddr(blob.root)) throw InvalidArgument("the unique id holds no valid address");
    if (nranks < 1 || nranks > security::kMaxRanks) throw InvalidArgument("rank count out of range");
    std::memcpy(secret_.jobId, blob.jobId, sizeof(secret_.jobId));
    if (blob.flags & kIdKeyFromFile) {
      if (!security::keyFromFile(secret_.key))
        throw InvalidArgument("the unique id was made under GDR_AUTH_KEY_FILE; set it on every rank too");
    } else {
      std::memcpy(secret_.key, blob.key, sizeof(secret_.key));
    }
    const bool serve = (blob.flags & kIdRankZeroServes) && rank == 0;
    const net::Addr root = net::unpack(blob.root);
    security::wipe(&blob, sizeof(blob));
    if (serve) serveRendezvous(root);
    auto deadline = net::deadlineFromNow();
    net::Addr mine;
    int listenFd = net::listenOn(net::localAddr(), &mine);
    try {
      std::vector<net::PackedAddr> table(nranks);
      checkIn(id, mine, table, deadline);
      if (nranks > 1) formRing(listenFd, table, deadline);
    } catch (...) {
      close(listenFd);
      throw;
    }
    close(listenFd);
  }
  ~TcpBootstrap() override {
    if (next_ >= 0) close(next_);
    if (prev_ >= 0) close(prev_);
    security::wipe(&secret_, sizeof(secret_));
  }
  const char* name() const override { return "tcp"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int localRank() const override { return localRank_; }
  const security::JobSecret& jobSecret() const override { return secret_; }

  // Each piece goes round sealed; both directions carry envelopes of one size.
  void allgather(void* data, size_t bytesPerRank) override {
    char* base = static_cast<char*>(data);
    auto deadline = net::deadlineFromNow();
    size_t wire = toNext_.wireBytes(bytesPerRank);
    std::vector<uint8_t> out(wire), in(wire);
    for (int s = 0; s < size_ - 1; ++s) {
      int sendPiece = (rank_ - s + size_) % size_;
      int recvPiece = (rank_ - s - 1 + size_) % size_;
      toNext_.seal(base + sendPiece * bytesPerRank, bytesPerRank, out.data());
      net::exchange(next_, out.data(), prev_, in.data(), wire, deadline, "bootstrap ring neighbours");
      fromPrev_.open(in.data(), wire, base + recvPiece * bytesPerRank, bytesPerRank);
    }
  }
  void barrier() override {
    std::vector<char> dummy(size_);
    allgather(dummy.data(), 1);
  }

 private:
  void serveRendezvous(const net::Addr& at) {
    int fd = -1;
    try {
      fd = net::listenAt(at);
    } catch (const Error& e) {
      throw InvalidArgument(
          strprintf("rank 0 hosts the rendezvous at %s and cannot listen there (is it an address "
                    "of rank 0's host, and the port free?): %s",
                    at.str().c_str(), e.what()));
    }
    GDR_INFO(kBoot, "rank 0 serves the rendezvous at %s", at.str().c_str());
    libThread("rendezvous", [fd, s = secret_] { rendezvous(fd, s); }).detach();
  }

  void checkIn(const gdrUniqueId& id, const net::Addr& mine, std::vector<net::PackedAddr>& table,
               net::Clock::time_point deadline) {
    IdBlob blob;
    std::memcpy(&blob, id.internal, sizeof(blob));
    const char* who = "the rendezvous service";
    int rootFd = net::connectTo(net::unpack(blob.root), deadline, who);
    try {
      security::Initiator ini(secret_, security::Channel::Rendezvous, rank_, security::kServiceRank, encrypt_);
      ini.start(rootFd, deadline, who);
      security::BootLink link(ini.finish(rootFd, deadline, who), encrypt_, who);
      security::RvHello h{security::kRvMagic, security::kProtocolVersion, 0, rank_, size_, net::pack(mine)};
      link.send(rootFd, &h, sizeof(h), deadline);
      security::RvVerdict v;
      uint8_t vbuf[sizeof(security::RvVerdict)];
      // The service answers by its own deadline (it started first) with
      // the ranks still missing; the grace lets that answer arrive when
      // this rank started at about the same time.
      link.recv(rootFd, vbuf, sizeof(vbuf), deadline + std::chrono::seconds(1),
                "the rendezvous service (are all ranks started?)");
      if (const char* err = security::parseRvVerdict(vbuf, sizeof(vbuf), &v))
        throw RemoteError(strprintf("the rendezvous service sent a malformed verdict: %s", err));
      if (v.code != gdrSuccess) throw Error(static_cast<gdrResult_t>(v.code), v.reason);
      size_t bytes = table.size() * sizeof(net::PackedAddr);
      link.recv(rootFd, table.data(), bytes, deadline, "the rendezvous service (are all ranks started?)");
      if (const char* err = security::checkAddrTable(table.data(), bytes, size_))
        throw RemoteError(strprintf("the rendezvous service sent a malformed table: %s", err));
    } catch (...) {
      close(rootFd);
      throw;
    }
    close(rootFd);
  }

  // Every rank is initiator toward the next and acceptor toward the
  // previous. The acceptor side runs on the pool's threads (both steps of
  // security/handshake.h), so this thread's initiator never waits on it and
  // a connection that is not the neighbour's never delays the neighbour.
  void formRing(int listenFd, const std::vector<net::PackedAddr>& table, net::Clock::time_point deadline) {
    int nextRank = (rank_ + 1) % size_, prevRank = (rank_ - 1 + size_) % size_;
    std::string nextName = strprintf("rank %d", nextRank), prevName = strprintf("rank %d", prevRank);
    AcceptPool<security::BootLink> pool(listenFd, [&](int fd) {
      security::Acceptor acc(secret_, security::Channel::BootRing, rank_, encrypt_);
      acc.start(fd, [prevRank](int r) -> const char* { return r == prevRank ? nullptr : "not this rank's ring neighbour"; });
      return security::BootLink(acc.finish(fd), encrypt_, prevName);
    }, prevName);
    next_ = net::connectTo(net::unpack(table[nextRank]), deadline, nextName);
    security::Initiator ini(secret_, security::Channel::BootRing, rank_, nextRank, encrypt_);
    ini.start(next_, deadline, nextName);
    toNext_ = security::BootLink(ini.finish(next_, deadline, nextName), encrypt_, nextName);
    std::pair<int, security::BootLink> prev = pool.next(deadline);
    prev_ = prev.first;
    fromPrev_ = std::move(prev.second);
  }

  int rank_, size_, localRank_;
  bool encrypt_;
  security::JobSecret secret_{};
  security::BootLink toNext_, fromPrev_;  // sealing toward the next rank, opening from the previous
  int next_ = -1, prev_ = -1;
};

}  // namespace

void createUniqueId(gdrUniqueId* id) {
  std::memset(id, 0, sizeof(*id));
  security::JobSecret secret = security::generateJobSecret();
  bool fromFile = security::keyFromFile(secret.key);
  net::Addr bound;
  int fd = net::listenOn(net::localAddr(), &bound, 1024);
  IdBlob blob{};
  blob.magic = kIdMagic;
  blob.version = security::kProtocolVersion;
  blob.flags = fromFile ? kIdKeyFromFile : 0;
  std::memcpy(blob.jobId, secret.jobId, sizeof(blob.jobId));
  blob.root = net::pack(bound);
  if (!fromFile) std::memcpy(blob.key, secret.key, sizeof(blob.key));
  std::memcpy(id->internal, &blob, sizeof(blob));
  security::wipe(&blob, sizeof(blob));
  GDR_INFO(kBoot, "rendezvous service listening on %s%s", bound.str().c_str(),
           fromFile ? " (job key from GDR_AUTH_KEY_FILE)" : "");
  libThread("rendezvous", [fd, secret] { rendezvous(fd, secret); }).detach();
  security::wipe(&secret, sizeof(secret));
}

std::unique_ptr<Bootstrap> makeTcpBootstrap(const gdrUniqueId& id, int rank, int nranks,
                                            int localRank) {
  return std::make_unique<TcpBootstrap>(id, rank, nranks, localRank);
}

void addressUniqueId(const std::string& hostPort, bool fromEnvironment, int nranks,
                     gdrUniqueId* id) {
  std::string host;
  int port = 0;
  if (!splitHostPort(hostPort, &host, &port))
    throw InvalidArgument(strprintf("%s is not host:port", hostPort.c_str()));
  std::memset(id, 0, sizeof(*id));
  security::JobSecret secret = security::generateJobSecret();
  bool fromFile = security::keyFromFile(secret.key);
  if (fromEnvironment && !fromFile)
    throw InvalidArgument(
        strprintf("a rendezvous at %s from the environment has no way to hand ranks a secret: set "
                  "GDR_AUTH_KEY_FILE to a "
                  "file (mode 600, the same contents on every rank), or launch with PMIx (mpirun, "
                  "srun --mpi=pmix)",
                  hostPort.c_str()));
  if (fromEnvironment) {
    // Public, the same on every rank of this job, different for another
    // address or size; keyed so it says nothing about the key.
    std::string label = strprintf("gdrcoll job id|%s|%d", hostPort.c_str(), nranks);
    uint8_t mac[security::kMacBytes];
    security::hmacSha256(secret.key, label.data(), label.size(), mac);
    std::memcpy(secret.jobId, mac, sizeof(secret.jobId));
  }
  IdBlob blob{};
  blob.magic = kIdMagic;
  blob.version = security::kProtocolVersion;
  blob.flags = kIdRankZeroServes | (fromFile ? kIdKeyFromFile : 0);
  std::memcpy(blob.jobId, secret.jobId, sizeof(blob.jobId));
  blob.root = net::pack(net::resolve(host, port));
  if (!fromFile) std::memcpy(blob.key, secret.key, sizeof(blob.key));
  std::memcpy(id->internal, &blob, sizeof(blob));
  security::wipe(&blob, sizeof(blob));
  security::wipe(&secret, sizeof(secret));
}

net::Addr rendezvousAddress(const gdrUniqueId& id) {
  IdBlob blob;
  std::memcpy(&blob, id.internal, sizeof(blob));
  net::Addr a = net::unpack(blob.root);
  security::wipe(&blob, sizeof(blob));
  return a;
}

}  // namespace gdr::boot
