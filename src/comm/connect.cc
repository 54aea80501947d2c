// Communicator set-up: every rank publishes who and where it is, then builds
// one endpoint per peer: shared memory to ranks of its own host, TCP to the
// others (or to everyone under GDR_TRANSPORT=socket), and verbs where the
// verbs back end claims a peer. Each back end makes its own resources and
// endpoints; this file decides which peers each is offered and runs the
// exchanges between them.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>

#include "bootstrap/accept_pool.h"
#include "comm/comm.h"
#include "comm/host_id.h"
#include "core/error.h"
#include "core/log.h"
#include "core/net.h"
#include "core/params.h"
#include "security/channel_keys.h"
#include "security/handshake.h"
#include "transport/shm/shm_backend.h"
#include "transport/socket/socket_endpoint.h"
#if GDR_HAVE_IB
#include "transport/ib/ib_connect.h"
#endif

namespace gdr {

namespace {

// A connection from a lower rank that passed its handshake: the rank and
// the session keys, wiped wherever a copy of them ends.
struct Accepted {
  int peer = -1;
  security::SessionKeys keys{};
  Accepted() = default;
  Accepted(const Accepted&) = default;
  Accepted& operator=(const Accepted&) = default;
  ~Accepted() { security::wipe(&keys, sizeof(keys)); }
};

}  // namespace

void Communicator::connect() {
  peers_.resize(size_);
  PeerInfo& me = peers_[rank_];
  std::memset(&me, 0, sizeof(me));
  std::string id = hostIdentity();
  std::snprintf(me.hostId, sizeof(me.hostId), "%s", id.c_str());
  me.pid = getpid();
  me.rank = rank_;
  std::snprintf(me.gpuBusId, sizeof(me.gpuBusId), "%s", localGpuBusId().c_str());
  std::random_device rd;
  me.jobNonce = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  boot_->allgather(peers_.data(), sizeof(PeerInfo));
  const uint64_t job = peers_[0].jobNonce;
  planPlacement();

  std::vector<int> local, remote;  // peers by transport, self excluded
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    bool near = sameHost(r) && cfg_.transport != "socket" && cfg_.transport != "ib";  // ib: see below
    if (cfg_.transport == "shm" && !sameHost(r))
      throw InvalidArgument(strprintf("GDR_TRANSPORT=shm but rank %d runs on another host", r));
    (near ? local : remote).push_back(r);
  }

  // Resources first, then one exchange of where to find them.
  std::vector<ConnInfo> conn(size_);
  std::memset(conn.data(), 0, conn.size() * sizeof(ConnInfo));
  int listenFd = -1;
  if (!remote.empty()) {
    net::Addr bound;
    listenFd = net::listenOn(net::localAddr(), &bound, 4096);
    conn[rank_].sockAddr = net::pack(bound);
  }
  if (!local.empty()) {
    std::vector<int> hostRanks = local;  // sorted ranks of this host, self included
    hostRanks.push_back(rank_);
    std::sort(hostRanks.begin(), hostRanks.end());
    conn[rank_].cmaProbeAddr =
        shm_.create(job, rank_, std::move(hostRanks), cfg_.shmSlots, cfg_.shmSlotBytes);
  }
  boot_->allgather(conn.data(), sizeof(ConnInfo));

  eps_.resize(size_);
  security::ChannelKeyTable ibKeys;  // GDR_ENCRYPT: keys for verbs, from each connection's (wiped on return)
  try {
    if (!local.empty()) {
      std::vector<transport::shm::ShmBackend::Peer> near;
      for (int r : local) near.push_back({r, peers_[r].pid, conn[r].cmaProbeAddr});
      shm_.claim(near, eps_);
    }
    // Socket transport: authenticated connections.
    // Each pair connects once, the lower rank initiating. Both sides prove
    // they hold the job secret (security/handshake.h) before anything else
    // is read; a connection that fails is refused and logged, and this rank
    // keeps waiting for its real peers. Connections from lower ranks are
    // accepted and authenticated on the pool's threads, each under its own
    // GDR_AUTH_TIMEOUT_MS, while this thread connects to the higher ones:
    // an idle or slow connection never delays another.
    if (!remote.empty()) {
      auto deadline = net::deadlineFromNow();
      const security::JobSecret& secret = boot_->jobSecret();
      const bool encrypt = param::getBool("GDR_ENCRYPT");
      size_t lower = std::count_if(remote.begin(), remote.end(), [&](int r) { return r < rank_; });
      auto admit = [&](int r) -> const char* {
        return r < rank_ && std::find(remote.begin(), remote.end(), r) != remote.end()
                   ? nullptr
                   : "not a rank that connects to this one";
      };
      std::optional<boot::AcceptPool<Accepted>> pool;
      if (lower)
        pool.emplace(
            listenFd,
            [&](int fd) {
              security::Acceptor acc(secret, security::Channel::Socket, rank_, encrypt);
              Accepted a;
              a.peer = acc.start(fd, admit);
              a.keys = acc.finish(fd);
              return a;
            },
            "connections from lower ranks");
      const int64_t sockBuf = param::getInt("GDR_SOCKET_BUFFER");
      if (sockBuf < 0 || sockBuf > (int64_t{1} << 30))
        throw InvalidArgument(strprintf(
            "GDR_SOCKET_BUFFER=%lld: give 0 (the kernel sizes the buffers) or 1 to 1073741824 bytes",
            static_cast<long long>(sockBuf)));
      const int bufBytes = static_cast<int>(sockBuf);
      for (int r : remote) {
        if (r < rank_) continue;
        std::string who = strprintf("rank %d", r);
        int fd = net::connectTo(net::unpack(conn[r].sockAddr), deadline, who);
        security::SessionKeys keys;
        try {
          security::Initiator ini(secret, security::Channel::Socket, rank_, r, encrypt);
          ini.start(fd, deadline, who);
          keys = ini.finish(fd, deadline, who);
        } catch (...) {
          close(fd);
          throw;
        }
        eps_[r] = std::make_unique<transport::sock::SocketEndpoint>(fd, rank_, r, encrypt ? &keys : nullptr, bufBytes);
        if (encrypt) ibKeys.derive(r, keys, security::kIbKeyLabel);
        security::wipe(&keys, sizeof(keys));
      }
      while (lower) {
        std::pair<int, Accepted> got = pool->next(deadline);
        const int fd = got.first, peer = got.second.peer;
        const security::SessionKeys& keys = got.second.keys;
        if (eps_[peer]) {
          GDR_WARN(kNet, "refused a connection from %s: rank %d is already connected",
                   net::peerName(fd).c_str(), peer);
          close(fd);
          continue;
        }
        eps_[peer] = std::make_unique<transport::sock::SocketEndpoint>(fd, rank_, peer, encrypt ? &keys : nullptr,
                                                                       bufBytes);
        if (encrypt) ibKeys.derive(peer, keys, security::kIbKeyLabel);
        --lower;
      }
    }
  } catch (...) {
    if (listenFd >= 0) close(listenFd);
    throw;
  }
  if (listenFd >= 0) close(listenFd);

