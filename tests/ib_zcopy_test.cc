// The verbs endpoint's protocol over the software NIC (softnic.h): two
// endpoints of this process connected back to back, driven by hand. Eager
// chunks through the slots, zero-copy rendezvous (clear-to-send, announce,
// writes straight into the receive buffer, credits, completions out of
// order over several QPs), reductions through the slots, failed writes and
// mismatches.
#if GDR_HAVE_IB
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"
#include "transport/ib/ib_device.h"
#include "transport/ib/ib_endpoint.h"
#include "transport/ib/softnic.h"
#include "transport/ib/user_ranges.h"

namespace gdr::transport::ib {
namespace {

void sumInt32(void* dst, const void* a, const void* in, size_t n) {
  auto* d = static_cast<int32_t*>(dst);
  auto* x = static_cast<const int32_t*>(a);
  auto* y = static_cast<const int32_t*>(in);
  for (size_t i = 0; i < n; ++i) d[i] = x[i] + y[i];
}

std::vector<char> pattern(size_t n, int seed) {
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>((i * 131 + seed * 7 + (i >> 12)) & 0xff);
  return v;
}

OpSig sig(uint64_t count, uint64_t seq = 1) {
  OpSig s;
  s.kind = kP2PKind;
  s.count = count;
  s.seq = seq;
  return s;
}

// A send of `src` and the receive of it into `dst`, `count` and `seq` in
// their signature.
struct Msg {
  SendOp s;
  RecvOp r;
  Msg(const void* src, void* dst, size_t n, uint64_t count, uint64_t seq) {
    s.data = src;
    s.bytes = r.bytes = n;
    s.sig = r.sig = sig(count, seq);
    r.dst = dst;
  }
};

// A patterned source, a zeroed destination and the message between them.
struct Transfer {
  std::vector<char> src, dst;
  Msg m;
  Transfer(size_t n, int seed, uint64_t seq = 1)
      : src(pattern(n, seed)), dst(n, 0), m(src.data(), dst.data(), n, n, seq) {}
};

// Rank 0 (a) and rank 1 (b), one softnic device.
struct Pair {
  std::shared_ptr<IbDevice> dev;
  std::unique_ptr<IbEndpoint> a, b;

  explicit Pair(IbEndpointConfig c, size_t bZcopy = SIZE_MAX) {
    setenv("GDR_IB_PROVIDER", "softnic", 1);
    dev = IbDevice::open();
    unsetenv("GDR_IB_PROVIDER");
    IbEndpointConfig ca = c, cb = c;
    ca.myRank = 0;
    ca.peerRank = 1;
    cb.myRank = 1;
    cb.peerRank = 0;
    if (bZcopy != SIZE_MAX) cb.zcopyBytes = bZcopy;
    a = std::make_unique<IbEndpoint>(dev, ca);
    b = std::make_unique<IbEndpoint>(dev, cb);
    IbConnInfo ia = a->localInfo(), ib = b->localInfo();
    a->connect(ib, nullptr);
    b->connect(ia, nullptr);
  }
  // Posts the receive, then the send; runs both to completion.
  bool exchange(Msg& m) {
    b->postRecv(&m.r);
    a->postSend(&m.s);
    return run([&] { return m.s.complete && m.r.complete; });
  }
  // Progresses both until `done`, for 10 s at most.
  template <typename F>
  bool run(F done) {
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) return false;
      a->progress();
      b->progress();
    }
    return true;
  }
};

IbEndpointConfig zcfg(size_t zBytes = 256 * 1024, size_t zChunk = 64 * 1024, int nQps = 2) {
  IbEndpointConfig c;
  c.nQps = nQps;
  c.qpDepth = 256;
  c.nSlots = 8;
  c.chunkFixed = 64 * 1024;
  c.zcopyBytes = zBytes;
  c.zcopyChunk = zChunk;
  c.keepRegistrations = true;
  return c;
}

TEST(IbZcopy, SoftNicIsTheDeviceWhenAsked) {
  Pair p(zcfg());
  EXPECT_EQ(p.dev->name(), "softnic0");
  EXPECT_EQ(p.a->zcopyBytes(), 256u * 1024);
}

