// Authentication: the handshake proves both ends hold the job's secret, binds
// job, channel and both ranks, and cannot be replayed; a rogue client at a
// listening rank (wrong key, replayed transcript, wrong rank, random bytes,
// a slow one) is refused and the job's collectives still succeed.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/net.h"
#include "security/handshake.h"
#include "support/multiproc.h"

namespace {

using namespace gdr;
using namespace gdr::security;

struct Pair {
  int fd[2] = {-1, -1};
  Pair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0); }
  ~Pair() {
    for (int f : fd)
      if (f >= 0) close(f);
  }
};

auto deadline() { return net::Clock::now() + std::chrono::seconds(5); }
const Acceptor::Admit kAnyone = [](int) -> const char* { return nullptr; };

std::vector<uint8_t> take(int fd, size_t n) {
  std::vector<uint8_t> v(n);
  net::recvAll(fd, v.data(), n, deadline(), "test");
  return v;
}
void put(int fd, const std::vector<uint8_t>& v) { net::sendAll(fd, v.data(), v.size(), deadline(), "test"); }

TEST(SecurityAuth, SameKeyAuthenticatesBothWaysAndAgreesOnDirectionalKeys) {
  JobSecret s = generateJobSecret();
  Pair p;
  Initiator ini(s, Channel::Socket, 1, 4, true);
  Acceptor acc(s, Channel::Socket, 4, true);
  ini.start(p.fd[0], deadline(), "acceptor");
  EXPECT_EQ(acc.start(p.fd[1], kAnyone), 1);
  SessionKeys a = ini.finish(p.fd[0], deadline(), "acceptor");
  SessionKeys b = acc.finish(p.fd[1]);
  EXPECT_EQ(std::memcmp(a.send, b.recv, kKeyBytes), 0);
  EXPECT_EQ(std::memcmp(a.recv, b.send, kKeyBytes), 0);
  EXPECT_NE(std::memcmp(a.send, a.recv, kKeyBytes), 0);
}

TEST(SecurityAuth, WrongKeyIsRefusedByBothSides) {
  JobSecret s = generateJobSecret(), rogue = s;
  rogue.key[7] ^= 1;
  Pair p;
  Initiator ini(rogue, Channel::Socket, 0, 1, false);
  Acceptor acc(s, Channel::Socket, 1, false);
  ini.start(p.fd[0], deadline(), "acceptor");
  acc.start(p.fd[1], kAnyone);
  // The rogue cannot verify the acceptor's proof and learns nothing it can use.
  EXPECT_THROW(ini.finish(p.fd[0], deadline(), "acceptor"), RemoteError);
  // A rogue that sends a proof anyway (here: made with its own key) is refused.
  JobSecret other = generateJobSecret();
  Pair q;
  Initiator ini2(other, Channel::Socket, 0, 1, false);
  Acceptor acc2(s, Channel::Socket, 1, false);
  ini2.start(q.fd[0], deadline(), "acceptor");
  acc2.start(q.fd[1], kAnyone);
  auto reply = take(q.fd[0], sizeof(HsReply));
  HsReply r;
  ASSERT_EQ(parseHsReply(reply.data(), reply.size(), &r), nullptr);
  HsFinish f{kHsMagic, kProtocolVersion, kHsFinish, {}};
  std::memset(f.mac, 0xab, sizeof(f.mac));
  net::sendAll(q.fd[0], &f, sizeof(f), deadline(), "acceptor");
  try {
    acc2.finish(q.fd[1]);
    FAIL() << "a wrong proof was accepted";
  } catch (const AuthRefused& e) {
    EXPECT_NE(std::string(e.what()).find("failed authentication"), std::string::npos) << e.what();
  }
}

TEST(SecurityAuth, ReplayedTranscriptIsRefused) {
  JobSecret s = generateJobSecret();
  // Record a legitimate handshake through a relay (an eavesdropper's view).
  Pair toRelay, toAcc;
  Initiator ini(s, Channel::Socket, 0, 1, false);
  Acceptor acc(s, Channel::Socket, 1, false);
  ini.start(toRelay.fd[0], deadline(), "acceptor");
  auto m1 = take(toRelay.fd[1], sizeof(HsHello));
  put(toAcc.fd[0], m1);
  acc.start(toAcc.fd[1], kAnyone);
  auto m2 = take(toAcc.fd[0], sizeof(HsReply));
  put(toRelay.fd[1], m2);
  ini.finish(toRelay.fd[0], deadline(), "acceptor");
  auto m3 = take(toRelay.fd[1], sizeof(HsFinish));
  put(toAcc.fd[0], m3);
  acc.finish(toAcc.fd[1]);
  // Replay it to a fresh acceptor of the same job and rank: a new nonce B.
  Pair replay;
  Acceptor acc2(s, Channel::Socket, 1, false);
  put(replay.fd[0], m1);
  put(replay.fd[0], m3);
  EXPECT_EQ(acc2.start(replay.fd[1], kAnyone), 0);
  EXPECT_THROW(acc2.finish(replay.fd[1]), AuthRefused);
  // And the acceptor's old reply does not convince a fresh initiator.
  Pair back;
  Initiator ini2(s, Channel::Socket, 0, 1, false);
  ini2.start(back.fd[0], deadline(), "acceptor");
  put(back.fd[1], m2);
  EXPECT_THROW(ini2.finish(back.fd[0], deadline(), "acceptor"), RemoteError);
}

