// Rendezvous failover (transport/ib/ib_zfailover.cc) on one verbs
// connection over the software NIC's two devices, with a side connection (a
// socket pair) between the ends: zero-copy writes in flight on a device
// whose port goes down are written again on the other, exactly those that
// did not land; a write whose ACK was lost is not written again; a
// clear-to-send whose write failed comes over the side connection. Every
// message is compared byte for byte. And the frames and the clear-to-send
// bookkeeping on their own.
#if GDR_HAVE_IB
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <cstring>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "transport/ib/ib_device.h"
#include "transport/ib/ib_endpoint.h"
#include "transport/ib/softnic.h"
#include "support/ib_two_devices.h"
#include "transport/ib/zcopy_notice.h"
#include "security/crypto.h"
#include "transport/socket/socket_endpoint.h"

namespace gdr::transport::ib {
namespace {

using testing::Msg;

IbEndpointConfig cfg() {
  IbEndpointConfig c;
  c.nQps = 4;
  c.qpDepth = 256;
  c.nSlots = 8;
  c.chunkFixed = 64 * 1024;
  c.zcopyBytes = 64 * 1024;
  c.zcopyChunk = 64 * 1024;  // a 300000-byte message is 5 zero-copy writes
  return c;
}

// Rank 0 (a) sends to rank 1 (b), both of this process over softnic0 and
// softnic1 (QPs 0 and 2 on softnic0, 1 and 3 on softnic1; QP 0 carries the
// clear-to-sends), with a socket pair as their side connection.
struct Pair {
  std::vector<std::shared_ptr<IbDevice>> devs;
  std::unique_ptr<IbEndpoint> a, b;
  IbConnInfo ia{}, ib{};

  // encrypted: GDR_ENCRYPT's chunks (AES-GCM, opened in place), eager only.
  explicit Pair(bool withSide = true, bool encrypted = false) {
    devs = testing::openTwoSoftnics();
    IbEndpointConfig ca = cfg(), cb = cfg();
    ca.myRank = cb.peerRank = 0;
    ca.peerRank = cb.myRank = 1;
    security::SessionKeys ka{}, kb{};
    if (encrypted) {
      ca.zcopyBytes = cb.zcopyBytes = 0;
      security::randomBytes(ka.send, sizeof(ka.send));
      security::randomBytes(ka.recv, sizeof(ka.recv));
      std::memcpy(kb.send, ka.recv, sizeof(kb.send));
      std::memcpy(kb.recv, ka.send, sizeof(kb.recv));
    }
    a = std::make_unique<IbEndpoint>(devs, ca, encrypted ? &ka : nullptr);
    b = std::make_unique<IbEndpoint>(devs, cb, encrypted ? &kb : nullptr);
    ia = a->localInfo();
    ib = b->localInfo();
    if (!withSide) {
      a->connect(ib, nullptr);
      b->connect(ia, nullptr);
      return;
    }
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    a->connect(ib, std::make_unique<sock::SocketEndpoint>(fds[0], 0, 1));
    b->connect(ia, std::make_unique<sock::SocketEndpoint>(fds[1], 1, 0));
  }
  // Both ends move, and read their side connections as a stalled wait does.
  void step() {
    a->progress();
    b->progress();
    a->checkPeer();
    b->checkPeer();
  }
  void start(std::vector<std::unique_ptr<Msg>>& ms, int n) {
    for (auto& m : ms) b->postRecv(&m->r);
    for (auto& m : ms) a->postSend(&m->s);
    for (int i = 0; i < n; ++i) step();
  }
  bool finish(std::vector<std::unique_ptr<Msg>>& ms) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
      bool all = true;
      for (auto& m : ms) all = all && m->s.complete && m->r.complete;
      if (all) return true;
      if (std::chrono::steady_clock::now() > end) return false;
      step();
    }
  }
};

std::vector<std::unique_ptr<Msg>> messages(int n) {
  std::vector<std::unique_ptr<Msg>> ms;
  for (int i = 0; i < n; ++i) ms.push_back(std::make_unique<Msg>(300000, i + 1));
  return ms;
}

// Port `port` of device `dev` goes down while `held` (a QP number) holds
// its writes, so they are in flight then; the port comes back for later
// tests of this process whatever happens.
bool downWhileHeld(Pair& t, std::vector<std::unique_ptr<Msg>>& ms, uint32_t held, uint8_t port,
                   int dev) {
  softnic::holdQp(held, true);
  t.start(ms, 300);
  softnic::portDown(port, dev);
  softnic::holdQp(held, false);
  bool done = false;
  try {
    done = t.finish(ms);
  } catch (...) {
    softnic::portUp(port, dev);
    throw;
  }
  softnic::portUp(port, dev);
  return done;
}