TEST(IbZcopy, LargeMessageIsWrittenStraightIntoTheReceiveBuffer) {
  Pair p(zcfg());
  const size_t n = 3 * 1024 * 1024 + 4096 + 17;  // not a multiple of the chunk
  Transfer t(n, 1);
  ASSERT_TRUE(p.exchange(t.m));
  EXPECT_EQ(t.dst, t.src);
  IbStats sa = p.a->stats(), sb = p.b->stats();
  EXPECT_EQ(sb.cpuCopyBytes, 0u);
  EXPECT_EQ(sa.zcopySent, 1u);
  EXPECT_EQ(sb.zcopyReceived, 1u);
  EXPECT_EQ(sb.ctsWrites, 1u);
  EXPECT_EQ(sa.zcopyWrites, (n + 65535) / 65536);
  EXPECT_EQ(sa.chunksSent, 1u);  // the announce only
  EXPECT_EQ(sb.recvReg.misses, 1u);
}

TEST(IbZcopy, SmallMessageStaysEagerAndIsCopiedOnce) {
  Pair p(zcfg());
  const size_t n = 100000;
  Transfer t(n, 2);
  auto &src = t.src, &dst = t.dst;
  SendOp& s = t.m.s;
  RecvOp& r = t.m.r;
  p.a->postSend(&s);  // before the receive: an eager send needs none
  ASSERT_TRUE(p.run([&] { return s.complete; }));
  p.b->postRecv(&r);
  ASSERT_TRUE(p.run([&] { return r.complete; }));
  EXPECT_EQ(dst, src);
  EXPECT_EQ(p.b->stats().cpuCopyBytes, n);
  EXPECT_EQ(p.b->stats().zcopyReceived, 0u);
  EXPECT_EQ(p.b->stats().ctsWrites, 0u);
}

// Many messages both sides of the threshold, more rendezvous ones than the
// mailbox has slots, posted at once in either order: all arrive, in order.
void mixedSequence(bool recvsFirst, int nQps) {
  Pair p(zcfg(256 * 1024, 64 * 1024, nQps));
  const std::vector<size_t> sizes = {0,          1,      256 * 1024, 256 * 1024 - 1, 5000,
                                     700 * 1024, 4096,   1 << 20,    300000,         12,
                                     256 * 1024, 999999, 3,          2 << 20,        65536};
  std::vector<std::vector<char>> src, dst;
  std::vector<SendOp> s(sizes.size() * 2);
  std::vector<RecvOp> r(sizes.size() * 2);
  for (size_t i = 0; i < s.size(); ++i) {
    size_t n = sizes[i % sizes.size()];
    src.push_back(pattern(n, static_cast<int>(i)));
    dst.emplace_back(n, 0);
  }
  for (size_t i = 0; i < s.size(); ++i) {
    size_t n = src[i].size();
    s[i].data = src[i].data();
    s[i].bytes = n;
    s[i].sig = sig(n, i);
    r[i].dst = dst[i].data();
    r[i].bytes = n;
    r[i].sig = sig(n, i);
  }
  for (size_t i = 0; i < s.size(); ++i) {
    if (recvsFirst) p.b->postRecv(&r[i]);
    p.a->postSend(&s[i]);
    if (!recvsFirst) p.b->postRecv(&r[i]);
  }
  ASSERT_TRUE(p.run([&] { return s.back().complete && r.back().complete; }));
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_TRUE(s[i].complete && r[i].complete) << i;
    EXPECT_EQ(dst[i], src[i]) << "message " << i << " of " << src[i].size() << " bytes";
  }
  size_t eager = 0, large = 0;
  for (size_t i = 0; i < s.size(); ++i)
    (src[i].size() >= 256 * 1024 ? large : eager) +=
        src[i].size() >= 256 * 1024 ? 1 : src[i].size();
  EXPECT_EQ(p.b->stats().cpuCopyBytes, eager);
  EXPECT_EQ(p.b->stats().zcopyReceived, large);
  EXPECT_GT(large, kCtsSlots);
}

TEST(IbZcopy, MixedSizesReceivesFirst) { mixedSequence(true, 2); }
TEST(IbZcopy, MixedSizesSendsFirst) { mixedSequence(false, 4); }