    // The verbs back end claims the peers where both ends have a usable RDMA
    // device (auto: other hosts; ib: every peer, ranks of one host too, which
    // is how the Soft-RoCE VM tests run). Each of its endpoints keeps the TCP
    // one for abort notices and peer-death detection.
#if GDR_HAVE_IB
  if (!remote.empty() && (cfg_.transport == "auto" || cfg_.transport == "ib")) {
    transport::ib::IbBackend ib(
        rank_, size_, {cfg_.transport == "ib", plan_.nic, plan_.nic.empty() || plan_.nicUsesGdr});
    std::vector<transport::ib::IbConnInfo> row = ib.offer(remote, &ibKeys);
    std::vector<transport::ib::IbConnInfo> table(static_cast<size_t>(size_) * size_);
    std::copy(row.begin(), row.end(), table.begin() + static_cast<size_t>(rank_) * size_);
    boot_->allgather(table.data(), static_cast<size_t>(size_) * sizeof(transport::ib::IbConnInfo));
    ib.claim(table, eps_);
  }
#else
  if (cfg_.transport == "ib") throw NotSupported("GDR_TRANSPORT=ib but this build has no verbs support");
#endif

  // Everyone has mapped everyone's segment: the names can go, so nothing is
  // left in /dev/shm even if a rank is killed later.
  boot_->barrier();
  shm_.unlinkOwn();

  for (auto& ep : eps_)
    if (ep) active_.push_back(ep.get());
  bool allFds = !active_.empty();
  for (auto* ep : active_) allFds &= ep->pollFd() >= 0;
  if (allFds)
    for (auto* ep : active_) pollFds_.push_back({ep->pollFd(), POLLIN, 0});
  for (int r = 0; r < size_; ++r)
    if (r != rank_)
      GDR_INFO(kTopo, "rank %d -> rank %d: %s%s (%s)", rank_, r, transportTo(r),
               eps_[r] && (eps_[r]->capabilities() & transport::kCapSingleCopy) ? " (single-copy)" : "",
               cfg_.transport != "auto" ? "forced by GDR_TRANSPORT"
               : sameHost(r)           ? "same host"
                                       : "other host");
}

// Every rank must follow the same order. Ranks compute it from allgathered
// data, but each reads only its own machine's topology; if any rank came to
// a different answer, all of them fall back to rank order.
void Communicator::planPlacement() {
  std::vector<std::string> hosts(size_), gpus(size_);
  for (int r = 0; r < size_; ++r) {
    hosts[r] = std::string(peers_[r].hostId, strnlen(peers_[r].hostId, sizeof(PeerInfo::hostId)));
    gpus[r] = std::string(peers_[r].gpuBusId, strnlen(peers_[r].gpuBusId, sizeof(PeerInfo::gpuBusId)));
  }
  plan_ = planTopology(rank_, hosts, gpus);
  uint64_t h = 1469598103934665603ull;
  for (int r : plan_.order) h = (h ^ static_cast<uint64_t>(r)) * 1099511628211ull;
  std::vector<uint64_t> all(size_);
  all[rank_] = h;
  boot_->allgather(all.data(), sizeof(uint64_t));
  for (uint64_t x : all)
    if (x != h) {
      GDR_INFO(kTopo, "ranks disagree on the ring order (different machines); using rank order");
      plan_.order.resize(size_);
      for (int r = 0; r < size_; ++r) plan_.order[r] = r;
      plan_.identity = true;
      break;
    }
  plan_.position.assign(size_, 0);
  for (int i = 0; i < size_; ++i) plan_.position[plan_.order[i]] = i;
}

}  // namespace gdr