TEST(IbZeroCopyFailover, WritesInFlightOnADeviceThatGoesDownAreWrittenAgain) {
  Pair t;
  auto ms = messages(4);
  ASSERT_TRUE(downWhileHeld(t, ms, t.ia.qpn[1], 1, 1));  // a's QP 1: softnic1
  for (auto& m : ms) EXPECT_EQ(m->dst, m->src);
  const IbStats sa = t.a->stats(), sb = t.b->stats();
  EXPECT_EQ(sa.zcopySent, 4u);
  EXPECT_EQ(sb.zcopyReceived, 4u);
  EXPECT_GE(sa.zcopyQueries, 1);
  EXPECT_EQ(sb.zcopyAnswers, sa.zcopyQueries);
  // Held, they never landed: each one is written again, none found landed.
  EXPECT_GT(sa.zcopyResent, 0u);
  EXPECT_EQ(sa.zcopyLandedAnyway, 0u);
  EXPECT_EQ(sb.zcopyDuplicates, 0u);
}

// The k-th write of the process lands but its completion fails: whichever
// write that is (an announce, a clear-to-send, a zero-copy chunk, a
// credit), every message arrives intact and nothing lands twice in a
// completed receive. Over the sweep, a zero-copy chunk and a clear-to-send
// are each hit at least once.
// Three messages with the k-th write's ACK lost; false when they did not
// all arrive intact.
bool lostAckRun(Pair& t, uint64_t k) {
  auto ms = messages(3);
  softnic::loseAck(k);
  bool done = false;
  EXPECT_NO_THROW({
    t.start(ms, 0);
    done = t.finish(ms);
  }) << "write " << k;
  softnic::loseAck(0);
  for (auto& m : ms) done = done && m->dst == m->src;
  return done;
}

TEST(IbZeroCopyFailover, AWriteWhoseAckWasLostIsSettledWithoutASecondCopy) {
  uint64_t landedAnyway = 0, ctsResent = 0, copiesIgnored = 0;
  for (uint64_t k = 1; k <= 20; ++k) {  // a clean run makes some 23 writes
    Pair t;
    ASSERT_TRUE(lostAckRun(t, k)) << "write " << k;
    const IbStats sa = t.a->stats(), sb = t.b->stats();
    EXPECT_EQ(sa.qpsDown + sb.qpsDown > 0, true) << "write " << k;
    landedAnyway += sa.zcopyLandedAnyway;
    ctsResent += sb.ctsResent;
    copiesIgnored += sa.zcopyDuplicates + sb.zcopyDuplicates;
  }
  EXPECT_GT(landedAnyway, 0u);
  EXPECT_GT(ctsResent, 0u);
  EXPECT_GT(copiesIgnored, 0u);  // the clear-to-sends' first writes had landed
}

// b's clear-to-sends wait on its held QP 0 when softnic0's port goes down:
// they fail there, come to a over the side connection, and the zero-copy
// writes follow on softnic1.
TEST(IbZeroCopyFailover, AClearToSendOfAFailedQpComesOverTheSideConnection) {
  Pair t;
  auto ms = messages(3);
  ASSERT_TRUE(downWhileHeld(t, ms, t.ib.qpn[0], 1, 0));
  for (auto& m : ms) EXPECT_EQ(m->dst, m->src);
  const IbStats sa = t.a->stats(), sb = t.b->stats();
  EXPECT_GT(sb.ctsResent, 0u);
  EXPECT_EQ(sa.zcopySent, 3u);
  EXPECT_EQ(sb.zcopyReceived, 3u);
}

// Without a side connection a zero-copy write in flight cannot be settled:
// the connection fails, naming it.
TEST(IbZeroCopyFailover, WithoutASideConnectionAZeroCopyWriteInFlightFails) {
  Pair t(false);
  auto ms = messages(3);
  softnic::holdQp(t.ia.qpn[1], true);
  for (auto& m : ms) t.b->postRecv(&m->r);
  for (auto& m : ms) t.a->postSend(&m->s);
  for (int i = 0; i < 300; ++i) {
    t.a->progress();
    t.b->progress();
  }
  softnic::portDown(1, 1);
  softnic::holdQp(t.ia.qpn[1], false);
  std::string err;
  for (int i = 0; i < 100000 && err.empty(); ++i) try {
      t.a->progress();
      t.b->progress();
    } catch (const Error& e) {
      err = e.what();
    }
  softnic::portUp(1, 1);
  EXPECT_NE(err.find("zero-copy write in flight"), std::string::npos) << err;
}