TEST(IbZcopy, BothDirectionsAtOnce) {
  Pair p(zcfg());
  const size_t n = 1 << 20;
  auto x = pattern(n, 3), y = pattern(n, 4);
  std::vector<char> gotX(n), gotY(n);
  SendOp sa, sb;
  RecvOp ra, rb;
  sa.data = x.data();
  sb.data = y.data();
  sa.bytes = sb.bytes = ra.bytes = rb.bytes = n;
  sa.sig = sb.sig = ra.sig = rb.sig = sig(n);
  rb.dst = gotX.data();
  ra.dst = gotY.data();
  p.a->postSend(&sa);
  p.a->postRecv(&ra);
  p.b->postSend(&sb);
  p.b->postRecv(&rb);
  ASSERT_TRUE(p.run([&] { return sa.complete && sb.complete && ra.complete && rb.complete; }));
  EXPECT_EQ(gotX, x);
  EXPECT_EQ(gotY, y);
  EXPECT_EQ(p.a->stats().cpuCopyBytes + p.b->stats().cpuCopyBytes, 0u);
}

// A reduction's clear-to-send sends the payload through the slots, where the
// reduction reads it once: nothing is copied and nothing written direct.
TEST(IbZcopy, ReductionGoesThroughTheSlots) {
  Pair p(zcfg());
  const size_t n = 300000;  // int32 elements: 1.2 MB
  std::vector<int32_t> in(n), mine(n), out(n, 0);
  std::iota(in.begin(), in.end(), 5);
  std::iota(mine.begin(), mine.end(), -3);
  SendOp s;
  s.data = in.data();
  s.bytes = n * 4;
  s.sig = sig(n);
  RecvOp r;
  r.dst = out.data();
  r.bytes = n * 4;
  r.sig = sig(n);
  r.fn = &sumInt32;
  r.reduceSrc = mine.data();
  r.elemBytes = 4;
  p.b->postRecv(&r);
  p.a->postSend(&s);
  ASSERT_TRUE(p.run([&] { return s.complete && r.complete; }));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], in[i] + mine[i]) << i;
  EXPECT_EQ(p.b->stats().cpuCopyBytes, 0u);
  EXPECT_EQ(p.b->stats().zcopyReceived, 1u);
  EXPECT_EQ(p.a->stats().zcopyWrites, 0u);
  EXPECT_EQ(p.b->stats().recvReg.misses, 0u);
}

// The receiver does not progress: the sender stops at kZWindow chunks beyond
// the receiver's count of landed ones.
TEST(IbZcopy, WritesAreCreditLimited) {
  Pair p(zcfg(256 * 1024, 4096));
  const size_t n = 1 << 20;  // 256 chunks of 4 KiB
  Transfer t(n, 5);
  auto &src = t.src, &dst = t.dst;
  SendOp& s = t.m.s;
  RecvOp& r = t.m.r;
  p.b->postRecv(&r);
  p.b->progress();  // the clear-to-send goes out
  p.a->postSend(&s);
  for (int i = 0; i < 1000; ++i) p.a->progress();
  EXPECT_EQ(p.a->stats().zcopyWrites, kZWindow);
  EXPECT_FALSE(s.complete);
  ASSERT_TRUE(p.run([&] { return s.complete && r.complete; }));
  EXPECT_EQ(dst, src);
  EXPECT_EQ(p.a->stats().zcopyWrites, n / 4096);
}

// Consecutive rendezvous messages pipeline: the receiver hands out a
// clear-to-send for every posted receive (kCtsSlots ahead) before any of
// them completes, and the sender writes the next messages while the first
// is still in flight, so a window of messages pays the clear-to-send's round
// trip once, not once per message. Per message: one announce, one
// clear-to-send, its chunks' writes.
TEST(IbZcopy, PostedReceivesPipelineTheirClearToSends) {
  Pair p(zcfg(256 * 1024, 64 * 1024));
  const size_t n = 256 * 1024, msgs = kCtsSlots + 4;  // 4 chunks each
  std::vector<std::unique_ptr<Transfer>> t;
  for (size_t i = 0; i < msgs; ++i) t.push_back(std::make_unique<Transfer>(n, 20 + i, i));
  for (auto& x : t) p.b->postRecv(&x->m.r);
  p.b->progress();
  EXPECT_EQ(p.b->stats().ctsWrites, kCtsSlots);  // every mailbox slot, no receive done yet
  for (auto& x : t) p.a->postSend(&x->m.s);
  for (int i = 0; i < 1000; ++i) p.a->progress();  // the receiver does not progress
  // Past the first message's 4 chunks, up to the landed-chunk window.
  EXPECT_EQ(p.a->stats().zcopyWrites, kZWindow);
  EXPECT_FALSE(t[0]->m.r.complete);
  ASSERT_TRUE(p.run([&] { return t.back()->m.s.complete && t.back()->m.r.complete; }));
  for (size_t i = 0; i < msgs; ++i) {
    EXPECT_TRUE(t[i]->m.s.complete && t[i]->m.r.complete) << i;
    EXPECT_EQ(t[i]->dst, t[i]->src) << i;
  }
  EXPECT_EQ(p.b->stats().ctsWrites, msgs);
  EXPECT_EQ(p.a->stats().chunksSent, msgs);  // the announces
  EXPECT_EQ(p.a->stats().zcopyWrites, msgs * 4);
  EXPECT_EQ(p.b->stats().cpuCopyBytes, 0u);
}