TEST(SecurityAuth, WrongRankChannelOrTamperedRankIsRefused) {
  JobSecret s = generateJobSecret();
  auto onlyRank2 = [](int r) -> const char* { return r == 2 ? nullptr : "not this rank's neighbour"; };
  {  // claims a rank the acceptor does not expect: refused before any proof is asked for
    Pair p;
    Initiator ini(s, Channel::BootRing, 5, 3, false);
    Acceptor acc(s, Channel::BootRing, 3, false);
    ini.start(p.fd[0], deadline(), "x");
    EXPECT_THROW(acc.start(p.fd[1], onlyRank2), AuthRefused);
  }
  {  // meant for another rank
    Pair p;
    Initiator ini(s, Channel::BootRing, 2, 7, false);
    Acceptor acc(s, Channel::BootRing, 3, false);
    ini.start(p.fd[0], deadline(), "x");
    EXPECT_THROW(acc.start(p.fd[1], onlyRank2), AuthRefused);
  }
  {  // a transcript of another channel
    Pair p;
    Initiator ini(s, Channel::Rendezvous, 2, 3, false);
    Acceptor acc(s, Channel::BootRing, 3, false);
    ini.start(p.fd[0], deadline(), "x");
    EXPECT_THROW(acc.start(p.fd[1], onlyRank2), AuthRefused);
  }
  {  // rank 6 of the job, its M1 rewritten in transit to claim rank 2: the proofs no longer match
    Pair a, b;
    Initiator ini(s, Channel::BootRing, 6, 3, false);
    Acceptor acc(s, Channel::BootRing, 3, false);
    ini.start(a.fd[0], deadline(), "x");
    auto m1 = take(a.fd[1], sizeof(HsHello));
    int32_t two = 2;
    std::memcpy(m1.data() + offsetof(HsHello, fromRank), &two, 4);
    put(b.fd[0], m1);
    EXPECT_EQ(acc.start(b.fd[1], onlyRank2), 2);
    put(a.fd[1], take(b.fd[0], sizeof(HsReply)));
    EXPECT_THROW(ini.finish(a.fd[0], deadline(), "x"), RemoteError);
  }
  {  // GDR_ENCRYPT differs: a clear error for the initiator, refused by the acceptor
    Pair p;
    Initiator ini(s, Channel::Socket, 0, 1, true);
    Acceptor acc(s, Channel::Socket, 1, false);
    ini.start(p.fd[0], deadline(), "x");
    EXPECT_THROW(acc.start(p.fd[1], kAnyone), AuthRefused);
  }
}

TEST(SecurityAuth, SlowPeerIsRefusedWithinTheAuthDeadline) {
  setenv("GDR_AUTH_TIMEOUT_MS", "300", 1);
  JobSecret s = generateJobSecret();
  Pair p;
  Acceptor acc(s, Channel::Socket, 1, false);
  uint8_t half[10] = {};
  put(p.fd[0], std::vector<uint8_t>(half, half + sizeof(half)));
  auto t0 = net::Clock::now();
  EXPECT_THROW(acc.start(p.fd[1], kAnyone), AuthRefused);
  EXPECT_LT(net::Clock::now() - t0, std::chrono::seconds(3));
  unsetenv("GDR_AUTH_TIMEOUT_MS");
}

// ---- a live job with rogues at its rendezvous service ----

struct IdBlobView {  // the unique id's layout (tcp_bootstrap.cc)
  uint64_t magic;
  uint16_t version, flags;
  uint32_t reserved;
  uint8_t jobId[kJobIdBytes];
  net::PackedAddr root;
  uint8_t key[kKeyBytes];
};

// Connects to the service and runs `attack`; returns true if the service
// closed the connection on us (refused) within the deadline.
template <typename Attack>
bool refused(const net::Addr& service, Attack attack) {
  int fd = net::connectTo(service, deadline(), "service");
  bool closed = false;
  try {
    attack(fd);
    char c;
    net::recvAll(fd, &c, 1, net::Clock::now() + std::chrono::seconds(4), "service");
  } catch (const RemoteError&) {
    closed = true;  // EOF: the service dropped us
  } catch (const TimeoutError&) {
  }
  close(fd);
  return closed;
}