// GDR_ENCRYPT: eager chunks held on a device that goes down are asked
// about (a copy must not land over a chunk being opened in its slot), then
// written again from the sealing ring; each one arrives, opened once.
TEST(IbZeroCopyFailover, EncryptedChunksInFlightOnADeviceThatGoesDownAreWrittenAgain) {
  Pair t(true, true);
  ASSERT_TRUE(t.a->encrypted());
  auto ms = messages(6);
  ASSERT_TRUE(downWhileHeld(t, ms, t.ia.qpn[1], 1, 1));
  for (auto& m : ms) EXPECT_EQ(m->dst, m->src);
  const IbStats sa = t.a->stats();
  EXPECT_GE(sa.zcopyQueries, 1);
  EXPECT_GT(sa.chunksResent, 0u);
  EXPECT_EQ(sa.zcopyLandedAnyway, 0u);
}

// GDR_ENCRYPT with the k-th write's ACK lost: a chunk that landed is not
// written again (it is being opened in place); every message intact.
TEST(IbZeroCopyFailover, EncryptedChunksWhoseAckWasLostAreNotWrittenAgain) {
  uint64_t landedAnyway = 0;
  for (uint64_t k = 1; k <= 16; ++k) {
    Pair t(true, true);
    ASSERT_TRUE(lostAckRun(t, k)) << "write " << k;
    landedAnyway += t.a->stats().zcopyLandedAnyway;
  }
  EXPECT_GT(landedAnyway, 0u);
}

TEST(ZcopyNotice, FramesRoundTripAndRejectOthers) {
  ZQuery q{3, {{7, 0}, {9, 12345}}};
  ZQuery q2;
  ASSERT_TRUE(decodeZQuery(encodeZQuery(q), 4, &q2));
  EXPECT_EQ(q2.qp, 3);
  EXPECT_EQ(q2.chunks, q.chunks);
  EXPECT_FALSE(decodeZQuery(encodeZQuery(q), 3, &q2));  // QP out of range
  ZAnswer a{1, {{7, 0}, {8, 1}, {9, 12345}}, {1, 0, 1}}, a2;
  ASSERT_TRUE(decodeZAnswer(encodeZAnswer(a), 4, &a2));
  EXPECT_EQ(a2.chunks, a.chunks);
  EXPECT_EQ(a2.landed, a.landed);
  CtsCopy c{2, {}}, c2;
  c.cts.ticket = 41;
  c.cts.bytes = 1 << 20;
  c.cts.chunk = 65536;
  c.cts.direct = 1;
  ASSERT_TRUE(decodeCtsCopy(encodeCtsCopy(c), 4, &c2));
  EXPECT_EQ(c2.cts.ticket, 41u);
  EXPECT_EQ(c2.cts.chunk, 65536u);
  // Each decodes only itself; truncated or padded frames are refused.
  EXPECT_FALSE(decodeZAnswer(encodeZQuery(q), 4, &a2));
  EXPECT_FALSE(decodeCtsCopy(encodeZAnswer(a), 4, &c2));
  std::string cut = encodeZQuery(q);
  cut.pop_back();
  EXPECT_FALSE(decodeZQuery(cut, 4, &q2));
  EXPECT_FALSE(decodeZAnswer(encodeZAnswer(a) + "x", 4, &a2));
  std::string bad = encodeZAnswer(a);
  bad.back() = 2;  // a landed flag is 0 or 1
  EXPECT_FALSE(decodeZAnswer(bad, 4, &a2));
}

TEST(ZcopyNotice, ClearToSendsOutOfOrderAndCopies) {
  CtsSeen s;
  EXPECT_EQ(s.mark(0), CtsSeen::kNew);
  EXPECT_EQ(s.mark(2), CtsSeen::kNew);  // 1 failed and comes later
  EXPECT_EQ(s.seen(), 1u);
  EXPECT_TRUE(s.has(2));
  EXPECT_FALSE(s.has(1));
  EXPECT_EQ(s.mark(2), CtsSeen::kAgain);
  EXPECT_EQ(s.mark(1), CtsSeen::kNew);
  EXPECT_EQ(s.seen(), 3u);
  EXPECT_EQ(s.mark(1), CtsSeen::kAgain);  // its first write landed after all
  EXPECT_EQ(s.mark(3 + kCtsSlots), CtsSeen::kOutside);
  // An immediate's 30 bits: ahead within the window, or a copy of an old one.
  EXPECT_EQ(s.widen(4, 30), 4u);
  EXPECT_EQ(s.widen(1, 30), 1u);
}

}  // namespace
}  // namespace gdr::transport::ib
#endif