// One QP of the sender held: the chunks on the others land first (their
// completions arrive out of order); the receive completes only when the held
// ones are released, and the data is whole.
TEST(IbZcopy, OutOfOrderCompletionsOverSeveralQps) {
  Pair p(zcfg(256 * 1024, 16384, 4));
  const size_t n = 2 << 20;
  Transfer t(n, 6);
  auto &src = t.src, &dst = t.dst;
  SendOp& s = t.m.s;
  RecvOp& r = t.m.r;
  const uint32_t held = p.a->localInfo().qpn[2];
  softnic::holdQp(held, true);
  p.b->postRecv(&r);
  p.a->postSend(&s);
  for (int i = 0; i < 20000 && !r.complete; ++i) {
    p.a->progress();
    p.b->progress();
  }
  EXPECT_FALSE(r.complete);
  const uint64_t landedWhileHeld = p.b->stats().zcopyReceived;
  softnic::holdQp(held, false);
  ASSERT_TRUE(p.run([&] { return s.complete && r.complete; }));
  EXPECT_EQ(landedWhileHeld, 0u);
  EXPECT_EQ(dst, src);
  for (uint64_t c : p.a->stats().chunksPerQp) EXPECT_GT(c, 0u);
}

// A receive completes exactly when its last chunk landed: with each QP held
// in turn, the receive completes while held only if that QP carried none of
// the message's writes (announce included).
TEST(IbZcopy, ReceiveWaitsForEveryChunk) {
  const size_t n = 1 << 20;
  auto src = pattern(n, 11);
  int completedEarly = 0;
  for (int q = 0; q < 4; ++q) {
    Pair p(zcfg(256 * 1024, n / 2, 4));
    std::vector<char> dst(n, 0);
    Msg m(src.data(), dst.data(), n, n, 1);
    SendOp& s = m.s;
    RecvOp& r = m.r;
    const uint32_t held = p.a->localInfo().qpn[q];
    softnic::holdQp(held, true);
    p.b->postRecv(&r);
    p.a->postSend(&s);
    for (int i = 0; i < 2000 && !r.complete; ++i) {
      p.a->progress();
      p.b->progress();
    }
    const uint64_t onHeld = p.a->stats().chunksPerQp[q];
    if (r.complete) {
      ++completedEarly;
      EXPECT_EQ(onHeld, 0u) << "QP " << q << " held, yet the receive completed";
      EXPECT_EQ(dst, src);
    }
    softnic::holdQp(held, false);
    ASSERT_TRUE(p.run([&] { return s.complete && r.complete; }));
    EXPECT_EQ(dst, src);
  }
  EXPECT_LT(completedEarly, 4);
}

TEST(IbZcopy, FailedWriteIsAnErrorNamingThePeer) {
  Pair p(zcfg());
  const size_t n = 1 << 20;
  Transfer t(n, 7);
  SendOp& s = t.m.s;
  RecvOp& r = t.m.r;
  p.b->postRecv(&r);
  p.b->progress();        // write 1: the clear-to-send
  softnic::failWrite(2);  // the announce goes, the first zero-copy chunk fails
  p.a->postSend(&s);
  std::string what;
  try {
    for (int i = 0; i < 1000; ++i) p.a->progress();
  } catch (const RemoteError& e) {
    what = e.what();
  }
  softnic::failWrite(0);
  EXPECT_NE(what.find("rank 1"), std::string::npos) << what;
  EXPECT_NE(what.find("zero-copy"), std::string::npos) << what;
  EXPECT_NE(what.find("softnic0"), std::string::npos) << what;
}