TEST(SecurityAuth, RoguesAtTheRendezvousAreRefusedAndTheJobCarriesOn) {
  setenv("GDR_AUTH_TIMEOUT_MS", "1000", 1);
  const int n = 3;
  std::vector<pid_t> pids;
  std::vector<int> pipes;
  for (int r = 0; r < n; ++r) {  // fork before the service thread exists
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[1]);
      gdrUniqueId id;
      if (read(fds[0], &id, sizeof(id)) != static_cast<ssize_t>(sizeof(id))) _exit(89);
      setenv("GDR_TRANSPORT", "socket", 1);
      setenv("GDR_HOST_ID", r == 0 ? "host-a" : "host-b", 1);
      setenv("GDR_ENCRYPT", "1", 1);
      gdrComm_t comm = nullptr;
      if (gdrCommInitRank(&comm, n, id, r) != gdrSuccess) _exit(90);
      std::vector<double> in(1000), out(1000);
      for (size_t i = 0; i < in.size(); ++i) in[i] = r * 1000.0 + i;
      int bad = gdrAllReduce(in.data(), out.data(), in.size(), gdrFloat64, gdrSum, comm, nullptr) != gdrSuccess;
      for (size_t i = 0; i < out.size(); ++i) bad |= out[i] != 3000.0 + 3.0 * i;
      gdrCommDestroy(comm);
      _exit(bad ? 91 : 0);
    }
    close(fds[0]);
    pids.push_back(pid);
    pipes.push_back(fds[1]);
  }
  gdrUniqueId id;
  ASSERT_EQ(gdrGetUniqueId(&id), gdrSuccess);
  IdBlobView blob;
  std::memcpy(&blob, id.internal, sizeof(blob));
  net::Addr service = net::unpack(blob.root);
  JobSecret real{};
  std::memcpy(real.key, blob.key, kKeyBytes);
  std::memcpy(real.jobId, blob.jobId, kJobIdBytes);
  JobSecret wrong = real;
  wrong.key[0] ^= 0x80;

  EXPECT_TRUE(refused(service, [&](int fd) {  // random bytes
    std::vector<uint8_t> junk(200);
    std::mt19937 g(std::random_device{}());
    for (auto& b : junk) b = static_cast<uint8_t>(g());
    put(fd, junk);
  }));
  EXPECT_TRUE(refused(service, [&](int fd) {  // wrong key, claiming rank 0
    Initiator ini(wrong, Channel::Rendezvous, 0, kServiceRank, false);
    ini.start(fd, deadline(), "service");
    auto m2 = take(fd, sizeof(HsReply));
    HsReply r;
    ASSERT_EQ(parseHsReply(m2.data(), m2.size(), &r), nullptr);
    HsFinish f{kHsMagic, kProtocolVersion, kHsFinish, {}};
    HsHello m1{kHsMagic, kProtocolVersion, kHsHello, static_cast<uint16_t>(Channel::Rendezvous), 0, 0, kServiceRank, 0, {}};
    transcriptMac(wrong, false, m1, r.nonce, f.mac);
    net::sendAll(fd, &f, sizeof(f), deadline(), "service");
  }));
  // A real rank's handshake recorded and replayed later.
  std::vector<uint8_t> m1, m3;
  {
    int fd = net::connectTo(service, deadline(), "service");
    Initiator ini(real, Channel::Rendezvous, 1, kServiceRank, false);
    ini.start(fd, deadline(), "service");
    ini.finish(fd, deadline(), "service");
    close(fd);  // leaves before its hello: the service drops it
  }
  {
    Pair rec;
    Initiator ini(real, Channel::Rendezvous, 1, kServiceRank, false);
    ini.start(rec.fd[0], deadline(), "x");
    m1 = take(rec.fd[1], sizeof(HsHello));
    int fd = net::connectTo(service, deadline(), "service");
    put(fd, m1);
    put(rec.fd[1], take(fd, sizeof(HsReply)));
    ini.finish(rec.fd[0], deadline(), "x");
    m3 = take(rec.fd[1], sizeof(HsFinish));
    close(fd);
  }
  EXPECT_TRUE(refused(service, [&](int fd) {  // the replay
    put(fd, m1);
    take(fd, sizeof(HsReply));
    put(fd, m3);
  }));
  EXPECT_TRUE(refused(service, [&](int fd) {  // a slow client that stops after 8 bytes
    put(fd, std::vector<uint8_t>(m1.begin(), m1.begin() + 8));
  }));

  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(write(pipes[r], &id, sizeof(id)), static_cast<ssize_t>(sizeof(id)));
    close(pipes[r]);
  }
  for (int r = 0; r < n; ++r) {
    int status = 0;
    waitpid(pids[r], &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "rank " << r << " status " << status;
  }
  unsetenv("GDR_AUTH_TIMEOUT_MS");
}

}  // namespace