TEST(IbZcopy, BrokenKeyIsARemoteAccessError) {
  Pair p(zcfg());
  const size_t n = 1 << 20;
  Transfer t(n, 8);
  SendOp& s = t.m.s;
  RecvOp& r = t.m.r;
  p.a->breakRemoteKeyForTest();
  p.b->postRecv(&r);
  p.a->postSend(&s);
  std::string what;
  try {
    p.run([&] { return s.complete; });
  } catch (const RemoteError& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("remote access error"), std::string::npos) << what;
  EXPECT_EQ(t.dst, std::vector<char>(n, 0));
}

// The InvalidUsage text one side reports (the other side's errors ignored).
std::string usageError(Pair& p, SendOp& s, RecvOp& r, bool receiver) {
  IbEndpoint* watch = receiver ? p.b.get() : p.a.get();
  IbEndpoint* other = receiver ? p.a.get() : p.b.get();
  p.b->postRecv(&r);
  p.a->postSend(&s);
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < end) {
    try {
      other->progress();
    } catch (const Error&) {
    }
    try {
      watch->progress();
    } catch (const InvalidUsage& e) {
      return e.what();
    }
  }
  return "";
}

TEST(IbZcopy, SizeMismatchesAreReportedOnBothSides) {
  const size_t n = 1 << 20;
  std::vector<char> src(n), dst(2 * n);
  for (bool receiver : {false, true}) {
    Pair p(zcfg());
    SendOp s;
    s.data = src.data();
    s.bytes = n;
    s.sig = sig(7);
    RecvOp r;
    r.dst = dst.data();
    r.bytes = 2 * n;
    r.sig = sig(7);
    std::string what = usageError(p, s, r, receiver);
    EXPECT_NE(what.find("mismatched message size"), std::string::npos) << receiver << ": " << what;
  }
  // Large against small: the receiver of the small one sees the announce.
  Pair p(zcfg());
  SendOp s;
  s.data = src.data();
  s.bytes = n;
  s.sig = sig(7);
  RecvOp r;
  r.dst = dst.data();
  r.bytes = 4096;
  r.sig = sig(7);
  std::string what = usageError(p, s, r, true);
  EXPECT_NE(what.find("mismatched message size: rank 0 sent 1048576"), std::string::npos) << what;
}

TEST(IbZcopy, ThresholdsMustAgree) {
  EXPECT_THROW(Pair(zcfg(256 * 1024), 512 * 1024), InvalidUsage);
}

// Registration of receive buffers: per operation, unless the program vouches
// for the buffer (a UserRanges entry, as gdrCommRegister makes).
TEST(IbZcopy, ReceiveRegistrationIsCachedForUserRanges) {
  Pair p(zcfg());
  const size_t n = 1 << 20;
  auto src = pattern(n, 9);
  std::vector<char> dst(n, 0);
  auto once = [&](uint64_t seq) {
    Msg m(src.data(), dst.data(), n, n, seq);
    ASSERT_TRUE(p.exchange(m));
  };
  once(1);
  once(2);
  EXPECT_EQ(p.b->stats().recvReg.misses, 2u);
  const uint64_t id = UserRanges::instance().add(dst.data(), n);
  once(3);
  once(4);
  once(5);
  EXPECT_EQ(p.b->stats().recvReg.misses, 3u);
  EXPECT_EQ(p.b->stats().recvReg.hits, 2u);
  UserRanges::instance().remove(id);
  once(6);
  EXPECT_EQ(p.b->stats().recvReg.misses, 4u);
  EXPECT_EQ(dst, src);
}

TEST(IbZcopy, ZeroThresholdMeansEagerOnly) {
  Pair p(zcfg(0));
  const size_t n = 2 << 20;
  Transfer t(n, 10);
  ASSERT_TRUE(p.exchange(t.m));
  EXPECT_EQ(t.dst, t.src);
  EXPECT_EQ(p.b->stats().cpuCopyBytes, n);
  EXPECT_EQ(p.b->stats().ctsWrites, 0u);
}

}  // namespace
}  // namespace gdr::transport::ib
#endif
